package booking_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp/psptest"
)

// The edges of the deposit saga where the provider's world begins: what
// a local clock may not decide, a sweep that serves everyone, one lock
// order, notices that cannot be lost, one deposit a booking.

// bookFrom makes a pending deposit booking of a Telegram client (who can
// be told about it) at hhmm of day.
func (w *payWorld) bookFrom(user int64, day booking.Date, hhmm string) *booking.Booking {
	w.t.Helper()
	b, err := w.Svc.Book(booking.As(context.Background(), booking.ByIdentity(booking.TelegramUser(user))), booking.BookRequest{SalonID: w.salon.ID,
		ServiceID: w.svc.ID, MasterID: w.master.ID, StartsAt: bookingtest.At(w.salon, day, hhmm),
		Client: booking.ClientInput{Name: "Payer", Phone: bookingtest.Phone()}})
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// startFrom starts the payment of a booking of a Telegram client, as the bot does.
func (w *payWorld) startFrom(user int64, b *booking.Booking) *booking.PaymentSession {
	w.t.Helper()
	s, err := w.Svc.StartPayment(booking.As(context.Background(), booking.ByIdentity(booking.TelegramUser(user))), b.ID, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// paidFrom makes a Telegram client pay for their booking and the core
// learn it; it returns the session.
func (w *payWorld) paidFrom(user int64, b *booking.Booking) *booking.PaymentSession {
	w.t.Helper()
	s := w.startFrom(user, b)
	if !w.fake.Pay(s.ExternalID) {
		w.t.Fatalf("pay %s", s.ExternalID)
	}
	out, err := w.Svc.CheckPayment(bookingtest.System(), s.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

// byHand makes a refund of amount of payment id at the fake provider, as
// a person in the salon's account there would: not through us.
func (w *payWorld) byHand(id string, amount int64, currency string) {
	w.t.Helper()
	canceled, pending, receipts := w.fake.RefundsCanceled, w.fake.RefundsPending, w.fake.RequireReceipts
	w.fake.RefundsCanceled, w.fake.RefundsPending, w.fake.RequireReceipts = false, false, false // (its receipt: the person's matter)
	defer func() {
		w.fake.RefundsCanceled, w.fake.RefundsPending, w.fake.RequireReceipts = canceled, pending, receipts
	}()
	if _, err := w.Svc.Provider().Refund(context.Background(), fmt.Sprintf("by-hand-%s-%d", id, amount), id, amount, currency, nil); err != nil {
		w.t.Fatalf("a refund by hand: %v", err)
	}
}

// told counts the notices of event about booking id.
func (w *payWorld) told(id int64, event string) int {
	w.t.Helper()
	return w.count(`SELECT count(*) FROM river_job WHERE kind = $1 AND args->>'event' = $2 AND (args->>'booking_id')::bigint = $3`,
		booking.NotifyArgs{}.Kind(), event, id)
}

// TestLatePaymentIsNeverLeftHeld: a client pays long after the hold ended
// (past the two hours after which the saga used to write an unpaid payment
// off by its own clock), with a 15-minute and a 3-hour hold. The payment
// is rebooked and captured when the time is free, released when it is
// taken, and the client is told either way; the provider holds nothing.
func TestLatePaymentIsNeverLeftHeld(t *testing.T) {
	t.Parallel()
	for _, hold := range []int{15, 180} {
		t.Run(fmt.Sprintf("hold %d min", hold), func(t *testing.T) {
			t.Parallel()
			w := newPayWorld(t, booking.RefundAlways)
			ctx := bookingtest.System()
			if _, err := w.Pool.Exec(ctx, `UPDATE salons SET hold_min = $2 WHERE id = $1`, w.salon.ID, hold); err != nil {
				t.Fatal(err)
			}
			day := w.day.AddDays(2)
			w.Shift(t, w.salon, w.master, day, 1, "10:00", "20:00")
			free, taken := w.bookFrom(7001, day, "11:00"), w.bookFrom(7002, day, "15:00")
			sf, st := w.startFrom(7001, free), w.startFrom(7002, taken)
			// The sweep and the hold expiry run, every 10 s of the service's
			// clock, until well past the hold and two hours more.
			for end := w.Clock.Now().Add(time.Duration(hold)*time.Minute + 2*time.Hour + 10*time.Minute); w.Clock.Now().Before(end); {
				w.Clock.Advance(10 * time.Second)
				if _, err := w.Svc.ExpireHolds(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := w.Svc.SweepPayments(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if bs, ps := w.status(free.ID); bs != booking.StatusCancelled || ps != booking.PayRegistered {
				t.Fatalf("unpaid past the hold: booking %s, payment %s (want cancelled, and the payment still watched)", bs, ps)
			}
			if _, err := w.Svc.Book(booking.As(context.Background(), booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID,
				MasterID: w.master.ID, StartsAt: bookingtest.At(w.salon, day, "15:00"), Client: booking.ClientInput{Name: "Other", Phone: bookingtest.Phone()}}); err != nil {
				t.Fatal(err)
			}
			// Both pay now; the provider notifies.
			for _, s := range []*booking.PaymentSession{sf, st} {
				if !w.fake.Pay(s.ExternalID) {
					t.Fatalf("pay %s", s.ExternalID)
				}
				if _, err := w.Svc.PaymentNotified(ctx, "yookassa", s.ExternalID); err != nil {
					t.Fatal(err)
				}
			}
			if bs, ps := w.status(free.ID); bs != booking.StatusConfirmed || ps != booking.PayCompleted || w.fake.Status(sf.ExternalID) != "succeeded" {
				t.Errorf("paid late, the time free: booking %s, payment %s, provider %s (want confirmed, completed, succeeded)",
					bs, ps, w.fake.Status(sf.ExternalID))
			}
			// Booked again, it has no reason it was cancelled (the history
			// tells the hold's end).
			if n := w.count(`SELECT count(*) FROM bookings WHERE id = $1 AND cancel_reason <> ''`, free.ID); n != 0 {
				t.Errorf("the booking paid late and booked again still says why it was cancelled")
			}
			if bs, ps := w.status(taken.ID); bs != booking.StatusCancelled || ps != booking.PayCanceled || w.fake.Status(st.ExternalID) != "canceled" {
				t.Errorf("paid late, the time taken: booking %s, payment %s, provider %s (want cancelled, canceled, canceled)",
					bs, ps, w.fake.Status(st.ExternalID))
			}
			if w.told(free.ID, booking.EventPaid) != 1 || w.told(taken.ID, booking.EventRefunded) != 1 {
				t.Errorf("told %d times of the booking paid late, %d times of the money released (want 1 and 1)",
					w.told(free.ID, booking.EventPaid), w.told(taken.ID, booking.EventRefunded))
			}
			// Again, the same notification: nothing more moves, nobody is told twice.
			for _, s := range []*booking.PaymentSession{sf, st} {
				if _, err := w.Svc.PaymentNotified(ctx, "yookassa", s.ExternalID); err != nil {
					t.Fatal(err)
				}
			}
			if w.told(taken.ID, booking.EventRefunded) != 1 || w.count(`SELECT count(*) FROM ledger_entries`) != 1 {
				t.Errorf("a repeated notification: told %d times, %d ledger entries", w.told(taken.ID, booking.EventRefunded),
					w.count(`SELECT count(*) FROM ledger_entries`))
			}
		})
	}
}

// TestAWrittenOffPaymentStillCounts: a payment still pending a day after
// its hold is written off; when the provider authorizes it after all, its
// notification settles it (here: released, the booking long gone).
func TestAWrittenOffPaymentStillCounts(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	b := w.bookFrom(7003, w.day, "12:00")
	s := w.startFrom(7003, b)
	w.Clock.Advance(20 * time.Minute)
	if _, err := w.Svc.ExpireHolds(ctx); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(25 * time.Hour)
	if _, err := w.Svc.SweepPayments(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ps := w.status(b.ID); ps != booking.PayFailed {
		t.Fatalf("a day after the hold, still unpaid: %s, want failed", ps)
	}
	w.fake.Pay(s.ExternalID)
	if _, err := w.Svc.PaymentNotified(ctx, "yookassa", s.ExternalID); err != nil {
		t.Fatal(err)
	}
	bs, ps := w.status(b.ID)
	if ps == booking.PayFailed || w.fake.Status(s.ExternalID) == "waiting_for_capture" {
		t.Errorf("authorized after the write-off: booking %s, payment %s, provider %s: the money is held", bs, ps, w.fake.Status(s.ExternalID))
	}
}

// TestSweepServesMoneyInFlightFirst: 200 sessions wait for their clients,
// and a refund's first call failed: the refund completes within two
// sweeps, and the waiting sessions are asked about less and less often
// (the provider's GETs per waiting session over an hour of sweeps are
// bounded by the backoff).
func TestSweepServesMoneyInFlightFirst(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	const waiting = 200
	var masters []*booking.Master
	for range waiting/10 + 1 {
		m := w.Master(t, w.salon, w.svc)
		w.Shift(t, w.salon, m, w.day, 1, "10:00", "20:00")
		masters = append(masters, m)
	}
	var all []*booking.Booking
	for i := range waiting + 1 {
		b, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID,
			MasterID: masters[i/10].ID, StartsAt: bookingtest.At(w.salon, w.day, fmt.Sprintf("%02d:00", 10+i%10)),
			Client: booking.ClientInput{Name: "Client", Phone: bookingtest.Phone()}})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b)
	}
	// The last one pays and cancels; its refund's first call fails.
	paidB := all[waiting]
	var refundCalls atomic.Int32
	w.fake.Fault = func(method, path string) psptest.Fault {
		if path == "POST /refunds" && refundCalls.Add(1) == 1 {
			return psptest.Error
		}
		return psptest.None
	}
	w.paid(paidB)
	// The others open their payment pages and leave them.
	for _, b := range all[:waiting] {
		w.start(b)
	}
	w.Clock.Advance(time.Minute) // every waiting session is due
	if _, err := w.Svc.Cancel(booking.As(context.Background(), booking.ByToken(paidB.ManageToken)), booking.CancelRequest{BookingID: paidB.ID}); err != nil {
		t.Fatal(err)
	}
	if _, ps := w.status(paidB.ID); ps != booking.PayRefunding {
		t.Fatalf("after the failed refund call: %s", ps)
	}
	sweeps := 0
	for ; sweeps < 2; sweeps++ {
		w.Clock.Advance(10 * time.Second)
		if _, err := w.Svc.SweepPayments(ctx); err != nil {
			t.Fatal(err)
		}
		if _, ps := w.status(paidB.ID); ps == booking.PayRefunded {
			break
		}
	}
	if _, ps := w.status(paidB.ID); ps != booking.PayRefunded {
		t.Errorf("after two sweeps the refund is %s, want refunded", ps)
	}
	// An hour of sweeps, every 10 s.
	gets := w.fake.Calls("GET /payments/{id}")
	for range 360 {
		w.Clock.Advance(10 * time.Second)
		if _, err := w.Svc.SweepPayments(ctx); err != nil {
			t.Fatal(err)
		}
	}
	perHour := float64(w.fake.Calls("GET /payments/{id}")-gets) / waiting
	t.Logf("refunded after %d sweep(s) among %d waiting sessions; %.1f provider GETs per waiting session in an hour of sweeps every 10 s",
		sweeps+1, waiting, perHour)
	if perHour > 10 {
		t.Errorf("%.1f GETs per waiting session an hour, want at most 10 (the backoff)", perHour)
	}
}

// TestASweepersLeaseCoversItsWork: while one sweeper works slowly through
// the due sessions (each provider call slow), another sweeps after more
// than the old 30 s batch lease: no session is checked by both.
func TestASweepersLeaseCoversItsWork(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	var sessions []*booking.PaymentSession
	for _, hhmm := range []string{"10:00", "11:00", "12:00", "13:00", "14:00", "15:00"} {
		sessions = append(sessions, w.start(w.book(hhmm)))
	}
	w.Clock.Advance(time.Minute)
	var mu sync.Mutex
	slow := true
	w.fake.Delay = 300 * time.Millisecond
	w.fake.Fault = func(method, path string) psptest.Fault {
		mu.Lock()
		defer mu.Unlock()
		if slow && path == "GET /payments/{id}" {
			return psptest.Slow
		}
		return psptest.None
	}
	gets := w.fake.Calls("GET /payments/{id}")
	other := booking.New(w.Pool, booking.WithClock(w.Clock.Now), booking.WithPayments(w.yk), booking.WithProviderAttempts(1))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := w.Svc.SweepPayments(ctx); err != nil {
			t.Error(err)
		}
	}()
	// The first sweeper is on its first session; the service's clock runs
	// on past the old lease, and the second sweeper sweeps.
	bookingtest.WaitFor(t, 5*time.Second, "the first sweeper at work", func() bool { return w.fake.Calls("GET /payments/{id}") > gets })
	w.Clock.Advance(45 * time.Second)
	if _, err := other.SweepPayments(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	if n := w.fake.Calls("GET /payments/{id}") - gets; n != len(sessions) {
		t.Errorf("%d GETs for %d due sessions: a lease ran out under a session being checked", n, len(sessions))
	}
}

// TestLatePaymentTakesLocksInOrder: a late payment (which books the slot
// again) takes the master's lock before the booking's row, as a
// cancellation does: while a cancellation of the master holds the
// master's lock, the webhook waits for it holding no row, so the
// cancellation can still take the booking's row (the other order is a
// deadlock, found after a second and retried).
func TestLatePaymentTakesLocksInOrder(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	b := w.book("10:00")
	s := w.start(b)
	w.Clock.Advance(20 * time.Minute)
	if _, err := w.Svc.ExpireHolds(ctx); err != nil {
		t.Fatal(err)
	}
	w.fake.Pay(s.ExternalID)
	// A cancellation holds the master's lock.
	canceller, err := w.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer canceller.Rollback(ctx) //nolint:errcheck
	if _, err := canceller.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('booking-master:' || $1::bigint, 0))`, w.master.ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := w.Svc.PaymentNotified(ctx, "yookassa", s.ExternalID)
		done <- err
	}()
	bookingtest.WaitFor(t, 5*time.Second, "the webhook waiting for the master's lock", func() bool {
		return w.count(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
				AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`) > 0
	})
	// The cancellation goes on to the booking's row: free.
	if _, err := canceller.Exec(ctx, `SELECT 1 FROM bookings WHERE id = $1 FOR UPDATE NOWAIT`, b.ID); err != nil {
		t.Errorf("the webhook waits for the master's lock holding the booking's row (%v): the other order than a cancellation's", err)
	}
	if err := canceller.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if bs, ps := w.status(b.ID); bs != booking.StatusConfirmed || ps != booking.PayCompleted {
		t.Errorf("then: booking %s, payment %s", bs, ps)
	}
}

// TestPaymentNoticeIsWrittenWithTheChange: the notice of a paid deposit is
// written in the transaction that confirms the booking: when it cannot be
// written, nothing changes (and the next check does both).
func TestPaymentNoticeIsWrittenWithTheChange(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	b := w.bookFrom(7004, w.day, "13:00")
	s := w.startFrom(7004, b)
	w.fake.Pay(s.ExternalID)
	// The notice cannot be written for now.
	for _, q := range []string{
		`CREATE FUNCTION no_notices() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no notices now'; END $$`,
		`CREATE TRIGGER no_notices BEFORE INSERT ON river_job FOR EACH ROW WHEN (NEW.kind = 'booking_notify') EXECUTE FUNCTION no_notices()`,
	} {
		if _, err := w.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = w.Svc.CheckPayment(ctx, s.ID)
	bs, _ := w.status(b.ID)
	if told := w.told(b.ID, booking.EventPaid); bs == booking.StatusConfirmed && told == 0 {
		t.Fatalf("the booking is confirmed and nobody will be told")
	}
	if _, err := w.Pool.Exec(ctx, `DROP TRIGGER no_notices ON river_job`); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.CheckPayment(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if bs, ps := w.status(b.ID); bs != booking.StatusConfirmed || ps != booking.PayCompleted || w.told(b.ID, booking.EventPaid) != 1 {
		t.Errorf("then: booking %s, payment %s, told %d times", bs, ps, w.told(b.ID, booking.EventPaid))
	}
}

// TestOneDepositABooking: even written by hand, a booking receives its
// deposit once, whichever session would bring a second.
func TestOneDepositABooking(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	b := w.book("14:00")
	s := w.paid(b)
	var other int64
	if err := w.Pool.QueryRow(ctx, `INSERT INTO payment_sessions (salon_id, booking_id, provider, status, amount, currency,
		idempotence_key, hold_until) VALUES ($1, $2, 'yookassa', 'completed', 1000, 'RUB', 'by-hand', now()) RETURNING id`,
		w.salon.ID, b.ID).Scan(&other); err != nil {
		t.Fatal(err)
	}
	_, err := w.Pool.Exec(ctx, `INSERT INTO ledger_entries (salon_id, booking_id, payment_session_id, entry_type, amount, currency)
		VALUES ($1, $2, $3, 'deposit_received', 1000, 'RUB')`, w.salon.ID, b.ID, other)
	if err == nil {
		t.Fatalf("a second deposit_received for booking %d (first by session %d) was written", b.ID, s.ID)
	}
	if !strings.Contains(err.Error(), "ledger_one_deposit") || w.count(`SELECT count(*) FROM ledger_entries WHERE booking_id = $1`, b.ID) != 1 {
		t.Errorf("a second deposit refused for another reason: %v", err)
	}
}

// TestReconciliationFindsWhatWasLost: the provider's own list shows what
// no notification and no check told us: a payment authorized after its
// session was written off (its notification lost), and a payment created
// by a create whose process died before it recorded the answer. Each is
// settled by the saga's rules (released; registered), with an audit row;
// a second pass finds nothing more.
func TestReconciliationFindsWhatWasLost(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	gone := w.book("10:00")
	gs := w.start(gone)
	w.Clock.Advance(20 * time.Minute)
	if _, err := w.Svc.ExpireHolds(ctx); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(25 * time.Hour)
	if _, err := w.Svc.SweepPayments(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ps := w.status(gone.ID); ps != booking.PayFailed {
		t.Fatalf("written off: %s", ps)
	}
	w.fake.Pay(gs.ExternalID) // and its notification never comes

	// A create reached the provider; its process died before recording it.
	w.Shift(t, w.salon, w.master, w.day.AddDays(1), 1, "10:00", "20:00")
	crashed := w.bookFrom(7010, w.day.AddDays(1), "11:00")
	var lost atomic.Bool
	lost.Store(true)
	w.fake.Fault = func(method, path string) psptest.Fault {
		if path == "POST /payments" && lost.Swap(false) {
			return psptest.Lost
		}
		return psptest.None
	}
	if _, err := w.Svc.StartPayment(booking.As(context.Background(), booking.ByIdentity(booking.TelegramUser(7010))), crashed.ID, nil); err == nil {
		t.Fatal("the lost create answered")
	}
	if _, ps := w.status(crashed.ID); ps != booking.PayUnknown {
		t.Fatalf("after the lost create: %s", ps)
	}

	r, err := w.Svc.ReconcilePayments(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reconciliation: %+v", r)
	if st := w.fake.Status(gs.ExternalID); st != "canceled" {
		t.Errorf("authorized after the write-off, found by reconciliation: the provider's payment is %s, want canceled (released)", st)
	}
	if _, ps := w.status(crashed.ID); ps != booking.PayRegistered || w.fake.Payments() != 2 {
		t.Errorf("the lost create: session %s, %d payments at the provider (want registered, 2)", ps, w.fake.Payments())
	}
	if n := w.count(`SELECT count(*) FROM audit_log WHERE action = 'payment_reconciled'`); n != 2 || r.Settled != 2 {
		t.Errorf("%d audit rows, %d settled (want 2 and 2)", n, r.Settled)
	}
	again, err := w.Svc.ReconcilePayments(ctx)
	if err != nil || again.Checked != 0 {
		t.Errorf("a second pass: %+v %v (want nothing to check)", again, err)
	}
}

// TestReceiptsYooKassaWouldAccept: with receipts on, the payment is
// created with its receipt (the client's phone, the salon's tax system and
// name for the service, a partial prepayment at the calculated rate of the
// salon's VAT), the refund carries its line, and a visit completed after
// its deposit was paid gets one settlement receipt (the nominal VAT),
// however many sweeps run. The fake YooKassa refuses any that YooKassa
// would.
func TestReceiptsYooKassaWouldAccept(t *testing.T) {
	t.Parallel()
	fake := psptest.New(t)
	fake.RequireReceipts = true
	w := newPayWorldOn(t, fake, booking.RefundAlways, booking.WithReceipts())
	e := w.Env
	ctx := bookingtest.System()
	if err := e.Svc.SetReceiptSettings(ctx, w.salon.ID, booking.ReceiptSettings{VatCode: 4, TaxSystem: 2, Item: "Окрашивание волос"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Svc.SetReceiptSettings(ctx, w.salon.ID, booking.ReceiptSettings{VatCode: 40}); err == nil {
		t.Error("a VAT code YooKassa does not know was taken")
	}

	refunded := w.book("10:00")
	w.paid(refunded)
	if _, err := e.Svc.Cancel(booking.As(context.Background(), booking.ByToken(refunded.ManageToken)), booking.CancelRequest{BookingID: refunded.ID}); err != nil {
		t.Fatal(err)
	}
	visited := w.book("12:00")
	w.paid(visited)
	if bs, ps := w.status(visited.ID); bs != booking.StatusConfirmed || ps != booking.PayCompleted {
		t.Fatalf("paid with a receipt: %s %s", bs, ps)
	}
	// The visit happens; the day after, it is completed, and the sweeps run.
	w.Clock.Advance(3 * 24 * time.Hour)
	if _, err := e.Svc.CompletePast(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := e.Svc.SweepPayments(ctx); err != nil {
			t.Fatal(err)
		}
	}
	kinds := map[string]int{}
	for _, r := range fake.Receipts() {
		kinds[r.Kind]++
		items, _ := r.Body["items"].([]any)
		item, _ := items[0].(map[string]any)
		customer, _ := r.Body["customer"].(map[string]any)
		t.Logf("%s receipt for %s: customer %v, item %v, tax system %v", r.Kind, r.PaymentID, customer, item, r.Body["tax_system_code"])
		// The salon's 20% (code 4) is the settlement's; a prepayment and
		// its refund carry its calculated rate, 20/120 (code 6).
		vat := map[string]float64{"payment": 6, "refund": 6, "settlement": 4}[r.Kind]
		if item["description"] != "Окрашивание волос" || item["vat_code"] != vat || r.Body["tax_system_code"] != float64(2) {
			t.Errorf("%s receipt: %v (want VAT code %v)", r.Kind, r.Body, vat)
		}
		want := map[string]string{"payment": "partial_prepayment", "refund": "partial_prepayment", "settlement": "full_payment"}[r.Kind]
		if item["payment_mode"] != want {
			t.Errorf("%s receipt's payment_mode %v, want %s", r.Kind, item["payment_mode"], want)
		}
	}
	if kinds["payment"] != 2 || kinds["refund"] != 1 || kinds["settlement"] != 1 {
		t.Errorf("receipts %v, want 2 payments, 1 refund, 1 settlement", kinds)
	}
	if c, r := fake.Totals(); c != 200000 || r != 100000 {
		t.Errorf("captured %d, refunded %d", c, r)
	}
}

// TestPaymentsDownFollowsTheSalon: after five provider calls in a row go
// unanswered, a new deposit booking does not wait for the provider: the
// salon that refuses meanwhile answers at once "online payment is down"
// (nothing booked); the one that takes the deposit in the salon books it
// confirmed, so noted. Once the provider answers again it is over.
func TestPaymentsDownFollowsTheSalon(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	var down atomic.Bool
	down.Store(true)
	w.fake.Fault = func(method, path string) psptest.Fault {
		if down.Load() {
			return psptest.Error
		}
		return psptest.None
	}
	for i := range 5 {
		b := w.book(fmt.Sprintf("%02d:00", 10+i))
		if _, err := w.Svc.StartPayment(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID, nil); !errors.Is(err, booking.ErrUnavailable) {
			t.Fatalf("start %d: %v", i, err)
		}
	}
	if !w.Svc.PaymentsDown() {
		t.Fatal("five unanswered calls in a row, and payments are not down")
	}
	req := func(hhmm string) booking.BookRequest {
		return booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID, StartsAt: bookingtest.At(w.salon, w.day, hhmm),
			Client: booking.ClientInput{Name: "Client", Phone: bookingtest.Phone()}}
	}
	calls := w.fake.Calls("POST /payments")
	start := time.Now()
	if _, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), req("16:00")); !errors.Is(err, booking.ErrPaymentsDown) || !errors.Is(err, booking.ErrUnavailable) {
		t.Errorf("a deposit booking while payments are down, the salon refusing: %v", err)
	}
	if took := time.Since(start); took > time.Second || w.fake.Calls("POST /payments") != calls {
		t.Errorf("refused after %v and %d provider calls", took, w.fake.Calls("POST /payments")-calls)
	}
	if _, err := w.Pool.Exec(ctx, `UPDATE salons SET deposit_fallback = 'in_salon' WHERE id = $1`, w.salon.ID); err != nil {
		t.Fatal(err)
	}
	b, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), req("16:00"))
	if err != nil || b.Status != booking.StatusConfirmed || !strings.Contains(b.Notes, "Deposit due in the salon") {
		t.Fatalf("the salon taking deposits in the salon meanwhile: %+v %v", b, err)
	}
	// The provider answers again; after the pause, the first answer ends it.
	down.Store(false)
	w.Clock.Advance(31 * time.Second)
	if _, err := w.Svc.SweepPayments(ctx); err != nil {
		t.Fatal(err)
	}
	if w.Svc.PaymentsDown() {
		t.Fatal("the provider answers, and payments are still down")
	}
	if b := w.book("18:00"); b.Status != booking.StatusPending {
		t.Errorf("after recovery: %s", b.Status)
	}
}

// TestPolicyKeepsADepositNotYetCaptured: under a policy that keeps
// deposits, a client who cancels while their payment is authorized but its
// capture keeps failing does not get it released: it is captured when the
// provider answers, as it would have been a moment later.
func TestPolicyKeepsADepositNotYetCaptured(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundNever)
	ctx := bookingtest.System()
	var captureDown atomic.Bool
	captureDown.Store(true)
	w.fake.Fault = func(method, path string) psptest.Fault {
		if captureDown.Load() && path == "POST /payments/{id}/capture" {
			return psptest.Error
		}
		return psptest.None
	}
	b := w.book("11:00")
	s := w.start(b)
	w.fake.Pay(s.ExternalID)
	_, _ = w.Svc.CheckPayment(ctx, s.ID)
	if bs, ps := w.status(b.ID); bs != booking.StatusConfirmed || ps != booking.PayAuthorized {
		t.Fatalf("paid, the capture failing: %s %s", bs, ps)
	}
	if _, err := w.Svc.Cancel(booking.As(context.Background(), booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	captureDown.Store(false)
	w.Clock.Advance(time.Minute)
	if _, err := w.Svc.SweepPayments(ctx); err != nil {
		t.Fatal(err)
	}
	if st := w.fake.Status(s.ExternalID); st != "succeeded" {
		t.Errorf("kept by the policy: the provider's payment is %s, want succeeded (captured)", st)
	}
	if bs, ps := w.status(b.ID); bs != booking.StatusCancelled || ps != booking.PayCompleted ||
		w.count(`SELECT count(*) FROM ledger_entries WHERE booking_id = $1 AND entry_type = 'deposit_received'`, b.ID) != 1 {
		t.Errorf("kept by the policy: booking %s, payment %s", bs, ps)
	}
}

// TestARefundIsDoneWhenTheProviderSaysSo: a refund the provider answers
// "pending" is not recorded as made: the session stays refunding, and
// the ledger has no refund, until the provider says it succeeded.
func TestARefundIsDoneWhenTheProviderSaysSo(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	b := w.book("11:00")
	w.paid(b)
	w.fake.RefundsPending = true
	if _, err := w.Svc.Cancel(booking.As(context.Background(), booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	if _, ps := w.status(b.ID); ps != booking.PayRefunding || w.count(`SELECT count(*) FROM ledger_entries WHERE entry_type = 'deposit_refunded'`) != 0 {
		t.Fatalf("a pending refund: payment %s, %d refund entries", ps, w.count(`SELECT count(*) FROM ledger_entries WHERE entry_type = 'deposit_refunded'`))
	}
	w.fake.SettleRefunds()
	w.Clock.Advance(time.Minute)
	if _, err := w.Svc.SweepPayments(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ps := w.status(b.ID); ps != booking.PayRefunded || w.count(`SELECT count(*) FROM ledger_entries WHERE entry_type = 'deposit_refunded'`) != 1 {
		t.Errorf("the refund made: payment %s", ps)
	}
	if _, refunded := w.fake.Totals(); refunded != 100000 {
		t.Errorf("refunded %d at the provider (once)", refunded)
	}
}

// TestAMoveRepricesTheDeposit: the service's deposit is lowered after a
// client paid; moving the booking to another master takes the new terms
// and refunds the difference. Raised instead, the move asks no more than
// was paid.
func TestAMoveRepricesTheDeposit(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	other := w.anotherMaster()
	move := func(b *booking.Booking, to int64, hhmm string) *booking.Booking {
		out, err := w.Svc.Reschedule(booking.As(context.Background(), booking.ByToken(b.ManageToken)), booking.RescheduleRequest{BookingID: b.ID,
			MasterID: to, StartsAt: bookingtest.At(w.salon, w.day, hhmm)})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	cheaper := w.book("11:00")
	w.paid(cheaper)
	dearer := w.book("13:00")
	w.paid(dearer)

	w.setDeposit(40000)
	moved := move(cheaper, other.ID, "15:00")
	if moved.Deposit != 40000 {
		t.Errorf("moved to a smaller deposit: the booking asks %s", moved.Deposit)
	}
	if _, refunded := w.fake.Totals(); refunded != 60000 {
		t.Errorf("refunded %d, want the difference, 60000", refunded)
	}
	w.setDeposit(150000)
	salon := *w.salon
	salon.DepositTopUp = booking.TopUpSalon // (TopUpOnline: TestAMoveTopsUpTheDeposit)
	if _, err := w.Svc.UpdateSalon(ctx, salon); err != nil {
		t.Fatal(err)
	}
	if moved := move(dearer, other.ID, "17:00"); moved.Deposit != 100000 {
		t.Errorf("moved to a larger deposit, the rest paid at the visit: the booking asks %s, want the 1000 paid", moved.Deposit)
	}
	if bs, _ := w.status(dearer.ID); bs != booking.StatusConfirmed {
		t.Errorf("moved to a larger deposit: %s", bs)
	}
}

// TestAClientsPageAsksTheProviderRarely: a client's page read again and
// again (or by anyone holding its link) asks the provider about the
// payment at most once every few seconds.
func TestAClientsPageAsksTheProviderRarely(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b := w.book("11:00")
	w.start(b)
	w.Clock.Advance(time.Minute)
	gets := w.fake.Calls("GET /payments/{id}")
	for range 20 {
		if _, err := w.Svc.PaymentOf(booking.As(context.Background(), booking.ByToken(b.ManageToken)), 0, b.ID, true); err != nil {
			t.Fatal(err)
		}
	}
	w.Clock.Advance(4 * time.Second)
	if _, err := w.Svc.PaymentOf(booking.As(context.Background(), booking.ByToken(b.ManageToken)), 0, b.ID, true); err != nil {
		t.Fatal(err)
	}
	if n := w.fake.Calls("GET /payments/{id}") - gets; n != 2 {
		t.Errorf("21 reads of the page over 4 s: %d provider GETs, want 2", n)
	}
}

// TestARefusedSettlementIsAskedOnce: a settlement receipt the provider
// refuses is not sent again at every sweep (holding the others up): staff
// see it among what needs attention.
func TestARefusedSettlementIsAskedOnce(t *testing.T) {
	t.Parallel()
	fake := psptest.New(t)
	fake.Fault = func(method, path string) psptest.Fault {
		if path == "POST /receipts" {
			return psptest.Reject
		}
		return psptest.None
	}
	w := newPayWorldOn(t, fake, booking.RefundAlways, booking.WithReceipts())
	e := w.Env
	ctx := bookingtest.System()
	b := w.book("12:00")
	w.paid(b)
	w.Clock.Advance(3 * 24 * time.Hour)
	if _, err := e.Svc.CompletePast(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := e.Svc.SweepPayments(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := fake.Calls("POST /receipts"); n != 1 {
		t.Errorf("a refused settlement receipt was sent %d times over 3 sweeps, want 1", n)
	}
	items, err := e.Svc.Attention(ctx, w.salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Kind != booking.AttentionReceipt {
		t.Errorf("attention: %+v, want the refused receipt", items)
	}
}

// TestDepositSettlementsAreSentOnceBySweepsAtOnce: three visits whose
// deposits were paid with receipts, completed; four sweeps at once (four
// replicas) against a provider slow to take receipts, then another: each
// settlement receipt reaches the provider once.
func TestDepositSettlementsAreSentOnceBySweepsAtOnce(t *testing.T) {
	t.Parallel()
	fake := psptest.New(t)
	fake.Delay = 200 * time.Millisecond
	fake.Fault = func(method, path string) psptest.Fault {
		if path == "POST /receipts" {
			return psptest.Slow
		}
		return psptest.None
	}
	w := newPayWorldOn(t, fake, booking.RefundAlways, booking.WithReceipts())
	e := w.Env
	ctx := bookingtest.System()
	for _, hhmm := range []string{"10:00", "12:00", "14:00"} {
		w.paid(w.book(hhmm))
	}
	w.Clock.Advance(3 * 24 * time.Hour)
	if _, err := e.Svc.CompletePast(ctx); err != nil {
		t.Fatal(err)
	}
	bookingtest.Race(4, func(int) {
		if _, err := e.Svc.SweepPayments(ctx); err != nil {
			t.Error(err)
		}
	})
	if _, err := e.Svc.SweepPayments(ctx); err != nil {
		t.Fatal(err)
	}
	settled := 0
	for _, r := range fake.Receipts() {
		if r.Kind == "settlement" {
			settled++
		}
	}
	if n := fake.Calls("POST /receipts"); n != 3 || settled != 3 {
		t.Errorf("%d settlement receipts sent for 3 visits (%d taken), want each once", n, settled)
	}
}

// TestAFloodOfNotificationsAsksTheProviderOnce: anyone may post a
// payment's notification (its id is in the payment page's address), and
// each had us ask the provider, on the salon's quota there. Fifty at once
// ask it once; the real one just after waits for the sweep, within a few
// seconds, and is not lost.
func TestAFloodOfNotificationsAsksTheProviderOnce(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	b := w.book("12:00")
	s := w.start(b)
	before := w.fake.Calls("GET /payments/{id}")
	bookingtest.Race(50, func(int) {
		if _, err := w.Svc.PaymentNotified(booking.As(context.Background(), booking.Visitor()), "yookassa", s.ExternalID); err != nil {
			t.Error(err)
		}
	})
	if n := w.fake.Calls("GET /payments/{id}") - before; n != 1 {
		t.Errorf("fifty notifications at once asked the provider %d times, want 1", n)
	}
	// The client pays; the real notification comes a second later.
	w.Clock.Advance(time.Second)
	if !w.fake.Pay(s.ExternalID) {
		t.Fatal("pay")
	}
	if _, err := w.Svc.PaymentNotified(ctx, "yookassa", s.ExternalID); err != nil {
		t.Fatal(err)
	}
	if bs, _ := w.status(b.ID); bs != booking.StatusPending {
		t.Errorf("a notification within the seconds of the last asked: booking %s, want pending until the sweep", bs)
	}
	w.Clock.Advance(2 * time.Second)
	if _, err := w.Svc.SweepPayments(ctx); err != nil {
		t.Fatal(err)
	}
	if bs, ps := w.status(b.ID); bs != booking.StatusConfirmed || ps != booking.PayCompleted {
		t.Errorf("the sweep after the notification put off: booking %s, payment %s, want confirmed and completed", bs, ps)
	}
}
