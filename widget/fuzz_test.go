package widget_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/requestid"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/widget"
)

// fuzzApp is the widget on a real database, answering in-process.
func fuzzApp(f *testing.F) *fiber.App {
	pool := bookingtest.Pool(f)
	clock := bookingtest.NewClock(bookingtest.DefaultNow)
	svc := booking.New(pool, booking.WithClock(clock.Now), booking.WithPayments(&psp.Sandbox{Pool: pool}))
	e := &bookingtest.Env{Pool: pool, Clock: clock, Svc: svc}
	salon := e.Salon(f, booking.Salon{Slug: "studio", Name: "Studio"})
	sv := e.Service(f, salon, booking.SalonService{Name: "Colour", Price: 300000, Deposit: 50000})
	m := e.Master(f, salon, sv)
	e.Shift(f, salon, m, testDay, 1, "10:00", "20:00")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	app := widget.NewApp(log)
	app.Use(requestid.New())
	widget.New(svc, widget.Config{Log: log, RateLimit: 0}).Register(app)
	return app
}

// answerOK checks an answer: never a 500, and an API error is the API's
// JSON error shape.
func answerOK(t *testing.T, app *fiber.App, method, path string, body []byte, headers ...string) {
	t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 500 && resp.StatusCode != 503 {
		t.Fatalf("%s %s %q: %d %s", method, path, body, resp.StatusCode, raw)
	}
	if resp.StatusCode >= 400 {
		var e struct {
			Error, Message string
		}
		if err := json.Unmarshal(raw, &e); err != nil || e.Error == "" || e.Message == "" {
			t.Fatalf("%s %s %q: %d, not an API error: %s", method, path, body, resp.StatusCode, raw)
		}
	}
}

// FuzzAPIBodies sends whatever JSON (or not) to the API's writes: a clear
// answer, never a 500 or a stack trace.
func FuzzAPIBodies(f *testing.F) {
	app := fuzzApp(f)
	for _, s := range []string{`{"service_id": 1, "master_id": 1, "starts_at": "2026-03-03T11:00:00+03:00", "client": {"name": "A", "phone": "+79991234567"}}`,
		`{}`, `[]`, `null`, `{"service_id": "1"}`, `{"service_id": 1e400}`, `{"client": {"name": "\u0000"}}`, `{"starts_at": "yesterday"}`,
		`{"service_id": -1, "master_id": 9223372036854775807}`, `{"reason": 5}`, `{"starts_at": "2026-03-03T11:00:00Z", "master_id": 0}`} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		switch which % 3 {
		case 0:
			answerOK(t, app, "POST", "/api/v1/salons/studio/bookings", body)
		case 1:
			answerOK(t, app, "POST", "/api/v1/bookings/1/cancel", body, "X-Manage-Token", "t")
		default:
			answerOK(t, app, "POST", "/api/v1/bookings/1/reschedule", body, "X-Manage-Token", "t")
		}
	})
}

// FuzzPaymentNotification sends whatever a provider (or an attacker) could
// post to the payment webhook: never a 500, and nothing believed without
// the provider.
func FuzzPaymentNotification(f *testing.F) {
	app := fuzzApp(f)
	for _, s := range []string{`{"type": "notification", "event": "payment.waiting_for_capture", "object": {"id": "sbx-1"}}`,
		`{"object": {"id": ""}}`, `{"object": {"id": 5}}`, `not json`, `{"type": "notification", "object": {"id": "` + string(bytes.Repeat([]byte("x"), 200)) + `"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/webhooks/payments/sandbox", bytes.NewReader(body))
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case 200, 400, 503:
		default:
			t.Fatalf("%q: %d", body, resp.StatusCode)
		}
	})
}
