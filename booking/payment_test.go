package booking_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
)

// payWorld is a salon whose deposits are taken through a fake YooKassa,
// each provider call tried once.
type payWorld struct {
	*bookingtest.Env
	t      *testing.T
	fake   *psptest.Server
	yk     *psp.YooKassa
	salon  *booking.Salon
	svc    *booking.SalonService
	master *booking.Master
	day    booking.Date
}

func newPayWorld(t *testing.T, policy booking.RefundPolicy) *payWorld {
	t.Helper()
	// One attempt a call: these tests are of the saga's own recovery from
	// a failed call (which the in-call retries would hide).
	return newPayWorldOn(t, psptest.New(t), policy, booking.WithProviderAttempts(1))
}

// newPayWorldOn is a payWorld over fake, the service with opts (after
// WithPayments).
func newPayWorldOn(t *testing.T, fake *psptest.Server, policy booking.RefundPolicy, opts ...booking.Option) *payWorld {
	t.Helper()
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	e := bookingtest.New(t, append([]booking.Option{booking.WithPayments(yk)}, opts...)...)
	w := &payWorld{Env: e, t: t, fake: fake, yk: yk}
	w.salon = e.Salon(t, booking.Salon{HoldMin: 15, RefundPolicy: policy, CutoffHours: 3})
	w.svc = e.Service(t, w.salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 500000, Deposit: 100000})
	w.master = e.Master(t, w.salon, w.svc)
	w.day = w.salon.Today(e.Clock.Now()).AddDays(1)
	e.Shift(t, w.salon, w.master, w.day, 1, "10:00", "20:00")
	return w
}

// book makes a pending deposit booking as a widget visitor.
func (w *payWorld) book(hhmm string) *booking.Booking {
	w.t.Helper()
	b, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID,
		StartsAt: bookingtest.At(w.salon, w.day, hhmm), Client: booking.ClientInput{Name: "Payer", Phone: bookingtest.Phone()}})
	if err != nil {
		w.t.Fatal(err)
	}
	if b.Status != booking.StatusPending {
		w.t.Fatalf("a deposit booking is %s", b.Status)
	}
	return b
}

func (w *payWorld) start(b *booking.Booking) *booking.PaymentSession {
	w.t.Helper()
	s, err := w.Svc.StartPayment(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID, func(ref string) string { return "https://salon.test/back/" + ref })
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

func (w *payWorld) count(sql string, args ...any) int {
	w.t.Helper()
	var n int
	if err := w.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		w.t.Fatal(err)
	}
	return n
}

func (w *payWorld) status(id int64) (booking.Status, booking.PaymentStatus) {
	w.t.Helper()
	var b booking.Status
	var p booking.PaymentStatus
	if err := w.Pool.QueryRow(context.Background(), `SELECT b.status, COALESCE((SELECT status FROM payment_sessions
		WHERE booking_id = b.id ORDER BY id DESC LIMIT 1), '') FROM bookings b WHERE b.id = $1`, id).Scan(&b, &p); err != nil {
		w.t.Fatal(err)
	}
	return b, p
}

