package booking_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
)

// staff is an admin of the world's salon asking.
func (w *payWorld) staff() context.Context {
	return booking.As(context.Background(), booking.ByStaff(booking.User{ID: 1, SalonID: w.salon.ID, Role: booking.RoleAdmin,
		Email: "admin@salon.test"}))
}

// setDeposit makes the world's service ask deposit d.
func (w *payWorld) setDeposit(d booking.Money) {
	w.t.Helper()
	if _, err := w.Svc.UpdateService(bookingtest.System(), w.salon.ID, booking.SalonService{ID: w.svc.ID, Name: w.svc.Name,
		DurationMin: w.svc.DurationMin, Price: w.svc.Price, Deposit: d, Active: true}); err != nil {
		w.t.Fatal(err)
	}
}

// anotherMaster is a master more who does the world's service all its day.
func (w *payWorld) anotherMaster() *booking.Master {
	w.t.Helper()
	m := w.Master(w.t, w.salon, w.svc)
	w.Shift(w.t, w.salon, m, w.day, 1, "10:00", "20:00")
	return m
}

// sweep runs n sweeps of the payments due, each after the checks' backoff.
func (w *payWorld) sweep(n int) {
	w.t.Helper()
	for range n {
		w.Clock.Advance(10 * time.Second)
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			w.t.Fatal(err)
		}
	}
}

// ledgerSums are a booking's ledger totals and rows.
func (w *payWorld) ledgerSums(id int64) (received, refunded booking.Money, rows int) {
	w.t.Helper()
	if err := w.Pool.QueryRow(context.Background(), `SELECT
		COALESCE(sum(amount) FILTER (WHERE entry_type = 'deposit_received'), 0),
		COALESCE(sum(amount) FILTER (WHERE entry_type = 'deposit_refunded'), 0), count(*)
		FROM ledger_entries WHERE booking_id = $1`, id).Scan(&received, &refunded, &rows); err != nil {
		w.t.Fatal(err)
	}
	return received, refunded, rows
}

