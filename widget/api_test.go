package widget_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/widget"
)

func TestReadEndpoints(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	other := s.Service(t, s.salon, booking.SalonService{Name: "Colour", DurationMin: 120, Price: 600050, Deposit: 100000})

	r := s.do("GET", "/api/v1/salons/studio", nil)
	if r.status != 200 || r.str("slug") != "studio" || r.str("timezone") != "Europe/Moscow" || r.str("currency") != "RUB" || r.str("locale") != "ru" {
		t.Fatalf("salon: %d %s", r.status, r.raw)
	}
	if r := s.do("GET", "/api/v1/salons/nowhere", nil); r.status != 404 || r.str("error") != "not_found" {
		t.Fatalf("unknown salon: %d %s", r.status, r.raw)
	}

	r = s.do("GET", "/api/v1/salons/studio/services", nil)
	if r.status != 200 || len(r.list) != 2 {
		t.Fatalf("services: %d %s", r.status, r.raw)
	}
	if !strings.Contains(string(r.raw), `"price":6000.50,"deposit":1000`) || !strings.Contains(string(r.raw), `"duration_min":60,"stay_min":60,"price":2500,"deposit":0`) {
		t.Fatalf("services amounts: %s", r.raw)
	}

	r = s.do("GET", "/api/v1/salons/studio/masters", nil)
	if r.status != 200 || len(r.list) != 3 {
		t.Fatalf("masters: %d %s", r.status, r.raw)
	}
	if r := s.do("GET", fmt.Sprintf("/api/v1/salons/studio/masters?service_id=%d", other.ID), nil); r.status != 200 || len(r.list) != 0 {
		t.Fatalf("masters of a service nobody does: %d %s", r.status, r.raw)
	}
	// With service_id, each master has its price, duration and deposit.
	if r := s.do("GET", fmt.Sprintf("/api/v1/salons/studio/masters?service_id=%d", s.svc.ID), nil); r.status != 200 || len(r.list) == 0 ||
		!strings.Contains(string(r.raw), `"deposit":`) || strings.Count(string(r.raw), `"deposit":`) != len(r.list) {
		t.Fatalf("masters of a service: %d %s, want a deposit on each", r.status, r.raw)
	}
	if r := s.do("GET", "/api/v1/salons/studio/masters?service_id=abc", nil); r.status != 422 || r.fields()["service_id"] == nil {
		t.Fatalf("masters, bad service_id: %d %s", r.status, r.raw)
	}

	slots := fmt.Sprintf("/api/v1/salons/studio/slots?service_id=%d&date=%s", s.svc.ID, testDay)
	r = s.do("GET", slots, nil)
	// Any master: one slot per start, with the master the salon gives.
	if r.status != 200 || len(r.list) != 37 {
		t.Fatalf("slots: %d, %d slots", r.status, len(r.list))
	}
	first := r.list[0].(map[string]any)
	if first["starts_at"] != s.at("10:00") || first["ends_at"] != s.at("11:00") {
		t.Fatalf("first slot %v, want %s (RFC 3339 in the salon's offset)", first, s.at("10:00"))
	}
	if r := s.do("GET", slots+fmt.Sprintf("&master_id=%d&days=2", s.masters[0].ID), nil); r.status != 200 || len(r.list) != 2*37 {
		t.Fatalf("one master, two days: %d, %d slots", r.status, len(r.list))
	}
	// Without a date: the salon's today (no shifts today in this fixture).
	if r := s.do("GET", fmt.Sprintf("/api/v1/salons/studio/slots?service_id=%d", s.svc.ID), nil); r.status != 200 || len(r.list) != 0 {
		t.Fatalf("slots today: %d %s", r.status, r.raw)
	}
	for q, field := range map[string]string{
		"?date=2026-03-03":                          "service_id",
		"?service_id=x&date=2026-03-03":             "service_id",
		"?service_id=1&date=03.03.2026":             "date",
		"?service_id=1&date=2026-03-03&days=0":      "days",
		"?service_id=1&date=2026-03-03&days=32":     "days",
		"?service_id=1&date=2026-03-03&master_id=z": "master_id",
		"?service_id=999999&date=2026-03-03":        "service_id",
	} {
		if r := s.do("GET", "/api/v1/salons/studio/slots"+q, nil); r.status != 422 || r.str("error") != "invalid" || r.fields()[field] == nil {
			t.Errorf("slots%s: %d %s, want 422 naming %s", q, r.status, r.raw, field)
		}
	}

	r = s.do("GET", "/api/v1/openapi.json", nil)
	if r.status != 200 || r.str("openapi") != "3.0.3" {
		t.Fatalf("openapi.json: %d", r.status)
	}
	if r := s.do("GET", "/api/v1/nothing-here", nil); r.status != 404 || r.str("error") != "not_found" {
		t.Fatalf("unknown endpoint: %d %s", r.status, r.raw)
	}
}

