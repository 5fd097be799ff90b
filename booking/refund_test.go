package booking_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp/psptest"
)

// A refund the provider cancelled that staff then made by hand at the
// provider is not asked again when staff, too, ask for it here: the
// provider's payment shows more refunded than our records, and a second
// refund would reach the client as well. Asking again is refused, saying
// what the payment shows and to record the refund; nothing is asked of
// the provider, and recording it then writes it once.

// depositRefundMadeByHand is a paid booking of w whose deposit's part of
// 200 was refunded, cancelled by the provider, and made by hand there an
// hour later; with the POSTs of refunds the provider had by then.
func depositRefundMadeByHand(t *testing.T, w *payWorld) (*booking.Booking, *booking.PaymentSession, int) {
	t.Helper()
	w.fake.Now = w.Clock.Now
	b := w.bookFrom(7101, w.day, "11:00") // (a Telegram client: told of a refund)
	s := w.paidFrom(7101, b)
	w.fake.RefundsCanceled = true
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 20000); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	w.fake.RefundsCanceled = false
	w.Clock.Advance(time.Hour)
	w.byHand(s.ExternalID, 20000, s.Currency)
	return b, s, w.fake.Calls("POST /refunds")
}

func TestADepositRefundMadeByHandIsNotAskedAgain(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b, s, posts := depositRefundMadeByHand(t, w)
	w.fake.Fault = func(_, path string) psptest.Fault {
		if path == "GET /payments/{id}" {
			return psptest.Error
		}
		return psptest.None
	}
	if _, err := w.Svc.RetryPayment(w.staff(), w.salon.ID, s.ID); !errors.Is(err, booking.ErrUnavailable) {
		t.Fatalf("asked again, the provider down: %v, want unavailable", err)
	}
	w.fake.Fault = nil
	_, err := w.Svc.RetryPayment(w.staff(), w.salon.ID, s.ID)
	if !errors.Is(err, booking.ErrConflict) || !strings.Contains(err.Error(), "shows 200 refunded") ||
		!strings.Contains(err.Error(), "record it as made") {
		t.Fatalf("asked again, made by hand: %v, want a conflict saying what the payment shows", err)
	}
	w.sweep(3)
	if _, back := w.fake.Totals(); back != 20000 || w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("the provider refunded %d, asked %d times more; want 200 (by hand), none", back, w.fake.Calls("POST /refunds")-posts)
	}
	if n := w.count(`SELECT count(*) FROM audit_log WHERE action = 'payment_retry' AND entity_id = $1`, s.ID); n != 0 {
		t.Fatalf("%d audit rows of asking again, want none: it was refused", n)
	}
	got, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, s.ID)
	if err != nil || got.Status != booking.PayCompleted || got.Refunded != 20000 {
		t.Fatalf("recorded: %+v, %v; want completed, 200 refunded", got, err)
	}
	w.sweep(3)
	if _, refunded, _ := w.ledgerSums(b.ID); refunded != 20000 || w.told(b.ID, booking.EventRefunded) != 1 {
		t.Fatalf("the ledger refunded %s, the client told %d times; want 200, once", refunded, w.told(b.ID, booking.EventRefunded))
	}
	if _, back := w.fake.Totals(); back != 20000 || w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("recorded: the provider refunded %d, asked %d times more", back, w.fake.Calls("POST /refunds")-posts)
	}
}

// saleRefundMadeByHand is a package sold online, two visits of five left,
// refunded, the refund cancelled by the provider and made by hand there an
// hour later; with what it owes and the POSTs the provider had by then.
func saleRefundMadeByHand(t *testing.T, w *saleWorld) (*booking.BalanceSale, int64, int) {
	t.Helper()
	w.fake.Now = w.Clock.Now
	x := w.soldPackage(3)
	w.fake.RefundsCanceled = true
	if _, err := w.Svc.RefundBalance(booking.As(context.Background(), w.admin()), w.salon.ID, x.BalanceID, ""); err != nil &&
		!errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	w.fake.RefundsCanceled = false
	w.Clock.Advance(time.Hour)
	var ext string
	var owed int64
	if err := w.Pool.QueryRow(context.Background(), `SELECT external_id, refund_amount FROM balance_sales WHERE id = $1`, x.ID).
		Scan(&ext, &owed); err != nil {
		t.Fatal(err)
	}
	w.byHand(ext, owed, x.Currency)
	return x, owed, w.fake.Calls("POST /refunds")
}