// TestAMoveTopsUpTheDeposit: a paid booking moved to a master whose
// service asks a larger deposit owes the difference online; the client's
// next payment is of the difference (a payment of its own, with its own
// ledger row), the booking stays confirmed throughout, and a later
// cancellation refunds both payments: the provider then holds nothing.
func TestAMoveTopsUpTheDeposit(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	other := w.anotherMaster()
	const user = 4242 // a Telegram client: their chat hears of each change
	b := w.bookFrom(user, w.day, "11:00")
	p := w.startFrom(user, b)
	if !w.fake.Pay(p.ExternalID) {
		t.Fatal("pay")
	}
	if _, err := w.Svc.CheckPayment(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	w.setDeposit(150000)
	client := booking.As(context.Background(), booking.ByIdentity(booking.TelegramUser(user)))
	moved, err := w.Svc.Reschedule(w.staff(), booking.RescheduleRequest{BookingID: b.ID, MasterID: other.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "15:00")})
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.Svc.BookingView(client, 0, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if moved.Deposit != 150000 || v.DepositDue != 50000 || v.Status != booking.StatusConfirmed {
		t.Fatalf("moved to a larger deposit: deposit %s, due %s, %s; want 1500, 500 due, confirmed", moved.Deposit, v.DepositDue, v.Status)
	}
	if n := w.told(b.ID, booking.EventDepositDue); n != 1 {
		t.Errorf("the client was asked for the difference %d times, want 1", n)
	}

	top := w.startFrom(user, b)
	if top.Amount != 50000 || top.URL == "" {
		t.Fatalf("the top-up: %s, url %q; want 500 and a page to pay on", top.Amount, top.URL)
	}
	if again := w.startFrom(user, b); again.ID != top.ID {
		t.Errorf("asked again: session %d, want the same %d", again.ID, top.ID)
	}
	if !w.fake.Pay(top.ExternalID) {
		t.Fatal("pay the top-up")
	}
	if _, err := w.Svc.CheckPayment(ctx, top.ID); err != nil {
		t.Fatal(err)
	}
	if bs, ps := w.status(b.ID); bs != booking.StatusConfirmed || ps != booking.PayCompleted {
		t.Errorf("after the top-up: %s, %s; want confirmed, completed", bs, ps)
	}
	if v, _ = w.Svc.BookingView(client, 0, b.ID); v.DepositDue != 0 {
		t.Errorf("after the top-up %s is still due", v.DepositDue)
	}
	if n := w.told(b.ID, booking.EventTopUpPaid); n != 1 {
		t.Errorf("told of the top-up %d times, want 1", n)
	}
	captured, _ := w.fake.Totals()
	got, _, rows := w.ledgerSums(b.ID)
	if captured != 150000 || got != 150000 || rows != 2 {
		t.Errorf("the provider captured %d, the ledger received %s in %d rows; want 1500 in 2", captured, got, rows)
	}
	if p, err := w.Svc.StartPayment(client, b.ID, nil); err != nil || p.URL != "" {
		t.Errorf("nothing more is owed, yet StartPayment: %v, url %q", err, p.URL)
	}

	if _, err := w.Svc.Cancel(w.staff(), booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	w.sweep(3)
	_, back := w.fake.Totals()
	_, refunded, _ := w.ledgerSums(b.ID)
	if back != 150000 || refunded != 150000 {
		t.Errorf("cancelled: the provider refunded %d, the ledger %s; want both payments back, 1500", back, refunded)
	}
	// The client's chat hears of each refund, with its amount.
	amounts := w.count(`SELECT count(*) FROM river_job WHERE kind = $1 AND args->>'event' = $2 AND (args->>'booking_id')::bigint = $3
		AND (args->>'amount')::numeric IN (1000, 500)`, booking.NotifyArgs{}.Kind(), booking.EventRefunded, b.ID)
	if amounts != 2 {
		t.Errorf("%d refund notices with their amounts, want 2 (1000 and 500)", amounts)
	}
}

// TestAnUnpaidTopUpIsReleasedWithItsBooking: a top-up under way when the
// booking is cancelled is released, and the paid deposit refunded.
func TestAnUnpaidTopUpIsReleasedWithItsBooking(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	other := w.anotherMaster()
	b := w.book("11:00")
	w.paid(b)
	w.setDeposit(150000)
	client := booking.As(context.Background(), booking.ByToken(b.ManageToken))
	if _, err := w.Svc.Reschedule(client, booking.RescheduleRequest{BookingID: b.ID, MasterID: other.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "15:00")}); err != nil {
		t.Fatal(err)
	}
	top := w.start(b)
	if !w.fake.Pay(top.ExternalID) { // paid at the provider, not yet known here
		t.Fatal("pay")
	}
	if _, err := w.Svc.Cancel(client, booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	w.sweep(3)
	if held := w.fake.Held(); held != 0 {
		t.Errorf("the provider still holds %d for a cancelled booking", held)
	}
	captured, back := w.fake.Totals()
	if captured != 100000 || back != 100000 {
		t.Errorf("captured %d, refunded %d; want the deposit captured and refunded, the top-up released", captured, back)
	}
}

// TestRefundsInParts: staff refund part of a deposit, again, then the
// rest; each refund is its own at the provider and in the ledger, none
// more than is left, and a cancellation after a part refunds what is left.
func TestRefundsInParts(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	staff := w.staff()
	b := w.book("11:00")
	w.paid(b)
	for i, amount := range []booking.Money{30000, 30000} {
		s, err := w.Svc.RefundDepositPart(staff, w.salon.ID, b.ID, amount)
		if err != nil {
			t.Fatalf("refund %d: %v", i, err)
		}
		if s.Status != booking.PayCompleted || s.Refunded != booking.Money(30000*(i+1)) {
			t.Errorf("after refund %d: %s, %s refunded", i, s.Status, s.Refunded)
		}
	}
	if _, err := w.Svc.RefundDepositPart(staff, w.salon.ID, b.ID, 50000); !errors.Is(err, booking.ErrInvalid) {
		t.Errorf("500 of the 400 left: %v, want ErrInvalid", err)
	}
	// Cancelled: the policy refunds what is left.
	if _, err := w.Svc.Cancel(staff, booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	_, back := w.fake.Totals()
	_, refunded, rows := w.ledgerSums(b.ID)
	if back != 100000 || refunded != 100000 || rows != 4 {
		t.Errorf("the provider refunded %d, the ledger %s in %d rows; want 1000, in 1 + 3", back, refunded, rows)
	}
	if _, ps := w.status(b.ID); ps != booking.PayRefunded {
		t.Errorf("all of it back: the session is %s", ps)
	}
	if _, err := w.Svc.RefundDepositPart(staff, w.salon.ID, b.ID, 0); !errors.Is(err, booking.ErrConflict) {
		t.Errorf("nothing left, refund again: %v, want ErrConflict", err)
	}

	// What the ledger's keys refuse when written by hand.
	var session int64
	if err := w.Pool.QueryRow(context.Background(), `SELECT id FROM payment_sessions WHERE booking_id = $1`, b.ID).Scan(&session); err != nil {
		t.Fatal(err)
	}
	for what, sql := range map[string]string{
		"a second deposit": `INSERT INTO ledger_entries (salon_id, booking_id, payment_session_id, entry_type, amount, currency)
			VALUES ($1, $2, $3, 'deposit_received', 100, 'RUB')`,
		"a second first refund": `INSERT INTO ledger_entries (salon_id, booking_id, payment_session_id, entry_type, amount, currency)
			VALUES ($1, $2, $3, 'deposit_refunded', 100, 'RUB')`,
	} {
		if _, err := w.Pool.Exec(context.Background(), sql, w.salon.ID, b.ID, session); err == nil {
			t.Errorf("%s written by hand was let in", what)
		}
	}
}

// TestRefundsInPartsRace: 30 staff refunds of 100 of a 1000 deposit at
// once: the provider never refunds more than was paid, and the ledger
// equals what it refunded.
func TestRefundsInPartsRace(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	staff := w.staff()
	b := w.book("11:00")
	w.paid(b)
	var mu sync.Mutex
	errs := map[string]int{}
	bookingtest.Race(30, func(int) {
		_, err := w.Svc.RefundDepositPart(staff, w.salon.ID, b.ID, 10000)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			errs["ok"]++
		case errors.Is(err, booking.ErrConflict), errors.Is(err, booking.ErrInvalid):
			errs["refused"]++
		default:
			errs[err.Error()]++
		}
	})
	w.sweep(3)
	_, back := w.fake.Totals()
	_, refunded, _ := w.ledgerSums(b.ID)
	t.Logf("30 refunds of 100 at once: %v; the provider refunded %d, the ledger %s", errs, back, refunded)
	if back > 100000 || booking.Money(back) != refunded || errs["ok"] == 0 || errs["ok"]+errs["refused"] != 30 {
		t.Errorf("the provider refunded %d, the ledger %s, outcomes %v", back, refunded, errs)
	}
	if booking.Money(back) != booking.Money(errs["ok"]*10000) {
		t.Errorf("%d refunds accepted, %d refunded", errs["ok"], back)
	}
}

// TestARefundsLateAnswerRecordsOnlyItsOwn: a check whose answer for a
// session's first refund comes after that refund was recorded (by another
// path) and a second one begun records nothing: the second is still made.
func TestARefundsLateAnswerRecordsOnlyItsOwn(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b := w.book("11:00")
	s := w.paid(b)
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 20000); err != nil {
		t.Fatal(err)
	}
	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 30000); err != nil {
		t.Fatal(err)
	}
	part, err := booking.FinishRefund(context.Background(), w.Pool, s.ID, fmt.Sprintf("refund-%d", s.ID), w.Clock.Now())
	if err != nil || part != -1 {
		t.Errorf("the first refund's late answer recorded part %d (%v), want nothing", part, err)
	}
	w.fake.SettleRefunds()
	w.fake.RefundsPending = false
	w.sweep(2)
	_, back := w.fake.Totals()
	_, refunded, rows := w.ledgerSums(b.ID)
	if back != 50000 || refunded != 50000 || rows != 3 {
		t.Errorf("the provider refunded %d, the ledger %s in %d rows; want 500 in 1 + 2", back, refunded, rows)
	}
}

