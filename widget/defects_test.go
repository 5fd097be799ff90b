package widget_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/widget"
)

// Tests of the defects of issue 7 seen through the API.

// Defect 12: bad input reached the database and came back as a 500 (a
// non-UTF-8 Idempotency-Key, a NUL in a cancel reason); a key of spaces
// silently turned idempotency off; names of invisible characters, bidi
// overrides and line separators were accepted. All are 422s naming the
// field, and nothing is written.
func TestBadTextIsRefused(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	post := func(body any, headers ...string) reply {
		return s.do("POST", "/api/v1/salons/studio/bookings", body, headers...)
	}
	for _, c := range []struct {
		name, key, field string
	}{
		{"key not UTF-8", "k\xff\xfe", "idempotency_key"},
		{"key of spaces", "   ", "idempotency_key"},
		{"key with a space", "a b", "idempotency_key"},
	} {
		r := rawPost(t, s.base+"/api/v1/salons/studio/bookings", s.newBooking(s.masters[0], "11:00"), "Idempotency-Key", c.key)
		if r.status != 422 || !strings.Contains(r.body, `"`+c.field+`"`) {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	for name, client := range map[string]string{
		"invisible name":    "\u200b\u200b",
		"hangul filler":     "\u3164",
		"bidi override":     "Anna\u202egnp.exe",
		"line separator":    "Anna\u2028Maria",
		"NUL in name":       "Anna\x00",
		"newline in a name": "Anna\nMaria",
	} {
		b := s.newBooking(s.masters[0], "11:00")
		b["client"] = map[string]any{"name": client, "phone": bookingtest.Phone()}
		if r := post(b); r.status != 422 || r.fields()["client.name"] == nil {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
	ok := s.book(s.masters[0], "12:00")
	path := fmt.Sprintf("/api/v1/bookings/%d/cancel", ok.id())
	if r := s.do("POST", path, map[string]any{"reason": "a\x00b"}, "X-Manage-Token", ok.str("manage_token")); r.status != 422 || r.fields()["reason"] == nil {
		t.Errorf("NUL in a reason: %d %s", r.status, r.raw)
	}
	var n int
	if err := s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings WHERE status <> 'confirmed'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d bookings changed by refused requests (%v)", n, err)
	}
}

// Defect 16: a multipart body answered 400 with the HTTP server's own
// words, and a body of any type was read as JSON. A body that is not
// declared JSON is 415, in the API's error shape.
func TestBodyMustBeJSON(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	body := `{"service_id":1}`
	for _, ct := range []string{"multipart/form-data; boundary=x", "multipart/form-data", "text/plain", "application/x-www-form-urlencoded", ""} {
		r := rawSend(t, "POST", s.base+"/api/v1/salons/studio/bookings", ct, body)
		if r.status != 415 || !strings.Contains(r.body, `"error":"unsupported_media_type"`) {
			t.Errorf("Content-Type %q: %d %s", ct, r.status, r.body)
		}
	}
	// A broken multipart body, which the server would have parsed itself.
	r := rawSend(t, "POST", s.base+"/api/v1/salons/studio/bookings", "multipart/form-data; boundary=zz", "--zz\r\nbroken")
	if r.status != 415 || strings.Contains(r.body, "multipart") {
		t.Errorf("broken multipart: %d %s", r.status, r.body)
	}
	// JSON with a charset, and +json types, are JSON.
	if r := rawSend(t, "POST", s.base+"/api/v1/salons/studio/bookings", "application/json; charset=utf-8", body); r.status != 422 {
		t.Errorf("application/json; charset=utf-8: %d %s", r.status, r.body)
	}
	// A cancel may have no body at all.
	b := s.book(s.masters[1], "12:00")
	if r := s.do("POST", fmt.Sprintf("/api/v1/bookings/%d/cancel", b.id()), nil, "X-Manage-Token", b.str("manage_token")); r.status != 200 {
		t.Errorf("cancel without a body: %d %s", r.status, r.raw)
	}
}

// Defect 10: requests had no deadline and lock waits no bound. A booking
// of a master someone holds answers 503 with Retry-After when the wait
// runs out, and wrote nothing.
func TestBusyMasterAnswers503(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t, booking.WithLockWait(300*time.Millisecond))
	salon := e.Salon(t, booking.Salon{Slug: "busy", Name: "Busy"})
	svc := e.Service(t, salon, booking.SalonService{Name: "Cut", DurationMin: 60})
	m := e.Master(t, salon, svc)
	e.Shift(t, salon, m, testDay, 1, "10:00", "20:00")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	base := serve(t, widget.New(e.Svc, widget.Config{RequestTimeout: 2 * time.Second, Log: log}), log)
	ctx := bookingtest.System()
	bookingtest.HoldMaster(t, e.Pool, m.ID)
	body := map[string]any{"service_id": svc.ID, "master_id": m.ID, "starts_at": bookingtest.At(salon, testDay, "11:00").Format(time.RFC3339),
		"client": map[string]any{"name": "A", "phone": bookingtest.Phone()}}
	start := time.Now()
	r := rawPost(t, base+"/api/v1/salons/busy/bookings", body)
	if r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, `"error":"unavailable"`) {
		t.Fatalf("busy master: %d %v %s", r.status, r.header, r.body)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("answered after %v", took)
	}
	var n int
	if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM bookings`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d bookings written", n)
	}
}

type rawReply struct {
	status int
	header http.Header
	body   string
}

// rawSend sends body with exactly the Content-Type given ("" for none).
func rawSend(t *testing.T, method, url, contentType, body string, headers ...string) rawReply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header[http.CanonicalHeaderKey(headers[i])] = []string{headers[i+1]} // as is: no checks
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return rawReply{resp.StatusCode, resp.Header, string(raw)}
}

func rawPost(t *testing.T, url string, body map[string]any, headers ...string) rawReply {
	t.Helper()
	return rawSend(t, "POST", url, "application/json", jsonString(t, body), headers...)
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNoRequestIsSmuggledInAnUnreadBody: bodies are streamed, and one a
// handler never read (a 404, here) was left on the connection: its bytes
// were read as the next request, which a proxy in front would not have
// seen (an X-Forwarded-For of the attacker's choosing, say). Now an unread
// body is drained, or its connection closed.
func TestNoRequestIsSmuggledInAnUnreadBody(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	smuggled := "GET /api/v1/salons/studio HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 6.6.6.6\r\n\r\n"
	for _, size := range []int{9000, 2 << 20} { // past the prefetch; past the guard's drain
		body := strings.Repeat("x", size) + smuggled
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
		raw, _ := io.ReadAll(conn) // until the server closes, or the deadline
		conn.Close()
		if n := strings.Count(string(raw), "HTTP/1.1 "); n != 1 {
			t.Errorf("a %d-byte body with a request inside got %d answers:\n%.600s", size, n, raw)
		}
	}
}