func TestASaleRefundMadeByHandIsNotAskedAgain(t *testing.T) {
	w := newSaleWorld(t)
	staff := booking.As(context.Background(), w.admin())
	x, owed, posts := saleRefundMadeByHand(t, w)
	_, err := w.Svc.RetrySaleRefund(staff, w.salon.ID, x.BalanceID)
	if !errors.Is(err, booking.ErrConflict) || !strings.Contains(err.Error(), "shows 8000 refunded") ||
		!strings.Contains(err.Error(), "record it as made") {
		t.Fatalf("asked again, made by hand: %v, want a conflict saying what the payment shows", err)
	}
	if got, err := w.Svc.SaleOfBalance(staff, w.salon.ID, x.BalanceID); err != nil || got.Status != booking.PayRefunding || !got.RefundCancelled {
		t.Fatalf("refused, yet: %+v, %v", got, err)
	}
	got, err := w.Svc.MarkSaleRefunded(staff, w.salon.ID, x.BalanceID)
	if err != nil || got.Status != booking.PayRefunded {
		t.Fatalf("recorded: %+v, %v", got, err)
	}
	w.Clock.Advance(time.Hour)
	if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	if _, back := w.fake.Totals(); back != owed || w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("the provider refunded %d, asked %d times more; want %d (by hand), none", back, w.fake.Calls("POST /refunds")-posts, owed)
	}
}

// TestARefundMadeByHandForMoreIsRecordedAsShown: staff who, at the
// provider, refunded more than was owed (the whole deposit for its part
// of 200; the whole price of a package for its two visits left) and then
// record the refund as made: what the provider's payment shows is
// recorded, so the ledger (and the sale) say what the client got back;
// the client is told once of that amount, the deposit ends refunded and
// asks nothing more of the provider.
func TestARefundMadeByHandForMoreIsRecordedAsShown(t *testing.T) {
	t.Run("deposit", func(t *testing.T) {
		t.Parallel()
		w := newPayWorld(t, booking.RefundAlways)
		b, s, _ := depositRefundMadeByHand(t, w)
		w.byHand(s.ExternalID, 80000, s.Currency) // the rest of the 1000 too
		posts := w.fake.Calls("POST /refunds")
		got, err := w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, s.ID)
		if err != nil || got.Status != booking.PayRefunded || got.Refunded != 100000 {
			t.Fatalf("recorded: %+v, %v; want refunded, 1000", got, err)
		}
		w.sweep(3)
		_, refunded, rows := w.ledgerSums(b.ID)
		_, back := w.fake.Totals()
		if refunded != 100000 || booking.Money(back) != refunded || rows != 2 || w.fake.Calls("POST /refunds") != posts {
			t.Fatalf("the ledger refunded %s in %d rows, the provider %d in %d POSTs more; want 1000 in 2, equal, none",
				refunded, rows, back, w.fake.Calls("POST /refunds")-posts)
		}
		if n := w.count(`SELECT count(*) FROM river_job WHERE kind = $1 AND args->>'event' = $2 AND (args->>'booking_id')::bigint = $3
			AND (args->>'amount')::numeric = 1000`, booking.NotifyArgs{}.Kind(), booking.EventRefunded, b.ID); n != 1 ||
			w.told(b.ID, booking.EventRefunded) != 1 {
			t.Fatalf("told %d times, %d of 1000; want once, of 1000", w.told(b.ID, booking.EventRefunded), n)
		}
	})
	t.Run("sale", func(t *testing.T) {
		w := newSaleWorld(t)
		staff := booking.As(context.Background(), w.admin())
		x, owed, _ := saleRefundMadeByHand(t, w)
		var ext string
		var price int64
		if err := w.Pool.QueryRow(context.Background(), `SELECT external_id, price FROM balance_sales WHERE id = $1`, x.ID).Scan(&ext, &price); err != nil {
			t.Fatal(err)
		}
		w.byHand(ext, price-owed, x.Currency) // the visits used paid back too
		posts := w.fake.Calls("POST /refunds")
		got, err := w.Svc.MarkSaleRefunded(staff, w.salon.ID, x.BalanceID)
		_, back := w.fake.Totals()
		if err != nil || got.Status != booking.PayRefunded || int64(got.Refunded) != price || back != price {
			t.Fatalf("recorded: %+v, %v, the provider refunded %d; want refunded, %d on both", got, err, back, price)
		}
		if w.fake.Calls("POST /refunds") != posts {
			t.Fatalf("%d POSTs more, want none", w.fake.Calls("POST /refunds")-posts)
		}
		// Paid back in full: a visit a booking held, given back when it is
		// cancelled, is not spendable again (refunded at once, no money).
		var held int64
		if err := w.Pool.QueryRow(context.Background(), `SELECT booking_id FROM balance_entries WHERE balance_id = $1 AND type = 'reserve'
			ORDER BY id LIMIT 1`, x.BalanceID).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Svc.Cancel(staff, booking.CancelRequest{SalonID: w.salon.ID, BookingID: held}); err != nil {
			t.Fatal(err)
		}
		var left, sum, refunds int64
		if err := w.Pool.QueryRow(context.Background(), `SELECT remaining, (SELECT sum(delta) FROM balance_entries WHERE balance_id = $1),
			(SELECT count(*) FROM balance_entries WHERE balance_id = $1 AND type = 'refund') FROM balances WHERE id = $1`, x.BalanceID).
			Scan(&left, &sum, &refunds); err != nil || left != 0 || sum != 0 || refunds != 2 {
			t.Fatalf("after the cancellation: %d left, the ledger sums to %d, %d refund entries (%v); want 0, 0, 2", left, sum, refunds, err)
		}
		if _, back := w.fake.Totals(); back != price || w.fake.Calls("POST /refunds") != posts {
			t.Fatalf("the provider refunded %d in %d POSTs more", back, w.fake.Calls("POST /refunds")-posts)
		}
	})
}