// TestCancelledDuringARefundRefundsTheRest: a booking cancelled while
// staff's refund of part of its deposit is under way has the rest refunded
// once that refund is made: nothing is kept that the policy gives back.
func TestCancelledDuringARefundRefundsTheRest(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b := w.book("11:00")
	w.paid(b)
	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 30000); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Cancel(booking.As(context.Background(), booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	w.fake.SettleRefunds()
	w.fake.RefundsPending = false
	w.sweep(3)
	_, back := w.fake.Totals()
	_, refunded, _ := w.ledgerSums(b.ID)
	if _, ps := w.status(b.ID); back != 100000 || refunded != 100000 || ps != booking.PayRefunded {
		t.Errorf("the provider refunded %d, the ledger %s, the session is %s; want all 1000 back, refunded", back, refunded, ps)
	}
}

// TestAMoveWhilePayingTheDifferenceKeepsWhatIsOwed: a booking moved again
// while the payment of the difference is under way owes what it owed; the
// difference paid in the salon is not asked again by a later move; and the
// difference cannot be recorded paid in the salon while its payment online
// is being captured.
func TestAMoveWhilePayingTheDifferenceKeepsWhatIsOwed(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	masters := []*booking.Master{w.master, w.anotherMaster(), w.anotherMaster(), w.anotherMaster()}
	move := func(b *booking.Booking, to *booking.Master, hhmm string) *booking.View {
		t.Helper()
		if _, err := w.Svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: b.ID, MasterID: to.ID, StartsAt: bookingtest.At(w.salon, w.day, hhmm)}); err != nil {
			t.Fatal(err)
		}
		v, err := w.Svc.BookingView(ctx, w.salon.ID, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	b := w.book("11:00")
	w.paid(b)
	w.setDeposit(150000)
	if v := move(b, masters[1], "12:00"); v.DepositDue != 50000 {
		t.Fatalf("owed %s, want 500", v.DepositDue)
	}
	top := w.start(b) // under way
	if v := move(b, masters[2], "13:00"); v.DepositDue != 50000 || v.Deposit != 150000 {
		t.Errorf("moved while paying the difference: deposit %s, owed %s; want 1500, 500", v.Deposit, v.DepositDue)
	}
	// Paid at the provider, its capture not answered yet.
	w.fake.Fault = func(method, path string) psptest.Fault {
		if path == "POST /payments/{id}/capture" {
			return psptest.Error
		}
		return psptest.None
	}
	w.fake.Pay(top.ExternalID)
	_, _ = w.Svc.CheckPayment(ctx, top.ID)
	if _, err := w.Svc.MarkDepositPaid(w.staff(), w.salon.ID, b.ID); !errors.Is(err, booking.ErrConflict) {
		t.Errorf("recorded paid in the salon while paid online: %v, want ErrConflict", err)
	}
	w.fake.Fault = nil
	w.sweep(2)
	if captured, _ := w.fake.Totals(); captured != 150000 {
		t.Fatalf("captured %d, want 1500", captured)
	}

	// Another booking: the difference paid in the salon, then a move to a
	// yet larger deposit asks only the new difference.
	w.setDeposit(100000)
	c := w.book("15:00")
	w.paid(c)
	w.setDeposit(150000)
	move(c, masters[1], "16:00")
	if _, err := w.Svc.MarkDepositPaid(w.staff(), w.salon.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	w.setDeposit(200000)
	if v := move(c, masters[3], "17:00"); v.DepositDue != 50000 {
		t.Errorf("after the difference paid in the salon, a move to 2000 owes %s, want 500", v.DepositDue)
	}
}

// TestADifferencePaidAfterTheVisitIsReleased: the difference a move asked,
// paid online only after the visit was marked, is not taken: the visit
// settled it.
func TestADifferencePaidAfterTheVisitIsReleased(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	other := w.anotherMaster()
	b := w.book("11:00")
	w.paid(b)
	w.setDeposit(150000)
	if _, err := w.Svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: b.ID, MasterID: other.ID, StartsAt: bookingtest.At(w.salon, w.day, "15:00")}); err != nil {
		t.Fatal(err)
	}
	top := w.start(b)
	w.Clock.Set(bookingtest.At(w.salon, w.day, "16:30"))
	if _, err := w.Svc.MarkCompleted(w.staff(), b.ID); err != nil {
		t.Fatal(err)
	}
	w.fake.Pay(top.ExternalID)
	_, _ = w.Svc.CheckPayment(ctx, top.ID)
	w.sweep(2)
	if captured, _ := w.fake.Totals(); captured != 100000 || w.fake.Held() != 0 {
		t.Errorf("captured %d, held %d; want the deposit only, nothing held", captured, w.fake.Held())
	}
}