func TestBookingLifecycle(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	a, b := s.masters[0], s.masters[1]
	created := s.book(a, "11:00")
	id, token := created.id(), created.str("manage_token")
	if created.str("status") != "confirmed" || created.str("starts_at") != s.at("11:00") || created.str("ends_at") != s.at("12:00") ||
		len(token) < 22 || created.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("created: %s", created.raw)
	}
	path := fmt.Sprintf("/api/v1/bookings/%d", id)
	r := s.do("GET", path, nil, "X-Manage-Token", token)
	if r.status != 200 || r.id() != id || r.str("manage_token") != "" || r.str("changeable_until") != s.at("08:00") {
		t.Fatalf("get: %d %s", r.status, r.raw)
	}
	for _, hdr := range [][]string{{}, {"X-Manage-Token", token + "x"}, {"X-Manage-Token", strings.Repeat("A", len(token))}} {
		if r := s.do("GET", path, nil, hdr...); r.status != 404 || r.str("error") != "not_found" {
			t.Fatalf("get with token %v: %d %s", hdr, r.status, r.raw)
		}
	}
	if r := s.do("GET", "/api/v1/bookings/999999", nil, "X-Manage-Token", token); r.status != 404 {
		t.Fatalf("another id with this token: %d", r.status)
	}

	// Reschedule: to a free time, then into a taken one (alternatives, nothing moves).
	s.book(b, "15:00")
	r = s.do("POST", path+"/reschedule", map[string]any{"starts_at": s.at("13:00")}, "X-Manage-Token", token)
	if r.status != 200 || r.str("starts_at") != s.at("13:00") {
		t.Fatalf("reschedule: %d %s", r.status, r.raw)
	}
	r = s.do("POST", path+"/reschedule", map[string]any{"starts_at": s.at("15:00"), "master_id": b.ID}, "X-Manage-Token", token)
	if r.status != 409 || r.str("error") != "slot_taken" || len(r.body["alternatives"].([]any)) == 0 {
		t.Fatalf("reschedule into a taken slot: %d %s", r.status, r.raw)
	}
	if r := s.do("GET", path, nil, "X-Manage-Token", token); r.str("starts_at") != s.at("13:00") || int64(r.body["master_id"].(float64)) != a.ID {
		t.Fatalf("refused move changed the booking: %s", r.raw)
	}
	for body, field := range map[string]string{`{}`: "starts_at", `{"starts_at":"tomorrow"}`: "starts_at", `{"starts_at":"` + s.at("13:00") + `","master_id":-1}`: "master_id"} {
		if r := s.do("POST", path+"/reschedule", body, "X-Manage-Token", token); r.status != 422 || r.fields()[field] == nil {
			t.Errorf("reschedule %s: %d %s", body, r.status, r.raw)
		}
	}
	if r := s.do("POST", path+"/reschedule", map[string]any{"starts_at": s.at("13:00")}); r.status != 404 {
		t.Fatalf("reschedule without token: %d", r.status)
	}

	// Cancel, twice; then it cannot be moved.
	r = s.do("POST", path+"/cancel", map[string]any{"reason": "changed my mind"}, "X-Manage-Token", token)
	if r.status != 200 || r.str("status") != "cancelled" {
		t.Fatalf("cancel: %d %s", r.status, r.raw)
	}
	if r := s.do("POST", path+"/cancel", nil, "X-Manage-Token", token); r.status != 200 || r.str("status") != "cancelled" {
		t.Fatalf("cancel again: %d %s", r.status, r.raw)
	}
	// Defect: this answered too_late, which is about the cutoff. A
	// cancelled booking is a conflict.
	if r := s.do("POST", path+"/reschedule", map[string]any{"starts_at": s.at("16:00")}, "X-Manage-Token", token); r.status != 409 || r.str("error") != "conflict" {
		t.Fatalf("reschedule a cancelled booking: %d %s", r.status, r.raw)
	}
	// The freed slot books again.
	s.book(a, "13:00")

	// The cutoff: three hours before the start, changes close.
	late := s.book(a, "18:00")
	s.Clock.Set(bookingtest.At(s.salon, testDay, "15:30"))
	lp := fmt.Sprintf("/api/v1/bookings/%d", late.id())
	if r := s.do("POST", lp+"/cancel", nil, "X-Manage-Token", late.str("manage_token")); r.status != 409 || r.str("error") != "too_late" {
		t.Fatalf("cancel past the cutoff: %d %s", r.status, r.raw)
	}
	if r := s.do("POST", lp+"/reschedule", map[string]any{"starts_at": s.at("19:00")}, "X-Manage-Token", late.str("manage_token")); r.status != 409 || r.str("error") != "too_late" {
		t.Fatalf("reschedule past the cutoff: %d %s", r.status, r.raw)
	}
}