// paid makes the client pay and the core learn it; it returns the session.
func (w *payWorld) paid(b *booking.Booking) *booking.PaymentSession {
	w.t.Helper()
	s := w.start(b)
	if !w.fake.Pay(s.ExternalID) {
		w.t.Fatalf("pay %s", s.ExternalID)
	}
	out, err := w.Svc.CheckPayment(bookingtest.System(), s.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

func TestPaymentHappyPath(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b := w.book("11:00")
	s := w.start(b)
	if s.Status != booking.PayRegistered || s.URL == "" || s.Amount != 100000 {
		t.Fatalf("session %+v", s)
	}
	// The payer reads it on the provider's page, in the salon's language.
	if got, want := w.fake.Description(s.ExternalID), fmt.Sprintf("Предоплата за запись №%d", b.ID); got != want {
		t.Errorf("the payment's description %q, want %q", got, want)
	}
	if got := w.fake.Locale(s.ExternalID); got != "ru_RU" {
		t.Errorf("the provider's page asked in %q, want ru_RU", got)
	}
	s = w.paid(b)
	if s.Status != booking.PayCompleted || s.URL != "" {
		t.Fatalf("after payment: %+v", s)
	}
	if bs, _ := w.status(b.ID); bs != booking.StatusConfirmed {
		t.Fatalf("booking %s", bs)
	}
	if n := w.count(`SELECT count(*) FROM ledger_entries WHERE entry_type = 'deposit_received' AND amount = 1000`); n != 1 {
		t.Errorf("%d deposit_received entries", n)
	}
	if c, _ := w.fake.Totals(); c != 100000 {
		t.Errorf("captured %d", c)
	}
}

// TestCreateTwiceIsOneSession: the same request again returns the active
// session; one payment at the provider.
func TestCreateTwiceIsOneSession(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b := w.book("11:00")
	a, c := w.start(b), w.start(b)
	if a.ID != c.ID || a.URL != c.URL {
		t.Errorf("two sessions: %+v %+v", a, c)
	}
	if w.fake.Payments() != 1 || w.count(`SELECT count(*) FROM payment_sessions`) != 1 {
		t.Errorf("%d payments at the provider", w.fake.Payments())
	}
	// Other parameters while one is active: a conflict.
	if _, err := w.Pool.Exec(context.Background(), `UPDATE bookings SET deposit = 2000 WHERE id = $1`, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.StartPayment(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID, nil); !errors.Is(err, booking.ErrConflict) {
		t.Errorf("another amount: %v", err)
	}
	if w.count(`SELECT count(*) FROM payment_sessions`) != 1 || w.fake.Payments() != 1 {
		t.Error("a second session or payment")
	}
	// Another caller's booking is not found.
	if _, err := w.Svc.StartPayment(booking.As(context.Background(), booking.ByToken("nope")), b.ID, nil); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("a stranger: %v", err)
	}
}

// TestCreateFromTwoReplicas: two services (replicas) on one database,
// released at once: one session, one provider payment.
func TestCreateFromTwoReplicas(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	other := booking.New(w.Pool, booking.WithClock(w.Clock.Now), booking.WithPayments(w.yk), booking.WithProviderAttempts(1))
	for range 5 {
		b := w.book(map[int]string{0: "10:00"}[0])
		var got [8]*booking.PaymentSession
		bookingtest.Race(8, func(i int) {
			svc := []*booking.Service{w.Svc, other}[i%2]
			got[i], _ = svc.StartPayment(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID, nil)
		})
		for _, g := range got {
			if g == nil || g.ID != got[0].ID {
				t.Fatalf("sessions %v", got)
			}
		}
		if n := w.count(`SELECT count(*) FROM payment_sessions WHERE booking_id = $1`, b.ID); n != 1 {
			t.Errorf("%d sessions", n)
		}
		if _, err := w.Svc.Cancel(booking.As(context.Background(), booking.BySystem()), booking.CancelRequest{BookingID: b.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if w.fake.Payments() != 5 {
		t.Errorf("%d payments at the provider for 5 bookings", w.fake.Payments())
	}
}

// TestCheckTwiceAtOnceIsOneEntry: two checks (and a webhook) race: one
// deposit_received, the session completed, no payment URL.
func TestCheckTwiceAtOnceIsOneEntry(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b := w.book("12:00")
	s := w.start(b)
	w.fake.Pay(s.ExternalID)
	bookingtest.Race(10, func(i int) {
		if i%2 == 0 {
			_, _ = w.Svc.CheckPayment(bookingtest.System(), s.ID)
		} else {
			_, _ = w.Svc.PaymentNotified(bookingtest.System(), "yookassa", s.ExternalID)
		}
	})
	if n := w.count(`SELECT count(*) FROM ledger_entries`); n != 1 {
		t.Errorf("%d ledger entries", n)
	}
	p, err := w.Svc.PaymentOf(booking.As(context.Background(), booking.ByToken(b.ManageToken)), 0, b.ID, true)
	if err != nil || p.Status != booking.PayCompleted || p.URL != "" {
		t.Errorf("after the race: %+v %v", p, err)
	}
	if c, _ := w.fake.Totals(); c != 100000 {
		t.Errorf("captured %d", c)
	}
}

// TestSameWebhookManyTimes: one entry.
func TestSameWebhookManyTimes(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b := w.book("13:00")
	s := w.start(b)
	w.fake.Pay(s.ExternalID)
	for range 100 {
		if _, err := w.Svc.PaymentNotified(bookingtest.System(), "yookassa", s.ExternalID); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.count(`SELECT count(*) FROM ledger_entries`); n != 1 {
		t.Errorf("%d ledger entries", n)
	}
	if w.fake.Calls("POST /payments/{id}/capture") != 1 {
		t.Errorf("%d captures", w.fake.Calls("POST /payments/{id}/capture"))
	}
}

// TestForgedWebhookChangesNothing: a notification the provider does not
// confirm (the client has not paid) changes nothing.
func TestForgedWebhookChangesNothing(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b := w.book("14:00")
	s := w.start(b)
	if _, err := w.Svc.PaymentNotified(bookingtest.System(), "yookassa", s.ExternalID); err != nil {
		t.Fatal(err)
	}
	if bs, ps := w.status(b.ID); bs != booking.StatusPending || ps != booking.PayRegistered {
		t.Errorf("after a forged notification: %s %s", bs, ps)
	}
	if _, err := w.Svc.PaymentNotified(bookingtest.System(), "yookassa", "pay-9999"); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("unknown payment: %v", err)
	}
	if n := w.count(`SELECT count(*) FROM ledger_entries`); n != 0 {
		t.Errorf("%d ledger entries", n)
	}
}

// TestCancelTwiceIsOneRefund: two cancellations of a paid booking at once,
// one token: one refund, one deposit_refunded.
func TestCancelTwiceIsOneRefund(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b := w.book("15:00")
	w.paid(b)
	bookingtest.Race(6, func(i int) {
		_, _ = w.Svc.Cancel(booking.As(context.Background(), booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID})
	})
	if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	if w.fake.Calls("POST /refunds") < 1 {
		t.Fatal("no refund")
	}
	if _, r := w.fake.Totals(); r != 100000 {
		t.Errorf("refunded %d", r)
	}
	if n := w.count(`SELECT count(*) FROM ledger_entries WHERE entry_type = 'deposit_refunded'`); n != 1 {
		t.Errorf("%d refund entries", n)
	}
	if bs, ps := w.status(b.ID); bs != booking.StatusCancelled || ps != booking.PayRefunded {
		t.Errorf("after cancel: %s %s", bs, ps)
	}
}

// TestRefundPolicy: never keeps the deposit; before_cutoff refunds a
// client before the cutoff, not after.
func TestRefundPolicy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		policy booking.RefundPolicy
		late   bool
		refund bool
	}{{booking.RefundNever, false, false}, {booking.RefundBeforeCutoff, false, true}, {booking.RefundAlways, false, true}} {
		w := newPayWorld(t, c.policy)
		b := w.book("16:00")
		w.paid(b)
		if _, err := w.Svc.Cancel(booking.As(context.Background(), booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID}); err != nil {
			t.Fatal(err)
		}
		_, refunded := w.fake.Totals()
		if (refunded > 0) != c.refund {
			t.Errorf("%s: refunded %d", c.policy, refunded)
		}
	}
	// After the cutoff a client may no longer cancel; staff may, at the
	// client's request (the policy then keeps the deposit, as the
	// client's own cancellation would) or of the salon's own accord
	// (refunded, whatever the policy).
	for _, c := range []struct {
		policy         booking.RefundPolicy
		forClient      bool
		late, refunded bool
	}{
		{booking.RefundBeforeCutoff, true, true, false},
		{booking.RefundBeforeCutoff, true, false, true},
		{booking.RefundBeforeCutoff, false, true, true},
		{booking.RefundNever, true, false, false},
		{booking.RefundNever, false, false, true},
		{booking.RefundAlways, true, true, true},
	} {
		w := newPayWorld(t, c.policy)
		b := w.book("10:00")
		w.paid(b)
		if c.late {
			w.Clock.Set(bookingtest.At(w.salon, w.day, "09:00"))
			if _, err := w.Svc.Cancel(booking.As(context.Background(), booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID}); !errors.Is(err, booking.ErrTooLate) {
				t.Fatalf("a client after the cutoff: %v", err)
			}
		}
		staff := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin}))
		v, err := w.Svc.BookingView(staff, w.salon.ID, b.ID)
		if err != nil || v.Prepaid != 100000 || v.CancelKeepsPrepaid == c.refunded && c.forClient {
			t.Errorf("%s (late %v): staff read prepaid %v, kept at the client's request %v (%v)", c.policy, c.late, v.Prepaid, v.CancelKeepsPrepaid, err)
		}
		if _, err := w.Svc.Cancel(staff, booking.CancelRequest{SalonID: w.salon.ID, BookingID: b.ID, ForClient: c.forClient, Stated: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Fatal(err)
		}
		w.fake.SettleRefunds()
		captured, refunded := w.fake.Totals()
		if (refunded == 100000) != c.refunded || captured != 100000 || w.fake.Held() != 0 {
			t.Errorf("%s (late %v, for the client %v): captured %d, refunded %d, held %d", c.policy, c.late, c.forClient, captured, refunded, w.fake.Held())
		}
		var detail string
		if err := w.Pool.QueryRow(context.Background(), `SELECT details::text FROM booking_events WHERE action = 'cancelled' AND booking_id = $1`, b.ID).Scan(&detail); err != nil ||
			!strings.Contains(detail, fmt.Sprintf(`"for_client": %v`, c.forClient)) {
			t.Errorf("the audit of the cancellation: %s %v", detail, err)
		}
	}
}

// TestTwoSweepersShareTheWork: two replicas sweep at once; each session is
// checked by one of them.
func TestTwoSweepersShareTheWork(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	other := booking.New(w.Pool, booking.WithClock(w.Clock.Now), booking.WithPayments(w.yk), booking.WithProviderAttempts(1))
	n := 0
	for h := 10; h < 20; h++ {
		for _, m := range []string{":00"} {
			b := w.book(map[bool]string{true: "", false: ""}[false] + itoa2(h) + m)
			s := w.start(b)
			w.fake.Pay(s.ExternalID)
			n++
		}
	}
	w.Clock.Advance(time.Minute)
	gets := w.fake.Calls("GET /payments/{id}")
	var got [2]int
	bookingtest.Race(2, func(i int) {
		got[i], _ = []*booking.Service{w.Svc, other}[i].SweepPayments(bookingtest.System())
	})
	if got[0]+got[1] != n {
		t.Errorf("the sweepers checked %d and %d of %d sessions", got[0], got[1], n)
	}
	if calls := w.fake.Calls("GET /payments/{id}") - gets; calls > 2*n {
		t.Errorf("%d GETs for %d sessions: some were handled twice", calls, n)
	}
	if c := w.count(`SELECT count(*) FROM ledger_entries`); c != n {
		t.Errorf("%d ledger entries for %d payments", c, n)
	}
}

func itoa2(h int) string { return string(rune('0'+h/10)) + string(rune('0'+h%10)) }

// TestLatePayment: paid after the hold expired: booked again and captured
// when the slot is free; released (nothing charged) when it is taken.
func TestLatePayment(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	free, taken := w.book("11:00"), w.book("15:00")
	sf, st := w.start(free), w.start(taken)
	w.Clock.Advance(20 * time.Minute)
	if n, err := w.Svc.ExpireHolds(bookingtest.System()); err != nil || n != 2 {
		t.Fatalf("expired %d %v", n, err)
	}
	// Someone else takes 15:00.
	if _, err := w.Svc.Book(booking.As(context.Background(), booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "15:00"), Client: booking.ClientInput{Name: "Other", Phone: bookingtest.Phone()}}); err != nil {
		t.Fatal(err)
	}
	w.fake.Pay(sf.ExternalID)
	w.fake.Pay(st.ExternalID)
	a, err := w.Svc.CheckPayment(bookingtest.System(), sf.ID)
	if err != nil || a.Status != booking.PayCompleted {
		t.Fatalf("late payment, slot free: %+v %v", a, err)
	}
	if bs, _ := w.status(free.ID); bs != booking.StatusConfirmed {
		t.Errorf("late payment, slot free: booking %s", bs)
	}
	c, err := w.Svc.CheckPayment(bookingtest.System(), st.ID)
	if err != nil || c.Status != booking.PayCanceled {
		t.Fatalf("late payment, slot taken: %+v %v", c, err)
	}
	if bs, _ := w.status(taken.ID); bs != booking.StatusCancelled {
		t.Errorf("late payment, slot taken: booking %s", bs)
	}
	if w.fake.Status(st.ExternalID) != "canceled" {
		t.Errorf("the provider's payment is %s, want canceled (released)", w.fake.Status(st.ExternalID))
	}
	captured, _ := w.fake.Totals()
	if captured != 100000 || w.count(`SELECT count(*) FROM ledger_entries`) != 1 {
		t.Errorf("captured %d", captured)
	}
}