// TestAPendingDepositRefundWhoseAnswersWereLostIsMadeOnce: a deposit's
// refund that reached the provider and is pending there, every answer to
// it lost for longer than the provider remembers its key, is found among
// the payment's refunds beyond the session's earlier one (the payment's
// refunded amount shows only that one: it counts only refunds that
// succeeded) and followed by its id, not asked again under a new key: one
// refund more at the provider, and the session refunded when it settles.
func TestAPendingDepositRefundWhoseAnswersWereLostIsMadeOnce(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	w.fake.Now = w.Clock.Now
	var lose atomic.Bool
	w.fake.Fault = func(_, path string) psptest.Fault {
		if lose.Load() && path == "POST /refunds" {
			return psptest.Lost
		}
		return psptest.None
	}
	later := func(d time.Duration) {
		t.Helper()
		w.Clock.Advance(d)
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Fatal(err)
		}
	}
	b := w.book("11:00")
	w.paid(b)
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 20000); err != nil {
		t.Fatal(err)
	}
	lose.Store(true)
	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundDeposit(w.staff(), w.salon.ID, b.ID); err != nil && !errors.Is(err, booking.ErrUnavailable) {
		t.Fatal(err)
	}
	later(time.Hour)
	posts := w.fake.Calls("POST /refunds")
	later(psp.KeyWindow)
	if n, more := w.fake.Refunds(), w.fake.Calls("POST /refunds")-posts; n != 2 || more != 0 {
		t.Fatalf("a day later: %d refunds at the provider (asked %d times more), want 2", n, more)
	}
	w.fake.SettleRefunds()
	later(time.Hour)
	_, back := w.fake.Totals()
	_, refunded, _ := w.ledgerSums(b.ID)
	if _, ps := w.status(b.ID); back != 100000 || refunded != 100000 || w.fake.Refunds() != 2 || ps != booking.PayRefunded {
		t.Fatalf("settled: the provider refunded %d in %d refunds, the ledger %s, the session %s; want 1000 in 2, refunded",
			back, w.fake.Refunds(), refunded, ps)
	}
}

// TestADepositRefundTheProviderCannotListIsLeftToAPerson: a deposit's
// refund asked under a key the provider has nearly forgotten, never
// answered, of a provider that lists no refunds is put before staff
// (Attention, saying why), not asked under a new key: it may be pending
// there, and a new key would make a second one.
func TestADepositRefundTheProviderCannotListIsLeftToAPerson(t *testing.T) {
	t.Parallel()
	w, b, s, posts := depositRefundLeftToAPerson(t)
	if _, ps := w.status(b.ID); ps != booking.PayRefunding || w.fake.Refunds() != 1 || w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("a day later: the session %s, %d refunds at the provider, asked %d times more", ps, w.fake.Refunds(),
			w.fake.Calls("POST /refunds")-posts)
	}
	items, err := w.Svc.Attention(w.staff(), w.salon.ID)
	if err != nil || len(items) != 1 || items[0].Session.ID != s.ID || items[0].Kind != booking.AttentionStuck || !items[0].RefundLeft ||
		!strings.Contains(items[0].Session.LastError, "lists no refunds") {
		t.Fatalf("attention: %+v, %v", items, err)
	}
}