// Bad input of every kind is a 422 or 404 naming what is wrong, never a 500.
func TestBadInput(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	a := s.masters[0]
	post := func(body any) reply { return s.do("POST", "/api/v1/salons/studio/bookings", body) }
	good := func(mod func(m map[string]any)) map[string]any {
		m := s.newBooking(a, "11:00")
		mod(m)
		return m
	}
	cases := []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"empty body", "", 422, "body"},
		{"malformed JSON", `{"service_id": 1,`, 422, "body"},
		{"not an object", `[1, 2]`, 422, "body"},
		{"a string", `"book me"`, 422, "body"},
		{"two values", `{"service_id": 1} {}`, 422, "body"},
		{"a misspelt field", good(func(m map[string]any) { m["pay_width"] = map[string]any{"certificate": "X"} }), 422, "pay_width"},
		{"a misspelt nested field", good(func(m map[string]any) {
			m["client"] = map[string]any{"name": "A", "phone": "+79991234567", "mail": "a@b.c"}
		}), 422, "client.mail"},
		{"a field in other letters", good(func(m map[string]any) { m["PAY_WITH"] = map[string]any{"certificate": "ABCD-EFGH-JKMN"} }), 422, "PAY_WITH"},
		{"a field given twice", `{"service_id": 1, "service_id": 2, "master_id": 1, "starts_at": "2026-03-03T11:00:00+03:00", "client": {"name": "A", "phone": "+79991234567"}}`, 422, "service_id"},
		{"service_id a string", good(func(m map[string]any) { m["service_id"] = "one" }), 422, "service_id"},
		{"master_id a float", good(func(m map[string]any) { m["master_id"] = 1.5 }), 422, "master_id"},
		{"starts_at a number", good(func(m map[string]any) { m["starts_at"] = 1700000000 }), 422, "starts_at"},
		{"client a string", good(func(m map[string]any) { m["client"] = "Anna" }), 422, "client"},
		{"phone a number", good(func(m map[string]any) { m["client"] = map[string]any{"name": "A", "phone": 79991234567} }), 422, "client.phone"},
		{"missing service_id", good(func(m map[string]any) { delete(m, "service_id") }), 422, "service_id"},
		{"missing client", good(func(m map[string]any) { delete(m, "client") }), 422, "client"},
		{"no name", good(func(m map[string]any) { m["client"] = map[string]any{"phone": "+79991234567"} }), 422, "client.name"},
		{"bad phone", good(func(m map[string]any) { m["client"] = map[string]any{"name": "A", "phone": "call me"} }), 422, "client.phone"},
		{"time without offset", good(func(m map[string]any) { m["starts_at"] = "2026-03-03T11:00:00" }), 422, "starts_at"},
		{"unknown service", good(func(m map[string]any) { m["service_id"] = 999999 }), 422, "service_id"},
		{"unknown master", good(func(m map[string]any) { m["master_id"] = 999999 }), 422, "master_id"},
		{"negative id", good(func(m map[string]any) { m["master_id"] = -3 }), 422, "master_id"},
		{"in the past", good(func(m map[string]any) { m["starts_at"] = "2026-03-01T11:00:00+03:00" }), 422, "starts_at"},
		{"outside the shift", good(func(m map[string]any) { m["starts_at"] = s.at("21:00") }), 422, "starts_at"},
		{"off the grid", good(func(m map[string]any) { m["starts_at"] = s.at("11:05") }), 422, "starts_at"},
		{"huge name", good(func(m map[string]any) {
			m["client"] = map[string]any{"name": strings.Repeat("x", 500), "phone": "+79991234567"}
		}), 422, "client.name"},
	}
	for _, c := range cases {
		r := post(c.body)
		if r.status != c.status || r.str("error") != "invalid" || r.fields()[c.field] == nil {
			t.Errorf("%s: %d %s; want %d naming %q", c.name, r.status, r.raw, c.status, c.field)
		}
	}
	if r := s.do("POST", "/api/v1/salons/nowhere/bookings", s.newBooking(a, "11:00")); r.status != 404 || r.str("error") != "not_found" {
		t.Errorf("unknown salon: %d %s", r.status, r.raw)
	}
	// A body over the limit: the server answers 413 as soon as it reads the
	// length and closes, which the client may see as a reset while it is
	// still writing; it tries again then.
	big := fmt.Sprintf(`{"client":{"name":"%s"}}`, strings.Repeat("x", 70<<10))
	status, raw := postRaw(t, s.base+"/api/v1/salons/studio/bookings", big)
	if status != 413 || !strings.Contains(raw, `"error":"invalid"`) {
		t.Errorf("70 KiB body: %d %.200s", status, raw)
	}
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM bookings) + (SELECT count(*) FROM clients)`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("bad requests wrote %d rows (%v)", n, err)
	}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	body := s.newBooking(s.masters[0], "11:00")
	first := s.do("POST", "/api/v1/salons/studio/bookings", body, "Idempotency-Key", "k-123")
	again := s.do("POST", "/api/v1/salons/studio/bookings", body, "Idempotency-Key", "k-123")
	if first.status != 201 || again.status != 201 || string(first.raw) != string(again.raw) {
		t.Fatalf("replay: %d %s / %d %s", first.status, first.raw, again.status, again.raw)
	}
	body["starts_at"] = s.at("12:00")
	if r := s.do("POST", "/api/v1/salons/studio/bookings", body, "Idempotency-Key", "k-123"); r.status != 422 || r.str("error") != "idempotency_conflict" {
		t.Fatalf("same key, other body: %d %s", r.status, r.raw)
	}
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d bookings, want 1", n)
	}

	// A first request that is still running: the replay waits, then says so.
	tx, err := s.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	if _, err := tx.Exec(context.Background(), `INSERT INTO idempotency_keys (salon_id, scope, key_hash, request_hash)
		VALUES ($1, 'book', sha256('idempotency-key'::bytea || '\x00'::bytea || 'slow'::bytea), '\x00')`, s.salon.ID); err != nil {
		t.Fatal(err)
	}
	if r := s.do("POST", "/api/v1/salons/studio/bookings", s.newBooking(s.masters[1], "11:00"), "Idempotency-Key", "slow"); r.status != 409 || r.str("error") != "in_progress" {
		t.Fatalf("key of a running request: %d %s", r.status, r.raw)
	}
}

// 100 clients post the same slot at once: exactly one booking, 99 answers
// with alternatives.
func TestConcurrentPostsForOneSlot(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	const n = 100
	body := s.newBooking(s.masters[0], "14:00")
	replies := make([]reply, n)
	bookingtest.Race(n, func(i int) {
		b := map[string]any{}
		for k, v := range body {
			b[k] = v
		}
		b["client"] = map[string]any{"name": "Racer", "phone": fmt.Sprintf("+7999%07d", i)}
		replies[i] = s.do("POST", "/api/v1/salons/studio/bookings", b)
	})
	var created, taken int
	for _, r := range replies {
		switch {
		case r.status == 201:
			created++
		case r.status == 409 && r.str("error") == "slot_taken":
			taken++
			alts, _ := r.body["alternatives"].([]any)
			if len(alts) == 0 || len(alts) > 6 {
				t.Fatalf("409 with %d alternatives: %s", len(alts), r.raw)
			}
		default:
			t.Fatalf("unexpected answer %d %s", r.status, r.raw)
		}
	}
	if created != 1 || taken != n-1 {
		t.Fatalf("%d created, %d taken; want 1 and %d", created, taken, n-1)
	}
	var count int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings WHERE status = 'confirmed'`).Scan(&count); err != nil || count != 1 {
		t.Fatalf("%d bookings in the database", count)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	proxy := netip.MustParsePrefix("127.0.0.1/32")
	s := newSite(t, func(c *widget.Config) { c.RateLimit = 3; c.TrustedProxies = []netip.Prefix{proxy} })
	post := func(hhmm string, xff string) reply {
		return s.do("POST", "/api/v1/salons/studio/bookings", s.newBooking(s.masters[0], hhmm), "X-Forwarded-For", xff)
	}
	for i, hhmm := range []string{"10:00", "11:00", "12:00"} {
		if r := post(hhmm, "203.0.113.7"); r.status != 201 {
			t.Fatalf("booking %d within the limit: %d %s", i, r.status, r.raw)
		}
	}
	r := post("13:00", "203.0.113.7")
	if r.status != 429 || r.str("error") != "rate_limited" || r.header.Get("Retry-After") == "" {
		t.Fatalf("fourth booking: %d %s", r.status, r.raw)
	}
	// Another client behind the same (trusted) proxy has its own budget; a
	// forged left-most address does not help the first.
	if r := post("13:00", "198.51.100.9"); r.status != 201 {
		t.Fatalf("another client: %d %s", r.status, r.raw)
	}
	if r := post("14:00", "198.51.100.1, 203.0.113.7"); r.status != 429 {
		t.Fatalf("forged X-Forwarded-For: %d %s", r.status, r.raw)
	}
	// Reading is never limited.
	for range 5 {
		if r := s.do("GET", "/api/v1/salons/studio", nil); r.status != 200 {
			t.Fatalf("read: %d", r.status)
		}
	}
}