// tally counts errs: successes, conflicts, and the others.
func tally(errs []error) (ok, conflicts int, other []error) {
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, booking.ErrConflict):
			conflicts++
		default:
			other = append(other, err)
		}
	}
	return ok, conflicts, other
}

// TestADepositRefundRecordedAndAskedAgainAtOnceIsMadeOnce: a refund made
// by hand at the provider, staff in four tabs at once record it (two) and
// ask for it again (two), beside two sweeps, from a barrier: one record,
// every other refused; the provider has the refund by hand alone, the
// ledger and the client have it once.
func TestADepositRefundRecordedAndAskedAgainAtOnceIsMadeOnce(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b, s, posts := depositRefundMadeByHand(t, w)
	const n = 8
	var marks, retries [n]error
	errs := race(n, func(i int) error {
		var err error
		switch i % 4 {
		case 0, 1:
			_, err = w.Svc.MarkDepositRefunded(w.staff(), w.salon.ID, s.ID)
			marks[i] = err
		case 2:
			_, err = w.Svc.RetryPayment(w.staff(), w.salon.ID, s.ID)
			retries[i] = err
		default:
			_, err = w.Svc.SweepPayments(bookingtest.System())
		}
		return err
	})
	ok, conflicts, other := tally(errs)
	if ok != 1+n/4 || conflicts != n-1-n/4 || len(other) != 0 {
		t.Fatalf("%d done (1 record and the sweeps), %d refused, others %v; want %d, %d, none (records %v, asked again %v)",
			ok, conflicts, other, 1+n/4, n-1-n/4, marks, retries)
	}
	w.sweep(3)
	if _, back := w.fake.Totals(); back != 20000 || w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("the provider refunded %d, asked %d times more; want 200 (by hand), none", back, w.fake.Calls("POST /refunds")-posts)
	}
	if _, refunded, rows := w.ledgerSums(b.ID); refunded != 20000 || rows != 2 || w.told(b.ID, booking.EventRefunded) != 1 {
		t.Fatalf("the ledger refunded %s in %d rows, the client told %d times; want 200 in 2, once", refunded, rows,
			w.told(b.ID, booking.EventRefunded))
	}
	if n := w.count(`SELECT count(*) FROM audit_log WHERE action = 'payment_refund_recorded' AND entity_id = $1`, s.ID); n != 1 {
		t.Fatalf("%d audit rows of the record, want 1", n)
	}
	if _, ps := w.status(b.ID); ps != booking.PayCompleted {
		t.Fatalf("the session is %s, want completed (200 of 1000 refunded)", ps)
	}
}

// TestADepositRefundAskedAgainFromManyTabsIsMadeOnce: a refund the
// provider cancelled (not made by hand), asked again by staff in six tabs
// at once beside two sweeps, from a barrier: one new refund at the
// provider, the ledger and the client have it once.
func TestADepositRefundAskedAgainFromManyTabsIsMadeOnce(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	w.fake.Now = w.Clock.Now
	b := w.bookFrom(7102, w.day, "11:00")
	s := w.paidFrom(7102, b)
	w.fake.RefundsCanceled = true
	if _, err := w.Svc.RefundDepositPart(w.staff(), w.salon.ID, b.ID, 20000); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	w.fake.RefundsCanceled = false
	w.Clock.Advance(time.Hour)
	refunds := w.fake.Refunds()
	const n = 8
	errs := race(n, func(i int) error {
		if i < 2 {
			_, err := w.Svc.SweepPayments(bookingtest.System())
			return err
		}
		_, err := w.Svc.RetryPayment(w.staff(), w.salon.ID, s.ID)
		return err
	})
	if _, _, other := tally(errs); len(other) != 0 {
		t.Fatalf("errors but refusals: %v", other)
	}
	w.sweep(3)
	if _, back := w.fake.Totals(); back != 20000 || w.fake.Refunds()-refunds != 1 {
		t.Fatalf("the provider refunded %d in %d new refunds; want 200 in 1", back, w.fake.Refunds()-refunds)
	}
	if _, refunded, _ := w.ledgerSums(b.ID); refunded != 20000 || w.told(b.ID, booking.EventRefunded) != 1 {
		t.Fatalf("the ledger refunded %s, the client told %d times; want 200, once", refunded, w.told(b.ID, booking.EventRefunded))
	}
}