// depositRefundLeftToAPerson is a paid deposit's refund asked of a
// provider that lists no refunds, made there (pending) but every answer
// to it lost, a day and an hour later: left to a person by the checks. It
// returns the POSTs of refunds made until the key's end.
func depositRefundLeftToAPerson(t *testing.T) (*payWorld, *booking.Booking, *booking.PaymentSession, int) {
	t.Helper()
	fake := psptest.New(t)
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	w := newPayWorldOn(t, fake, booking.RefundAlways, booking.WithPayments(unlisted{yk}), booking.WithProviderAttempts(1))
	w.fake.Now = w.Clock.Now
	var lose atomic.Bool
	w.fake.Fault = func(_, path string) psptest.Fault {
		if lose.Load() && path == "POST /refunds" {
			return psptest.Lost
		}
		return psptest.None
	}
	b := w.bookFrom(7001, w.day, "11:00") // (a Telegram client: told of the refund)
	s := w.paidFrom(7001, b)
	lose.Store(true)
	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundDeposit(w.staff(), w.salon.ID, b.ID); err != nil && !errors.Is(err, booking.ErrUnavailable) {
		t.Fatal(err)
	}
	posts := w.fake.Calls("POST /refunds")
	for _, d := range []time.Duration{psp.KeyWindow, time.Hour} {
		w.Clock.Advance(d)
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Fatal(err)
		}
	}
	return w, b, s, posts
}

// TestADepositRefundLeftToAPersonIsRecordedWhenStaffFindItMade: staff who
// find at the provider the refund the checks left to them record it as
// made, once it succeeded there (pending, it is refused). Nothing is asked of the provider again; the ledger's refund and
// the client's message are written once; the session is refunded, off
// Attention, its history and the audit log saying who recorded it. Said
// again, it is refused, and a day of checks asks nothing more.
func TestADepositRefundLeftToAPersonIsRecordedWhenStaffFindItMade(t *testing.T) {
	t.Parallel()
	w, b, s, posts := depositRefundLeftToAPerson(t)
	// Still pending at the provider: not what staff may record.
	if _, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, s.ID); !errors.Is(err, booking.ErrConflict) ||
		!strings.Contains(err.Error(), "not succeeded there") {
		t.Fatalf("pending at the provider, recorded: %v, want a conflict", err)
	}
	w.fake.SettleRefunds()
	got, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, s.ID)
	if err != nil || got.Status != booking.PayRefunded {
		t.Fatalf("recorded: %+v, %v", got, err)
	}
	_, refunded, rows := w.ledgerSums(b.ID)
	if refunded != 100000 || rows != 2 || w.told(b.ID, booking.EventRefunded) != 1 {
		t.Fatalf("the ledger refunded %s in %d rows, the client told %d times; want 1000, 2 rows, once", refunded, rows,
			w.told(b.ID, booking.EventRefunded))
	}
	if items, err := w.Svc.Attention(w.staff(), w.salon.ID); err != nil || len(items) != 0 {
		t.Fatalf("attention once recorded: %+v, %v", items, err)
	}
	if n := w.count(`SELECT count(*) FROM audit_log WHERE action = 'payment_refund_recorded' AND entity_id = $1
		AND actor = 'admin@salon.test' AND new->>'status' = 'refunded'`, s.ID); n != 1 {
		t.Fatalf("%d audit rows of the record, want 1", n)
	}
	if n := w.count(`SELECT count(*) FROM payment_events WHERE session_id = $1 AND to_status = 'refunded' AND detail LIKE '%salon found%'`, s.ID); n != 1 {
		t.Fatalf("%d history events of the record, want 1", n)
	}
	if _, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, s.ID); !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("recorded again: %v, want a conflict", err)
	}
	w.Clock.Advance(psp.KeyWindow)
	if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	if _, back := w.fake.Totals(); back != 100000 || w.fake.Refunds() != 1 || w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("a day later: the provider refunded %d in %d refunds (%d POSTs more), want 1000 in 1", back, w.fake.Refunds(),
			w.fake.Calls("POST /refunds")-posts)
	}
	if _, _, rows := w.ledgerSums(b.ID); rows != 2 || w.told(b.ID, booking.EventRefunded) != 1 {
		t.Fatalf("a day later: %d ledger rows, told %d times", rows, w.told(b.ID, booking.EventRefunded))
	}
}