// An untrusted peer's X-Forwarded-For is ignored: every forged address is
// still the peer.
func TestRateLimitIgnoresUntrustedForwardedFor(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(c *widget.Config) { c.RateLimit = 2 })
	for i, hhmm := range []string{"10:00", "11:00", "12:00"} {
		r := s.do("POST", "/api/v1/salons/studio/bookings", s.newBooking(s.masters[1], hhmm), "X-Forwarded-For", fmt.Sprintf("192.0.2.%d", i))
		if want := map[bool]int{true: 201, false: 429}[i < 2]; r.status != want {
			t.Fatalf("booking %d: %d, want %d", i, r.status, want)
		}
	}
}

// A failure that is nobody's input is a 500 with no details, and logged.
func TestInternalErrorHidesDetails(t *testing.T) {
	t.Parallel()
	pool := bookingtest.Pool(t)
	pool.Close() // every query now fails
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) }), nil))
	base := serve(t, widget.New(booking.New(pool), widget.Config{Log: log}), log)
	resp, err := http.Get(base + "/api/v1/salons/studio")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || string(raw) != `{"error":"internal","message":"internal error"}` {
		t.Fatalf("closed pool: %d %s", resp.StatusCode, raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "closed pool") || !strings.Contains(logs.String(), "request_id=") {
		t.Fatalf("internal error not logged with detail and request id: %s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// postRaw posts body as JSON, trying again when the server closed the
// connection before the client finished writing.
func postRaw(t *testing.T, url, body string) (int, string) {
	t.Helper()
	var err error
	for range 10 {
		var resp *http.Response
		resp, err = http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			continue
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(raw)
	}
	t.Fatalf("post: %v", err)
	return 0, ""
}

// TestBookAndCancelLoopsAreLimited: cancels from the public API were not
// limited, and a loop of book-and-cancel grew one master's calendar feed
// to 790 events, 764 of them cancelled, each with the fake client's
// phone. Cancels (and moves) now have a per-address budget like bookings.
func TestBookAndCancelLoopsAreLimited(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(c *widget.Config) { c.RateLimit = 3 })
	var made []reply
	for _, hhmm := range []string{"10:00", "11:00", "12:00"} {
		r := s.do("POST", "/api/v1/salons/studio/bookings", s.newBooking(s.masters[0], hhmm))
		if r.status != 201 {
			t.Fatalf("booking: %d %s", r.status, r.raw)
		}
		made = append(made, r)
	}
	codes := []int{}
	for _, r := range append(made, made[0]) {
		c := s.do("POST", fmt.Sprintf("/api/v1/bookings/%d/cancel", r.id()), nil, "X-Manage-Token", r.str("manage_token"))
		codes = append(codes, c.status)
	}
	if fmt.Sprint(codes) != "[200 200 200 429]" {
		t.Errorf("four cancels with a budget of three: %v, want the fourth refused", codes)
	}
}

// A client moving her booking is offered the times that overlap its own
// (a half hour later is a move, not a clash), not the one it has; only
// with its manage token (the booking's time is not another's to learn).
func TestAMoveIsOfferedTimesOverlappingItsOwn(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	m := s.masters[0]
	mine, other := s.book(m, "12:00"), s.book(m, "16:00")
	slots := fmt.Sprintf("/api/v1/salons/studio/slots?service_id=%d&master_id=%d&date=%s", s.svc.ID, m.ID, testDay)
	moving := slots + fmt.Sprintf("&moving=%d", mine.id())
	if starts := startsOf(s.do("GET", slots, nil)); slices.Contains(starts, s.at("11:15")) || slices.Contains(starts, s.at("12:30")) {
		t.Fatalf("free for a new booking, over the one at 12:00: %v", starts)
	}
	starts := startsOf(s.do("GET", moving, nil, "X-Manage-Token", mine.str("manage_token")))
	if !slices.Contains(starts, s.at("11:15")) || !slices.Contains(starts, s.at("12:30")) || slices.Contains(starts, s.at("12:00")) ||
		slices.Contains(starts, s.at("15:30")) {
		t.Fatalf("moving 12:00 offers %v: want 11:15 and 12:30, not 12:00 nor 15:30 (over another's 16:00)", starts)
	}
	// The same with any master: the times of this master stay offered.
	anyMaster := fmt.Sprintf("/api/v1/salons/studio/slots?service_id=%d&date=%s&moving=%d", s.svc.ID, testDay, mine.id())
	if r := s.do("GET", anyMaster, nil, "X-Manage-Token", mine.str("manage_token")); r.status != 200 || len(r.list) == 0 {
		t.Fatalf("moving, any master: %d %s", r.status, r.raw)
	}
	// Without its token, or with another booking's: as if it did not exist.
	for _, hdr := range [][]string{{}, {"X-Manage-Token", other.str("manage_token")}, {"X-Manage-Token", "wrong"}} {
		if r := s.do("GET", moving, nil, hdr...); r.status != 404 || r.str("error") != "not_found" {
			t.Fatalf("moving with %v: %d %s", hdr, r.status, r.raw)
		}
	}
	if r := s.do("GET", slots+"&moving=x", nil); r.status != 422 || r.fields()["moving"] == nil {
		t.Fatalf("moving=x: %d %s", r.status, r.raw)
	}
	// (Said with the query's other faults, not alone.)
	if r := s.do("GET", "/api/v1/salons/studio/slots?moving=x&days=99", nil); r.status != 422 || len(r.fields()) != 3 {
		t.Fatalf("moving=x, no service, 99 days: %d %s", r.status, r.raw)
	}
	// The time offered is one the move takes.
	path := fmt.Sprintf("/api/v1/bookings/%d/reschedule", mine.id())
	if r := s.do("POST", path, map[string]any{"starts_at": s.at("12:30")}, "X-Manage-Token", mine.str("manage_token")); r.status != 200 ||
		r.str("starts_at") != s.at("12:30") {
		t.Fatalf("move to 12:30: %d %s", r.status, r.raw)
	}
}

// startsOf lists the starts_at of a slots answer.
func startsOf(r reply) []string {
	var out []string
	for _, v := range r.list {
		out = append(out, v.(map[string]any)["starts_at"].(string))
	}
	return out
}