// TestASaleRefundRecordedAndAskedAgainAtOnceIsMadeOnce: as the deposit's
// (TestADepositRefundRecordedAndAskedAgainAtOnceIsMadeOnce), for the
// refund of a package sold online.
func TestASaleRefundRecordedAndAskedAgainAtOnceIsMadeOnce(t *testing.T) {
	w := newSaleWorld(t)
	staff := booking.As(context.Background(), w.admin())
	x, owed, posts := saleRefundMadeByHand(t, w)
	const n = 8
	errs := race(n, func(i int) error {
		var err error
		switch i % 4 {
		case 0, 1:
			_, err = w.Svc.MarkSaleRefunded(staff, w.salon.ID, x.BalanceID)
		case 2:
			_, err = w.Svc.RetrySaleRefund(staff, w.salon.ID, x.BalanceID)
		default:
			_, err = w.Svc.SweepPayments(bookingtest.System())
		}
		return err
	})
	ok, conflicts, other := tally(errs)
	if ok != 1+n/4 || conflicts != n-1-n/4 || len(other) != 0 {
		t.Fatalf("%d done (1 record and the sweeps), %d refused, others %v; want %d, %d, none", ok, conflicts, other, 1+n/4, n-1-n/4)
	}
	w.Clock.Advance(time.Hour)
	if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	if _, back := w.fake.Totals(); back != owed || w.fake.Calls("POST /refunds") != posts {
		t.Fatalf("the provider refunded %d, asked %d times more; want %d (by hand), none", back, w.fake.Calls("POST /refunds")-posts, owed)
	}
	if got, err := w.Svc.SaleOfBalance(staff, w.salon.ID, x.BalanceID); err != nil || got.Status != booking.PayRefunded {
		t.Fatalf("the sale: %+v, %v; want refunded", got, err)
	}
	if n := w.count(`SELECT count(*) FROM audit_log WHERE action = 'refund_recorded' AND entity_id = $1`, x.BalanceID); n != 1 {
		t.Fatalf("%d audit rows of the record, want 1", n)
	}
}

// TestASaleRefundAskedAgainFromManyTabsIsMadeOnce: a sale's refund the
// provider cancelled, asked again by staff in six tabs at once beside two
// sweeps, from a barrier: one new key wins, one refund at the provider.
func TestASaleRefundAskedAgainFromManyTabsIsMadeOnce(t *testing.T) {
	w := newSaleWorld(t)
	w.fake.Now = w.Clock.Now
	staff := booking.As(context.Background(), w.admin())
	const owed = 2000000 * 2 / 5 // two visits of five left
	x := w.soldPackage(3)
	w.fake.RefundsCanceled = true
	if _, err := w.Svc.RefundBalance(staff, w.salon.ID, x.BalanceID, ""); err != nil && !errors.Is(err, booking.ErrConflict) {
		t.Fatal(err)
	}
	w.fake.RefundsCanceled = false
	w.Clock.Advance(time.Hour)
	refunds := w.fake.Refunds()
	const n = 8
	errs := race(n, func(i int) error {
		if i < 2 {
			_, err := w.Svc.SweepPayments(bookingtest.System())
			return err
		}
		_, err := w.Svc.RetrySaleRefund(staff, w.salon.ID, x.BalanceID)
		return err
	})
	if ok, _, other := tally(errs); len(other) != 0 || ok < 3 {
		t.Fatalf("%d done, errors but refusals: %v; want the sweeps and one asked again", ok, other)
	}
	w.Clock.Advance(time.Hour)
	if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
		t.Fatal(err)
	}
	if _, back := w.fake.Totals(); back != owed || w.fake.Refunds()-refunds != 1 {
		t.Fatalf("the provider refunded %d in %d new refunds; want %d in 1", back, w.fake.Refunds()-refunds, owed)
	}
	if got, err := w.Svc.SaleOfBalance(staff, w.salon.ID, x.BalanceID); err != nil || got.Status != booking.PayRefunded {
		t.Fatalf("the sale: %+v, %v; want refunded", got, err)
	}
}