// TestADepositRefundTheChecksFollowIsNotRecordedByStaff: a refund pending
// at the provider is followed by the checks, and one the provider
// cancelled just now may still have a POST on its way: staff recording
// either as made are refused (saying why), nothing written; the cancelled
// one is recorded once no POST of it can land any more. Another salon's
// staff do not find it.
func TestADepositRefundTheChecksFollowIsNotRecordedByStaff(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	w.fake.Now = w.Clock.Now
	b := w.bookFrom(7001, w.day, "11:00") // (Telegram clients: told of a refund)
	s := w.paidFrom(7001, b)
	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundDeposit(w.staff(), w.salon.ID, b.ID); err != nil && !errors.Is(err, booking.ErrUnavailable) {
		t.Fatal(err)
	}
	if _, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, s.ID); !errors.Is(err, booking.ErrConflict) ||
		!strings.Contains(err.Error(), "checks follow it") {
		t.Fatalf("pending at the provider, recorded: %v, want a conflict", err)
	}
	other := w.Salon(t, booking.Salon{})
	foreign := booking.As(context.Background(), booking.ByStaff(booking.User{ID: 2, SalonID: other.ID, Role: booking.RoleAdmin, Email: "x@other.test"}))
	if _, err := w.Svc.MarkDepositRefunded(foreign, other.ID, s.ID); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("another salon's staff: %v, want not found", err)
	}
	if _, refunded, _ := w.ledgerSums(b.ID); refunded != 0 || w.told(b.ID, booking.EventRefunded) != 0 {
		t.Fatalf("refused, yet the ledger refunded %s, the client told %d times", refunded, w.told(b.ID, booking.EventRefunded))
	}
	w.fake.RefundsPending, w.fake.RefundsCanceled = false, true
	c := w.bookFrom(7002, w.day, "13:00")
	sc := w.paidFrom(7002, c)
	if _, err := w.Svc.RefundDeposit(w.staff(), w.salon.ID, c.ID); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	if items, err := w.Svc.Attention(w.staff(), w.salon.ID); err != nil || !slices.ContainsFunc(items, func(it booking.AttentionItem) bool {
		return it.Session.ID == sc.ID && it.RefundLeft
	}) {
		t.Fatalf("cancelled: attention %+v, %v", items, err)
	}
	if _, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, sc.ID); !errors.Is(err, booking.ErrConflict) ||
		!strings.Contains(err.Error(), "a moment ago") {
		t.Fatalf("cancelled a moment after its POST, recorded: %v, want a conflict", err)
	}
	if _, refunded, _ := w.ledgerSums(c.ID); refunded != 0 || w.told(c.ID, booking.EventRefunded) != 0 {
		t.Fatalf("refused, yet the ledger refunded %s, the client told %d times", refunded, w.told(c.ID, booking.EventRefunded))
	}
	// An hour later: unavailable while the provider does not answer;
	// refused while its payment shows no refund; recorded once staff made
	// it by hand there.
	w.Clock.Advance(time.Hour)
	w.fake.Fault = func(_, path string) psptest.Fault {
		if path == "GET /payments/{id}" {
			return psptest.Error
		}
		return psptest.None
	}
	if _, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, sc.ID); !errors.Is(err, booking.ErrUnavailable) {
		t.Fatalf("the provider down, recorded: %v, want unavailable", err)
	}
	w.fake.Fault = nil
	if _, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, sc.ID); !errors.Is(err, booking.ErrConflict) ||
		!strings.Contains(err.Error(), "not succeeded there") {
		t.Fatalf("cancelled and not made, recorded: %v, want a conflict", err)
	}
	w.byHand(sc.ExternalID, 100000, sc.Currency)
	if got, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, sc.ID); err != nil || got.Status != booking.PayRefunded {
		t.Fatalf("cancelled, then made by hand, recorded: %+v, %v", got, err)
	}
	if _, refunded, _ := w.ledgerSums(c.ID); refunded != 100000 || w.told(c.ID, booking.EventRefunded) != 1 {
		t.Fatalf("the ledger refunded %s, the client told %d times; want 1000, once", refunded, w.told(c.ID, booking.EventRefunded))
	}
}

// TestARecordedPartRefundOfACancelledBookingAsksTheRest: part of a
// deposit refunded, the provider cancels that refund, and the booking is
// cancelled meanwhile (the rest owed too, after it). Staff who made the
// part by hand at the provider record it: the ledger has the part, the
// rest is asked of the provider next, by itself, once; the audit row
// says what the record made (completed), and the deposit ends refunded
// in full.
func TestARecordedPartRefundOfACancelledBookingAsksTheRest(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	w.fake.Now = w.Clock.Now
	b := w.book("11:00")
	s := w.paid(b)
	w.fake.RefundsCanceled = true
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 20000); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	if _, err := w.Svc.Cancel(booking.As(context.Background(), booking.ByToken(b.ManageToken)), booking.CancelRequest{BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(time.Hour)
	w.fake.RefundsCanceled = false
	w.byHand(s.ExternalID, 20000, s.Currency)
	posts := w.fake.Calls("POST /refunds")
	if _, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, s.ID); err != nil {
		t.Fatal(err)
	}
	w.sweep(3)
	_, refunded, _ := w.ledgerSums(b.ID)
	_, back := w.fake.Totals()
	if _, ps := w.status(b.ID); refunded != 100000 || back != 100000 || w.fake.Calls("POST /refunds")-posts != 1 || ps != booking.PayRefunded {
		t.Fatalf("the ledger refunded %s, the provider %d (200 by hand) in %d POSTs more, the session %s; want 1000, 1000 in 1, refunded",
			refunded, back, w.fake.Calls("POST /refunds")-posts, ps)
	}
	if n := w.count(`SELECT count(*) FROM audit_log WHERE action = 'payment_refund_recorded' AND entity_id = $1
		AND old->>'status' = 'refunding' AND new->>'status' = 'completed'`, s.ID); n != 1 {
		t.Fatalf("%d audit rows saying the record completed the session, want 1", n)
	}
}

