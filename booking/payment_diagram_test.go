package booking_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp/psptest"
)

// TestStateDiagramMatchesTheCode drives every way a deposit can go
// through the fake provider and compares the transitions the code made
// (payment_events, written by a trigger on every change of a session's
// state) with the edges of the state diagram in docs/PAYMENTS.md: every
// transition made is an edge, and every edge is made.
func TestStateDiagramMatchesTheCode(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/PAYMENTS.md")
	if err != nil {
		t.Fatal(err)
	}
	edges := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(\[\*\]|\w+) --> (\w+)`).FindAllStringSubmatch(string(doc), -1) {
		from := m[1]
		if from == "[*]" {
			from = ""
		}
		edges[from+" -> "+m[2]] = false
	}
	if len(edges) < 10 {
		t.Fatalf("only %d edges in the diagram", len(edges))
	}
	ctx := bookingtest.System()
	w := newPayWorld(t, booking.RefundAlways)
	var mu sync.Mutex
	faults := map[string][]psptest.Fault{}
	w.fake.Fault = func(method, path string) psptest.Fault {
		mu.Lock()
		defer mu.Unlock()
		if f := faults[path]; len(f) > 0 {
			faults[path] = f[1:]
			return f[0]
		}
		return psptest.None
	}
	inject := func(path string, f ...psptest.Fault) { mu.Lock(); faults[path] = f; mu.Unlock() }
	check := func(s *booking.PaymentSession) { _, _ = w.Svc.CheckPayment(ctx, s.ID) }
	session := func(b *booking.Booking) *booking.PaymentSession {
		var id int64
		if err := w.Pool.QueryRow(ctx, `SELECT id FROM payment_sessions WHERE booking_id = $1 ORDER BY id DESC LIMIT 1`, b.ID).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return &booking.PaymentSession{ID: id}
	}
	latestPayment := func() string {
		ids := w.fake.IDs()
		slices.Sort(ids)
		return ids[len(ids)-1]
	}
	startLost := func(b *booking.Booking) *booking.PaymentSession {
		inject("POST /payments", psptest.Lost)
		_, _ = w.Svc.StartPayment(booking.As(ctx, booking.ByToken(b.ManageToken)), b.ID, nil)
		return session(b)
	}

	// Paid, part of it refunded by the salon, then cancelled and the rest
	// refunded.
	b := w.book("10:00")
	w.paid(b)
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 10000); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Cancel(booking.As(ctx, booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	// A lost create, found again.
	b = w.book("11:00")
	check(startLost(b))
	// A lost create; the client paid meanwhile.
	b = w.book("12:00")
	s := startLost(b)
	w.fake.Pay(latestPayment())
	check(s)
	// A lost create; declined meanwhile.
	b = w.book("13:00")
	s = startLost(b)
	w.fake.Decline(latestPayment())
	check(s)
	// The provider refuses the create.
	b = w.book("14:00")
	inject("POST /payments", psptest.Reject)
	_, _ = w.Svc.StartPayment(booking.As(ctx, booking.ByToken(b.ManageToken)), b.ID, nil)
	if st, _ := w.status(b.ID); st != booking.StatusCancelled {
		t.Errorf("a refused payment left the booking %s", st)
	}
	// Declined on the payment page.
	b = w.book("15:00")
	s = w.start(b)
	w.fake.Decline(s.ExternalID)
	check(s)
	// Cancelled before payment; never paid.
	b = w.book("16:00")
	s = w.start(b)
	if _, err := w.Svc.Cancel(booking.As(ctx, booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(3 * time.Hour)
	check(s) // still pending at the provider: watched, not written off
	w.Clock.Advance(24 * time.Hour)
	check(s) // a day after the hold: written off
	// ... and paid after all: the provider's word wins, and the money,
	// for a booking that is gone, is released.
	w.fake.Pay(s.ExternalID)
	if _, err := w.Svc.PaymentNotified(ctx, "yookassa", s.ExternalID); err != nil {
		t.Fatal(err)
	}
	if st := w.fake.Status(s.ExternalID); st != "canceled" {
		t.Errorf("paid after the write-off, for a cancelled booking: the provider's payment is %s, want canceled", st)
	}
	// Paid after the hold expired, the slot taken meanwhile.
	w.day = w.day.AddDays(0)
	b = w.book("17:00")
	s = w.start(b)
	w.Clock.Advance(20 * time.Minute)
	if _, err := w.Svc.ExpireHolds(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "17:00"), Client: booking.ClientInput{Name: "Other", Phone: bookingtest.Phone()}}); err != nil {
		t.Fatal(err)
	}
	w.fake.Pay(s.ExternalID)
	check(s)
	// Paid, the capture fails, and the authorization runs out.
	b = w.book("18:00")
	s = w.start(b)
	w.fake.Pay(s.ExternalID)
	inject("POST /payments/{id}/capture", psptest.Error, psptest.Error, psptest.Error, psptest.Error)
	check(s)
	w.fake.Expire(s.ExternalID)
	inject("POST /payments/{id}/capture")
	check(s)

	// Paid; the capture's answer is lost; the client cancels meanwhile: the
	// money came after all, and goes back.
	b = w.book("19:00")
	s = w.start(b)
	w.fake.Pay(s.ExternalID)
	inject("POST /payments/{id}/capture", psptest.Lost)
	check(s)
	if _, err := w.Svc.Cancel(booking.As(ctx, booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	check(s)
	if _, ps := w.status(b.ID); ps != booking.PayRefunded {
		t.Errorf("a capture lost before a cancellation ended %s", ps)
	}

	rows, err := w.Pool.Query(ctx, `SELECT DISTINCT COALESCE(from_status, ''), to_status FROM payment_events`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var from, to string
		if err := rows.Scan(&from, &to); err != nil {
			t.Fatal(err)
		}
		e := from + " -> " + to
		if _, ok := edges[e]; !ok {
			t.Errorf("the code made %s, which the diagram lacks", e)
		}
		edges[e] = true
	}
	for e, made := range edges {
		if !made {
			t.Errorf("the diagram's %s was never made", strings.TrimPrefix(e, " "))
		}
	}
}
