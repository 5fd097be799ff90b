package widget_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
)

// TestVisitsThroughTheAPI books, reads, moves and cancels a visit of two
// services (the second with any master and processing time), every answer
// checked against the OpenAPI document.
func TestVisitsThroughTheAPI(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	colour := s.Service(t, s.salon, booking.SalonService{Name: "Colour", DurationMin: 60, ProcessingMin: 30, FinishMin: 15, Price: 400000})
	if err := s.Svc.SetOffers(bookingtest.System(), s.salon.ID, s.masters[1].ID,
		[]booking.Offer{{ServiceID: s.svc.ID}, {ServiceID: colour.ID}}); err != nil {
		t.Fatal(err)
	}
	// The client is told the whole stay: an hour's work, half an hour's
	// wait while the colour takes, a quarter's finish (helper-49 M1: "45
	// min" for two hours).
	for _, v := range s.do("GET", "/api/v1/salons/studio/services", nil).list {
		if sv := v.(map[string]any); sv["name"] == "Colour" && (sv["duration_min"] != 60.0 || sv["stay_min"] != 105.0) {
			t.Errorf("the colour service: %v, want duration_min 60 and stay_min 105", sv)
		}
	}
	if ms := s.do("GET", fmt.Sprintf("/api/v1/salons/studio/masters?service_id=%d", colour.ID), nil).list; len(ms) != 1 ||
		ms[0].(map[string]any)["stay_min"] != 105.0 {
		t.Errorf("the colour's master: %v, want stay_min 105", ms)
	}
	if _, page, _ := s.page("GET", "/w/studio?lang=en"); !strings.Contains(page, "105 min") {
		t.Error("the widget's service list does not say the colour's 105 min")
	}
	items := fmt.Sprintf("%d:%d,%d", s.svc.ID, s.masters[0].ID, colour.ID)
	r := s.do("GET", fmt.Sprintf("/api/v1/salons/studio/slots?items=%s&date=%s", items, testDay), nil)
	if r.status != 200 || len(r.list) == 0 {
		t.Fatalf("visit slots: %d %s", r.status, r.raw)
	}
	first := r.list[0].(map[string]any)
	segs := first["items"].([]any)
	second := segs[1].(map[string]any)
	if first["starts_at"] != s.at("10:00") || first["ends_at"] != s.at("12:45") || second["starts_at"] != s.at("11:00") ||
		second["master_id"] != float64(s.masters[1].ID) {
		t.Fatalf("first visit slot %v: want 10:00-12:45, the colour at 11:00 by master 1", first)
	}
	if p := second["processing"].(map[string]any); p["starts_at"] != s.at("12:00") || p["ends_at"] != s.at("12:30") {
		t.Fatalf("the colour's processing %v, want 12:00-12:30", p)
	}

	body := map[string]any{"starts_at": s.at("10:00"), "client": map[string]any{"name": "Vera", "phone": bookingtest.Phone()},
		"items": []any{map[string]any{"service_id": s.svc.ID, "master_id": s.masters[0].ID}, map[string]any{"service_id": colour.ID}}}
	created := s.do("POST", "/api/v1/salons/studio/bookings", body)
	if created.status != 201 || created.str("ends_at") != s.at("12:45") || len(created.body["items"].([]any)) != 2 ||
		created.body["price"] != 6500.0 {
		t.Fatalf("visit: %d %s", created.status, created.raw)
	}
	id, token := created.id(), created.str("manage_token")
	path := fmt.Sprintf("/api/v1/bookings/%d", id)
	// The same time again: whole-visit alternatives.
	body["client"] = map[string]any{"name": "Ivan", "phone": bookingtest.Phone()}
	taken := s.do("POST", "/api/v1/salons/studio/bookings", body)
	if taken.status != 409 || taken.str("error") != "slot_taken" {
		t.Fatalf("the same visit again: %d %s", taken.status, taken.raw)
	}
	alts := taken.body["alternatives"].([]any)
	if len(alts) < 3 || len(alts[0].(map[string]any)["items"].([]any)) != 2 {
		t.Fatalf("alternatives %v: want whole visits", alts)
	}
	// Move it (keeping its masters), then cancel it: the whole visit.
	moved := s.do("POST", path+"/reschedule", map[string]any{"starts_at": s.at("14:00")}, "X-Manage-Token", token)
	if moved.status != 200 || moved.str("starts_at") != s.at("14:00") || moved.str("ends_at") != s.at("16:45") {
		t.Fatalf("move: %d %s", moved.status, moved.raw)
	}
	got := s.do("GET", path, nil, "X-Manage-Token", token)
	if it := got.body["items"].([]any); len(it) != 2 || it[1].(map[string]any)["starts_at"] != s.at("15:00") {
		t.Fatalf("read after the move: %s", got.raw)
	}
	// Moving it again, with its masters: its own time counts as free (14:30
	// overlaps it), and 14:00 with the same masters, where it is, is left out.
	kept := fmt.Sprintf("/api/v1/salons/studio/slots?items=%d:%d,%d:%d&date=%s", s.svc.ID, s.masters[0].ID, colour.ID, s.masters[1].ID, testDay)
	if starts := startsOf(s.do("GET", kept, nil)); slices.Contains(starts, s.at("14:30")) {
		t.Fatalf("14:30 free for a new visit, over the visit at 14:00: %v", starts)
	}
	if starts := startsOf(s.do("GET", kept+fmt.Sprintf("&moving=%d", id), nil, "X-Manage-Token", token)); !slices.Contains(starts, s.at("14:30")) ||
		slices.Contains(starts, s.at("14:00")) {
		t.Fatalf("moving the visit at 14:00 offers %v: want 14:30 and not 14:00", starts)
	}
	if r := s.do("POST", path+"/reschedule", map[string]any{"starts_at": s.at("14:30")}, "X-Manage-Token", token); r.status != 200 ||
		r.str("ends_at") != s.at("17:15") {
		t.Fatalf("the visit moved to 14:30, which was offered: %d %s", r.status, r.raw)
	}
	if r := s.do("POST", path+"/cancel", map[string]any{}, "X-Manage-Token", token); r.status != 200 || r.str("status") != "cancelled" {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	var active int
	if err := s.Pool.QueryRow(t.Context(), `SELECT count(*) FROM bookings WHERE visit_id = $1 AND status <> 'cancelled'`, id).Scan(&active); err != nil {
		t.Fatal(err)
	}
	if active != 0 {
		t.Fatalf("%d segments still active after cancelling the visit", active)
	}
	// Bad items name the field.
	for q, field := range map[string]string{"items=x": "items", "items=1,2,3,4,5,6": "items", "items=999999": "items[0].service_id"} {
		if r := s.do("GET", "/api/v1/salons/studio/slots?"+q, nil); r.status != 422 || r.fields()[field] == nil {
			t.Errorf("slots?%s: %d %s, want 422 naming %s", q, r.status, r.raw, field)
		}
	}
}