// TestARecordedPartCountsTheEarlierParts: a deposit's first part is
// refunded through the provider, its second part cancelled there. The
// second is recorded only once the provider's payment shows both parts
// (the first alone does not cover it), then the ledger has both.
func TestARecordedPartCountsTheEarlierParts(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	w.fake.Now = w.Clock.Now
	b := w.bookFrom(7003, w.day, "11:00")
	s := w.paidFrom(7003, b)
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 20000); err != nil && !errors.Is(err, booking.ErrUnavailable) {
		t.Fatal(err)
	}
	w.sweep(2)
	if _, refunded, _ := w.ledgerSums(b.ID); refunded != 20000 {
		t.Fatalf("the first part: the ledger refunded %s, want 200", refunded)
	}
	w.fake.RefundsCanceled = true
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 30000); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	w.Clock.Advance(time.Hour)
	if _, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, s.ID); !errors.Is(err, booking.ErrConflict) ||
		!strings.Contains(err.Error(), "not succeeded there") {
		t.Fatalf("the second part, shown nowhere, recorded: %v, want a conflict", err)
	}
	w.byHand(s.ExternalID, 30000, s.Currency)
	got, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, s.ID)
	if err != nil || got.Status != booking.PayCompleted {
		t.Fatalf("the second part, made by hand, recorded: %+v, %v; want completed (the rest refundable)", got, err)
	}
	if _, refunded, rows := w.ledgerSums(b.ID); refunded != 50000 || rows != 3 || w.told(b.ID, booking.EventRefunded) != 2 {
		t.Fatalf("the ledger refunded %s in %d rows, the client told %d times; want 500 in 3, twice", refunded, rows,
			w.told(b.ID, booking.EventRefunded))
	}
}

// TestARefundPostIsNotClaimedUnderAKeyAnotherPathRenewed: a check that
// read a refund's key, about to POST under it, is refused its POST once
// another path (staff asking again) has renewed the key meanwhile, and
// records nothing; a POST under the new key is claimed. (A sale's:
// TestASaleRefundPostIsNotClaimedUnderAKeyAnotherPathRenewed.)
func TestARefundPostIsNotClaimedUnderAKeyAnotherPathRenewed(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := context.Background()
	b := w.book("11:00")
	s := w.paid(b)
	w.fake.RefundsCanceled = true
	if _, err := w.Svc.RefundDeposit(w.staff(), w.salon.ID, b.ID); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	var old string
	var posted time.Time
	if err := w.Pool.QueryRow(ctx, `SELECT refund_key, refund_posted_at FROM payment_sessions WHERE id = $1`, s.ID).Scan(&old, &posted); err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(time.Minute)
	if _, err := w.Svc.RetryPayment(w.staff(), w.salon.ID, s.ID); err != nil && !errors.Is(err, booking.ErrUnavailable) {
		t.Fatal(err)
	}
	var renewed string
	var after time.Time
	if err := w.Pool.QueryRow(ctx, `SELECT refund_key, refund_posted_at FROM payment_sessions WHERE id = $1`, s.ID).Scan(&renewed, &after); err != nil {
		t.Fatal(err)
	}
	if renewed == old {
		t.Fatalf("asked again: the key stayed %s", old)
	}
	if err := booking.ClaimRefundPost(ctx, w.Svc, "payment_sessions", s.ID, old); !errors.Is(err, booking.ErrRefundKeyMoved) {
		t.Fatalf("a POST under the renewed-away key %s: %v, want refused", old, err)
	}
	var now time.Time
	if err := w.Pool.QueryRow(ctx, `SELECT refund_posted_at FROM payment_sessions WHERE id = $1`, s.ID).Scan(&now); err != nil || !now.Equal(after) {
		t.Fatalf("refused, yet the POST's record moved from %v to %v (%v)", after, now, err)
	}
	w.Clock.Advance(time.Minute)
	if err := booking.ClaimRefundPost(ctx, w.Svc, "payment_sessions", s.ID, renewed); err != nil {
		t.Fatalf("a POST under the refund's key %s: %v", renewed, err)
	}
}