// TestLostAnswersAreRecovered: the create's answer is lost, then a capture's;
// the checks find the same payment (one at the provider) and finish.
func TestLostAnswersAreRecovered(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	var mu sync.Mutex
	lose := map[string]bool{"POST /payments": true, "POST /payments/{id}/capture": true}
	w.fake.Fault = func(method, path string) psptest.Fault {
		mu.Lock()
		defer mu.Unlock()
		if lose[path] {
			lose[path] = false
			return psptest.Lost
		}
		return psptest.None
	}
	b := w.book("17:00")
	if _, err := w.Svc.StartPayment(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID, nil); !errors.Is(err, booking.ErrUnavailable) {
		t.Fatalf("a lost create: %v", err)
	}
	if _, ps := w.status(b.ID); ps != booking.PayUnknown {
		t.Fatalf("session %s", ps)
	}
	s, err := w.Svc.StartPayment(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID, nil)
	if err != nil || s.Status != booking.PayRegistered || w.fake.Payments() != 1 {
		t.Fatalf("after the retry: %+v %v, %d payments", s, err, w.fake.Payments())
	}
	w.fake.Pay(s.ExternalID)
	if _, err := w.Svc.CheckPayment(bookingtest.System(), s.ID); !errors.Is(err, booking.ErrUnavailable) {
		t.Fatalf("a lost capture: %v", err)
	}
	w.Clock.Advance(time.Hour)
	if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	if bs, ps := w.status(b.ID); bs != booking.StatusConfirmed || ps != booking.PayCompleted {
		t.Errorf("after the sweep: %s %s", bs, ps)
	}
	if n := w.count(`SELECT count(*) FROM ledger_entries`); n != 1 {
		t.Errorf("%d entries", n)
	}
}

