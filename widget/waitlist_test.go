package widget_test

import (
	"fmt"
	"testing"

	"salon/booking/bookingtest"
)

// TestWaitlistThroughTheAPI: a client joins the waitlist for a master's
// full day, a booking of it is cancelled, the freed time is offered, the
// client reads and takes it (201, a booking); a second client's offer of
// the same time is then gone; leaving the list is a DELETE. Every answer
// is checked against the OpenAPI document.
func TestWaitlistThroughTheAPI(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := s.masters[0]
	var first reply
	for i, hhmm := range []string{"10:00", "11:00", "12:00"} {
		r := s.book(m, hhmm)
		if i == 1 {
			first = r
		}
	}
	join := func(name string) reply {
		t.Helper()
		r := s.do("POST", "/api/v1/salons/studio/waitlist", map[string]any{"service_id": s.svc.ID, "master_id": m.ID,
			"from_date": testDay.String(), "to_date": testDay.String(), "times": []any{map[string]any{"from": "10:00", "to": "13:00"}},
			"client": map[string]any{"name": name, "phone": bookingtest.Phone()}})
		if r.status != 201 || r.str("status") != "waiting" || r.str("manage_token") == "" {
			t.Fatalf("join: %d %s", r.status, r.raw)
		}
		return r
	}
	a, b := join("Vera"), join("Ivan")
	if r := s.do("POST", "/api/v1/salons/studio/waitlist", map[string]any{"service_id": s.svc.ID, "from_date": testDay.String(),
		"to_date": "2026-01-01", "client": map[string]any{"name": "X", "phone": bookingtest.Phone()}}); r.status != 422 || r.fields()["to_date"] == nil {
		t.Fatalf("a range ending before it starts: %d %s", r.status, r.raw)
	}
	if r := s.do("POST", fmt.Sprintf("/api/v1/bookings/%d/cancel", first.id()), map[string]any{}, "X-Manage-Token", first.str("manage_token")); r.status != 200 {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	if n, err := s.Svc.OfferFreed(bookingtest.System()); err != nil || n != 2 {
		t.Fatalf("offered %d (%v), want 2", n, err)
	}
	read := func(e reply) reply {
		t.Helper()
		r := s.do("GET", fmt.Sprintf("/api/v1/waitlist/%d", e.id()), nil, "X-Manage-Token", e.str("manage_token"))
		if r.status != 200 {
			t.Fatalf("read: %d %s", r.status, r.raw)
		}
		return r
	}
	offers := read(a).body["offers"].([]any)
	if len(offers) != 1 || offers[0].(map[string]any)["starts_at"] != s.at("11:00") || offers[0].(map[string]any)["status"] != "open" {
		t.Fatalf("offers %v, want 11:00 open", offers)
	}
	oid := int64(offers[0].(map[string]any)["id"].(float64))
	took := s.do("POST", fmt.Sprintf("/api/v1/waitlist/%d/offers/%d/accept", a.id(), oid), map[string]any{}, "X-Manage-Token", a.str("manage_token"))
	if took.status != 201 || took.str("starts_at") != s.at("11:00") || took.str("manage_token") == "" {
		t.Fatalf("accept: %d %s", took.status, took.raw)
	}
	if got := read(a); got.str("status") != "booked" {
		t.Fatalf("the entry is %s after taking its offer", got.str("status"))
	}
	if o := read(b).body["offers"].([]any); len(o) != 1 || o[0].(map[string]any)["status"] != "gone" {
		t.Fatalf("the other's offers %v, want gone", o)
	}
	if r := s.do("GET", fmt.Sprintf("/api/v1/waitlist/%d", a.id()), nil, "X-Manage-Token", b.str("manage_token")); r.status != 404 {
		t.Fatalf("another entry's token: %d", r.status)
	}
	if r := s.do("DELETE", fmt.Sprintf("/api/v1/waitlist/%d", b.id()), nil, "X-Manage-Token", b.str("manage_token")); r.status != 200 || r.str("status") != "left" {
		t.Fatalf("leave: %d %s", r.status, r.raw)
	}
	if n := countBookings(t, s, fmt.Sprintf("b.master_id = %d AND b.status = 'confirmed'", m.ID)); n != 3 {
		t.Fatalf("%d bookings of the master, want 3", n)
	}
}