// TestADepositRefundKeyIsNotRenewedUnderAPostOnItsWay: a check POSTs a
// deposit's refund just before the provider's memory of its key ends (its
// POST recorded, then slow to land); a check of another path right after
// finds nothing among the payment's refunds yet, and does not renew the
// key (nor POST) until the longest a POST takes has passed; by then the
// first has landed, is found, and the session is refunded: one refund at
// the provider.
func TestADepositRefundKeyIsNotRenewedUnderAPostOnItsWay(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	w.fake.Now = w.Clock.Now
	var mode atomic.Int32 // POST /refunds: 0 refused unmade (500), 1 the next held then its answer lost, 2 answers lost
	reached, hold := make(chan struct{}), make(chan struct{})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(hold) }) }) // (before the fake stops: it waits for the held call)
	w.fake.Fault = func(_, path string) psptest.Fault {
		if path != "POST /refunds" {
			return psptest.None
		}
		switch {
		case mode.Load() == 0:
			return psptest.Error
		case mode.CompareAndSwap(1, 2):
			close(reached)
			<-hold
		}
		return psptest.Lost
	}
	wait := func(c <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not within 10 s", what)
		}
	}
	b := w.book("11:00")
	s := w.paid(b)
	key := func() string {
		t.Helper()
		var k string
		if err := w.Pool.QueryRow(context.Background(), `SELECT refund_key FROM payment_sessions WHERE id = $1`, s.ID).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	if _, err := w.Svc.RefundDeposit(w.staff(), w.salon.ID, b.ID); err != nil && !errors.Is(err, booking.ErrUnavailable) {
		t.Fatal(err)
	}
	if w.fake.Refunds() != 0 {
		t.Fatalf("%d refunds made, want none yet", w.fake.Refunds())
	}
	first := key()
	w.Clock.Advance(psp.KeyWindow - time.Hour - 5*time.Second)
	mode.Store(1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = w.Svc.CheckPayment(bookingtest.System(), s.ID) // (its answer is lost)
	}()
	wait(reached, "the POST just before the window ends")
	w.Clock.Advance(6 * time.Second)
	posts := w.fake.Calls("POST /refunds")
	if _, err := w.Svc.CheckPayment(bookingtest.System(), s.ID); err != nil && !errors.Is(err, booking.ErrUnavailable) {
		t.Fatal(err)
	}
	if k, n := key(), w.fake.Calls("POST /refunds")-posts; k != first || n != 0 {
		t.Fatalf("right after the window, a POST on its way: the key %q (was %q), asked %d times more", k, first, n)
	}
	release.Do(func() { close(hold) })
	wait(done, "the first POST")
	w.Clock.Advance(time.Minute)
	if _, err := w.Svc.CheckPayment(bookingtest.System(), s.ID); err != nil {
		t.Fatal(err)
	}
	_, back := w.fake.Totals()
	_, refunded, _ := w.ledgerSums(b.ID)
	if _, ps := w.status(b.ID); ps != booking.PayRefunded || w.fake.Refunds() != 1 || back != 100000 || refunded != 100000 || key() != first {
		t.Fatalf("after the longest a POST takes: the session %s; the provider refunded %d in %d refunds, the ledger %s; want 1000 in 1",
			ps, back, w.fake.Refunds(), refunded)
	}
}

// TestADepositRefundIsMadeOnceAcrossTheProvidersKeyWindow: refunds of
// parts of a deposit, each made once at the provider though the provider
// forgets an idempotence key after a day (its fake here does, on the
// test's clock): one whose answer was lost is found on the payment a day
// later, not asked again under the forgotten key; a pending one is read by
// its id; one the provider cancelled is not asked again by the checks,
// shows on Attention, and is asked anew (a new key) when staff retry. The
// provider's record and the ledger agree.
func TestADepositRefundIsMadeOnceAcrossTheProvidersKeyWindow(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	w.fake.Now = w.Clock.Now
	var lose atomic.Bool
	w.fake.Fault = func(_, path string) psptest.Fault {
		if lose.Load() && path == "POST /refunds" {
			return psptest.Lost
		}
		return psptest.None
	}
	b := w.book("11:00")
	s := w.paid(b)
	back := func() int64 { _, r := w.fake.Totals(); return r }
	later := func(d time.Duration) {
		t.Helper()
		w.Clock.Advance(d)
		if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
			t.Fatal(err)
		}
	}

	lose.Store(true)
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 30000); err != nil && !errors.Is(err, booking.ErrUnavailable) {
		t.Fatal(err)
	}
	lose.Store(false)
	posts := w.fake.Calls("POST /refunds")
	later(psp.KeyWindow + time.Hour)
	if _, refunded, _ := w.ledgerSums(b.ID); back() != 30000 || refunded != 30000 || w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("the lost refund a day later: the provider refunded %d, the ledger %s, asked %d times more", back(),
			refunded, w.fake.Calls("POST /refunds")-posts)
	}

	w.fake.RefundsPending = true
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 20000); err != nil && !errors.Is(err, booking.ErrUnavailable) {
		t.Fatal(err)
	}
	posts = w.fake.Calls("POST /refunds")
	later(time.Hour)
	later(psp.KeyWindow)
	w.fake.SettleRefunds()
	w.fake.RefundsPending = false
	later(time.Hour)
	if _, refunded, _ := w.ledgerSums(b.ID); back() != 50000 || refunded != 50000 || w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("pending for a day: the provider refunded %d, the ledger %s, asked %d times more", back(), refunded,
			w.fake.Calls("POST /refunds")-posts)
	}

	w.fake.RefundsCanceled = true
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 10000); err != nil && !errors.Is(err, booking.ErrUnavailable) &&
		!errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	posts = w.fake.Calls("POST /refunds")
	for range 3 {
		later(psp.KeyWindow / 2)
	}
	if w.fake.Calls("POST /refunds") != posts || back() != 50000 {
		t.Fatalf("cancelled: asked %d times more by the checks, %d refunded", w.fake.Calls("POST /refunds")-posts, back())
	}
	items, err := w.Svc.Attention(w.staff(), w.salon.ID)
	if err != nil || len(items) != 1 || items[0].Session.ID != s.ID || items[0].Kind != booking.AttentionStuck ||
		!strings.Contains(items[0].Session.LastError, "cancelled the refund") {
		t.Fatalf("attention: %+v, %v", items, err)
	}
	w.fake.RefundsCanceled = false
	if _, err := w.Svc.RetryPayment(w.staff(), w.salon.ID, s.ID); err != nil {
		t.Fatal(err)
	}
	w.sweep(2)
	if _, refunded, _ := w.ledgerSums(b.ID); back() != 60000 || refunded != 60000 {
		t.Fatalf("asked again: the provider refunded %d, the ledger %s", back(), refunded)
	}
}