// TestDeclinedPaymentMayBeTriedAgain: a declined payment leaves the
// booking pending while its hold lasts; the client tries again (a new
// payment for the same booking) and pays. Declined and never tried again,
// the booking is released when its hold ends.
func TestDeclinedPaymentMayBeTriedAgain(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	b := w.book("18:00")
	s := w.start(b)
	w.fake.Decline(s.ExternalID)
	out, err := w.Svc.PaymentNotified(ctx, "yookassa", s.ExternalID)
	if err != nil || out.Status != booking.PayFailed {
		t.Fatalf("%+v %v", out, err)
	}
	if bs, _ := w.status(b.ID); bs != booking.StatusPending {
		t.Errorf("after a decline, within the hold: booking %s, want pending", bs)
	}
	again := w.start(b)
	if again.ID == s.ID || again.ExternalID == s.ExternalID || again.URL == "" || again.Status != booking.PayRegistered {
		t.Fatalf("tried again: %+v (the declined one: %+v)", again, s)
	}
	w.fake.Pay(again.ExternalID)
	if _, err := w.Svc.PaymentNotified(ctx, "yookassa", again.ExternalID); err != nil {
		t.Fatal(err)
	}
	if bs, ps := w.status(b.ID); bs != booking.StatusConfirmed || ps != booking.PayCompleted {
		t.Errorf("paid on the second try: booking %s, payment %s", bs, ps)
	}
	if n := w.count(`SELECT count(*) FROM ledger_entries`); n != 1 {
		t.Errorf("%d entries", n)
	}

	// Declined, and left: the hold's end frees the time.
	b = w.book("16:00")
	s = w.start(b)
	w.fake.Decline(s.ExternalID)
	if _, err := w.Svc.PaymentNotified(ctx, "yookassa", s.ExternalID); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(16 * time.Minute)
	if _, err := w.Svc.ExpireHolds(ctx); err != nil {
		t.Fatal(err)
	}
	if bs, ps := w.status(b.ID); bs != booking.StatusCancelled || ps != booking.PayFailed {
		t.Errorf("declined and left: booking %s, payment %s", bs, ps)
	}
	if _, err := w.Svc.StartPayment(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID, nil); !errors.Is(err, booking.ErrConflict) {
		if p, _ := w.Svc.StartPayment(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID, nil); p == nil || p.URL != "" || p.ID != s.ID {
			t.Errorf("a payment for a booking whose hold ended: %+v %v", p, err)
		}
	}
}
