package booking_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"salon/booking"
	"salon/booking/bookingtest"
)

// ledgerOf is what the database holds of a balance: what is left, the sum
// of its entries, and how many entries of each type.
type ledgerOf struct {
	remaining, sum int64
	types          map[string]int
}

func readLedger(t *testing.T, f *fixture, id int64) ledgerOf {
	t.Helper()
	l := ledgerOf{types: map[string]int{}}
	ctx := context.Background()
	if err := f.Pool.QueryRow(ctx, `SELECT remaining, (SELECT COALESCE(sum(delta), 0) FROM balance_entries WHERE balance_id = b.id)
		FROM balances b WHERE id = $1`, id).Scan(&l.remaining, &l.sum); err != nil {
		t.Fatal(err)
	}
	rows, err := f.Pool.Query(ctx, `SELECT type, count(*) FROM balance_entries WHERE balance_id = $1 GROUP BY type`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ string
		var n int
		if err := rows.Scan(&typ, &n); err != nil {
			t.Fatal(err)
		}
		l.types[typ] = n
	}
	if l.remaining != l.sum || l.remaining < 0 {
		t.Fatalf("balance %d: remaining %d, its entries' sum %d", id, l.remaining, l.sum)
	}
	return l
}

// aPackage issues a package of visits of the fixture's service for a client
// of phone, and returns it with the client's chat identity (vouched for by
// the salon).
func aPackage(t *testing.T, f *fixture, visits int, phone string) (*booking.Balance, booking.Identity) {
	t.Helper()
	pkg, err := f.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{f.svc.ID}, Visits: visits, Client: booking.ClientInput{Name: "Regular", Phone: phone}})
	if err != nil {
		t.Fatal(err)
	}
	id := booking.Identity{Channel: booking.ChannelTelegram, ExternalID: fmt.Sprint(pkg.ID + 7000)}
	if _, err := f.Pool.Exec(context.Background(), `INSERT INTO client_identities (salon_id, client_id, channel, external_id, verified_by)
		VALUES ($1, $2, $3, $4, 'contact')`, f.salon.ID, pkg.ClientID, id.Channel, id.ExternalID); err != nil {
		t.Fatal(err)
	}
	return pkg, id
}

// TestAPackageSpentFromThreeFrontsAtOnce: the widget (by the code), the
// bot (the client's proven chat) and the panel (staff, by the package)
// book with a package at once, from a barrier. With one visit left exactly
// one booking is made and the others are refused as exhausted, with
// nothing written; with two left, two. The ledger is the balance, with one
// reservation per booking made.
func TestAPackageSpentFromThreeFrontsAtOnce(t *testing.T) {
	f := setup(t)
	for _, visits := range []int{1, 2} {
		phone := bookingtest.Phone()
		pkg, chat := aPackage(t, f, visits, phone)
		hhmm := fmt.Sprintf("1%d:00", visits*2)
		callers := []booking.Caller{booking.Visitor(), booking.ByIdentity(chat), f.admin(1)}
		pays := []booking.PayWith{{Kind: booking.BalancePackage, Code: pkg.Code},
			{Kind: booking.BalancePackage, BalanceID: pkg.ID}, {Kind: booking.BalancePackage, BalanceID: pkg.ID}}
		made := make([]*booking.Booking, 3)
		errs := race(3, func(i int) error {
			r := f.req(f.masters[i], hhmm)
			r.Client.Phone, r.PayWith = phone, &pays[i]
			var err error
			made[i], err = f.Svc.Book(booking.As(context.Background(), callers[i]), r)
			return err
		})
		ok, spent := 0, 0
		for i, err := range errs {
			switch {
			case err == nil:
				ok++
				if p := made[i].PaidWith; p == nil || p.Visits != 1 || p.Kind != booking.BalancePackage {
					t.Errorf("booking %d paid with %+v", made[i].ID, p)
				}
			case errors.Is(err, booking.ErrExhausted):
				spent++
			default:
				t.Errorf("caller %d: %v", i, err)
			}
		}
		l := readLedger(t, f, pkg.ID)
		var booked int
		if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings WHERE salon_id = $1 AND client_id = $2`,
			f.salon.ID, pkg.ClientID).Scan(&booked); err != nil {
			t.Fatal(err)
		}
		if ok != visits || spent != 3-visits || l.remaining != 0 || l.types["reserve"] != visits || booked != visits {
			t.Fatalf("%d visits left: %d booked, %d exhausted, %d bookings, ledger %+v", visits, ok, spent, booked, l)
		}
		t.Logf("%d visit(s) left, three fronts at once: %d booked, %d refused as exhausted; %d reservations, remaining %d", visits, ok, spent,
			l.types["reserve"], l.remaining)
	}
}

// TestPayWithNeedsACredential: a package is spent by its code, by staff,
// or by the client's own proven chat, never by a typed phone; a code of
// another salon, another client's package, a package of another service
// are refused naming pay_with; an expired one is exhausted. Nothing is
// written by a refusal.
func TestPayWithNeedsACredential(t *testing.T) {
	f := setup(t)
	phone := bookingtest.Phone()
	pkg, _ := aPackage(t, f, 3, phone)
	stranger := booking.Identity{Channel: booking.ChannelTelegram, ExternalID: "999001"}
	other := f.Salon(t, booking.Salon{})
	foreign, err := f.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: other.ID, Kind: booking.BalanceCertificate, Amount: 100000})
	if err != nil {
		t.Fatal(err)
	}
	colour := f.Service(t, f.salon, booking.SalonService{Name: "Colour", DurationMin: 60})
	m := f.Master(t, f.salon, colour)
	f.Shift(t, f.salon, m, f.day, 1, "10:00", "20:00")
	if _, err := f.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{f.svc.ID}, Visits: 1, Client: booking.ClientInput{Name: "Regular", Phone: phone},
		ValidUntil: booking.DateOf(bookingtest.DefaultNow).AddDays(-1)}); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("a package valid until yesterday: %v", err)
	}
	ended, err := f.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{f.svc.ID}, Visits: 1, Client: booking.ClientInput{Name: "Regular", Phone: phone}, ValidUntil: booking.DateOf(bookingtest.DefaultNow)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		caller booking.Caller
		pay    booking.PayWith
		phone  string
		svc    int64
		master int64
		want   error
		proven bool // the chat's channel vouched for the phone
	}{
		{"a visitor naming the package without its code", booking.Visitor(), booking.PayWith{Kind: booking.BalancePackage, BalanceID: pkg.ID}, phone, 0, 0, booking.ErrInvalid, false},
		{"a chat that is not the client's", booking.ByIdentity(stranger), booking.PayWith{Kind: booking.BalancePackage, BalanceID: pkg.ID}, phone, 0, 0, booking.ErrInvalid, false},
		{"a chat that proved another phone", booking.ByIdentity(stranger), booking.PayWith{Kind: booking.BalancePackage, BalanceID: pkg.ID}, bookingtest.Phone(), 0, 0, booking.ErrInvalid, true},
		{"the code, for another client's phone", booking.Visitor(), booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code}, bookingtest.Phone(), 0, 0, booking.ErrInvalid, false},
		{"another salon's certificate", booking.Visitor(), booking.PayWith{Kind: booking.BalanceCertificate, Code: foreign.Code}, phone, 0, 0, booking.ErrInvalid, false},
		{"a package as a certificate", booking.Visitor(), booking.PayWith{Kind: booking.BalanceCertificate, Code: pkg.Code}, phone, 0, 0, booking.ErrInvalid, false},
		{"a package of another service", booking.Visitor(), booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code}, phone, colour.ID, m.ID, booking.ErrInvalid, false},
		{"a package that ended before the day", f.admin(1), booking.PayWith{Kind: booking.BalancePackage, BalanceID: ended.ID}, phone, 0, 0, booking.ErrExhausted, false},
		{"a made-up code", booking.Visitor(), booking.PayWith{Kind: booking.BalanceCertificate, Code: "AAAA-BBBB-CCCC"}, phone, 0, 0, booking.ErrInvalid, false},
	}
	for _, c := range cases {
		r := f.req(f.masters[0], "12:00")
		r.Client.Phone, r.Client.Verified, r.PayWith = c.phone, c.proven, &c.pay
		if c.svc != 0 {
			r.ServiceID, r.MasterID = c.svc, c.master
		}
		_, err := f.Svc.Book(booking.As(context.Background(), c.caller), r)
		var ve *booking.ValidationError
		switch {
		case !errors.Is(err, c.want):
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		case c.want == booking.ErrInvalid && (!errors.As(err, &ve) || ve.Fields["pay_with"].String() == ""):
			t.Errorf("%s: %v, want pay_with named", c.name, err)
		}
	}
	if l := readLedger(t, f, pkg.ID); l.remaining != 3 || l.types["reserve"] != 0 {
		t.Fatalf("after the refusals: %+v", l)
	}
	if n := activeBookings(t, f.Pool, f.masters[0].ID); n != 0 {
		t.Fatalf("%d bookings after the refusals", n)
	}
	// The code alone says its kind (the desk's form asks none); the chat
	// that proved the client's own phone needs no code.
	r := f.req(f.masters[0], "12:00")
	r.Client.Phone, r.PayWith = phone, &booking.PayWith{Code: pkg.Code}
	if b, err := f.Svc.Book(booking.As(context.Background(), booking.Visitor()), r); err != nil || b.PaidWith == nil || b.PaidWith.Visits != 1 {
		t.Fatalf("the code with no kind: %+v, %v", b, err)
	}
	r = f.req(f.masters[0], "14:00")
	r.Client.Phone, r.Client.Verified, r.PayWith = phone, true, &booking.PayWith{Kind: booking.BalancePackage, BalanceID: pkg.ID}
	if b, err := f.Svc.Book(booking.As(context.Background(), booking.ByIdentity(stranger)), r); err != nil || b.PaidWith == nil {
		t.Fatalf("the chat that proved the client's phone: %+v, %v", b, err)
	}
}

// TestTryingPhonesLocksAPackagesCode: whoever holds a package's code
// cannot learn whose it is by booking with phones: each phone not its
// client's is counted once (booking and lookup alike), and past five in a day
// the code refuses every phone, its client's too, with one answer, and
// books nothing; the desk still spends it, and a new code ends the lock.
func TestTryingPhonesLocksAPackagesCode(t *testing.T) {
	f := setup(t)
	phone := bookingtest.Phone()
	pkg, _ := aPackage(t, f, 3, phone)
	visitor := booking.As(context.Background(), booking.Visitor())
	book := func(phone, at string, code string) error {
		r := f.req(f.masters[0], at)
		r.Client.Phone, r.PayWith = phone, &booking.PayWith{Kind: booking.BalancePackage, Code: code}
		_, err := f.Svc.Book(visitor, r)
		return err
	}
	why := func(err error) string {
		var ve *booking.ValidationError
		if !errors.As(err, &ve) {
			return fmt.Sprintf("not a field's refusal: %v", err)
		}
		return ve.Fields["pay_with"].String()
	}
	// Four wrong phones by booking (the first tried four times, as a
	// client going back to pick other times would: it counts once), one
	// by the lookup: each told it is another client's.
	again := bookingtest.Phone()
	for i, p := range []string{again, again, again, again, bookingtest.Phone(), bookingtest.Phone(), bookingtest.Phone()} {
		if err := book(p, "12:00", pkg.Code); !strings.Contains(why(err), "another client's") {
			t.Fatalf("wrong phone %d: %v", i+1, err)
		}
	}
	if _, err := f.Svc.CheckBalance(visitor, f.salon.ID, pkg.Code, booking.BalanceUse{Phone: bookingtest.Phone()}); !strings.Contains(why(err), "another client's") {
		t.Fatalf("wrong phone 5, looked up: %v", err)
	}
	// The sixth locks it: every phone is refused alike, the client's too.
	locked := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, booking.ErrInvalid) || !strings.Contains(why(err), "too many other phones") {
			t.Fatalf("%s: %v, want the code locked", what, err)
		}
	}
	locked("wrong phone 6", book(bookingtest.Phone(), "12:00", pkg.Code))
	locked("its client's phone, booking", book(phone, "12:00", pkg.Code))
	_, err := f.Svc.CheckBalance(visitor, f.salon.ID, pkg.Code, booking.BalanceUse{Phone: phone})
	locked("its client's phone, looked up", err)
	if l := readLedger(t, f, pkg.ID); l.remaining != 3 || l.types["reserve"] != 0 {
		t.Fatalf("after the tries: %+v", l)
	}
	if n := activeBookings(t, f.Pool, f.masters[0].ID); n != 0 {
		t.Fatalf("%d bookings after the tries", n)
	}
	// The desk is not guessing: it spends the package by its code.
	r := f.req(f.masters[0], "12:00")
	r.Client.Phone, r.PayWith = phone, &booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code}
	if b, err := f.Svc.Book(booking.As(context.Background(), f.admin(1)), r); err != nil || b.PaidWith == nil {
		t.Fatalf("the desk, with the locked code: %+v, %v", b, err)
	}
	// A new code (the old one was given away) books for its client.
	renewed, err := f.Svc.RenewBalanceCode(booking.As(context.Background(), f.admin(1)), f.salon.ID, pkg.ID, "renew-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := book(phone, "14:00", renewed.Code); err != nil {
		t.Fatalf("the new code, its client's phone: %v", err)
	}
	if err := book(bookingtest.Phone(), "16:00", renewed.Code); !strings.Contains(why(err), "another client's") {
		t.Fatalf("the new code, a wrong phone: %v", err)
	}
}

// TestABalanceHeldElsewhereIsWaitedForThenRefused: while another
// transaction holds the balance's row, a booking paying with it waits at
// most the lock wait, then is refused as unavailable (nothing written);
// once it is let go, the same booking goes through.
func TestABalanceHeldElsewhereIsWaitedForThenRefused(t *testing.T) {
	const wait = 400 * time.Millisecond
	f := setup(t, booking.WithLockWait(wait))
	phone := bookingtest.Phone()
	pkg, _ := aPackage(t, f, 2, phone)
	ctx := context.Background()
	tx, err := f.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM balances WHERE id = $1 FOR UPDATE`, pkg.ID); err != nil {
		t.Fatal(err)
	}
	r := f.req(f.masters[0], "12:00")
	r.Client.Phone, r.PayWith = phone, &booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code}
	start := time.Now()
	_, err = f.Svc.Book(web(), r)
	took := time.Since(start)
	if !errors.Is(err, booking.ErrUnavailable) || took < wait-50*time.Millisecond || took > wait+2*time.Second {
		t.Fatalf("booking against a held balance: %v after %v, want unavailable after about %v", err, took, wait)
	}
	if n := activeBookings(t, f.Pool, f.masters[0].ID); n != 0 {
		t.Fatalf("%d bookings written", n)
	}
	if l := readLedger(t, f, pkg.ID); l.types["reserve"] != 0 {
		t.Fatalf("a reservation was written: %+v", l)
	}
	_ = tx.Rollback(ctx)
	t.Logf("the balance held elsewhere: refused after %v (lock wait %v)", took.Round(time.Millisecond), wait)
	if _, err := f.Svc.Book(web(), r); err != nil {
		t.Fatalf("once let go: %v", err)
	}
}

// TestAFailedBookingReservesNothing: a booking whose insert is refused
// (its time taken) leaves the package as it was; a replay of a booking
// with its idempotency key, even five at once, spends once.
func TestAFailedBookingReservesNothing(t *testing.T) {
	f := setup(t)
	phone := bookingtest.Phone()
	pkg, _ := aPackage(t, f, 3, phone)
	f.mustBook(t, f.req(f.masters[0], "12:00"))
	r := f.req(f.masters[0], "12:00")
	r.Client.Phone, r.PayWith = phone, &booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code}
	if _, err := f.Svc.Book(web(), r); !errors.Is(err, booking.ErrSlotTaken) {
		t.Fatalf("booking a taken time: %v", err)
	}
	if l := readLedger(t, f, pkg.ID); l.remaining != 3 || len(l.types) != 1 {
		t.Fatalf("after the refused insert: %+v", l)
	}
	r = f.req(f.masters[1], "12:00")
	r.Client.Phone, r.PayWith, r.IdempotencyKey = phone, &booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code}, "pay-once"
	got := make([]*booking.Booking, 5)
	errs := race(5, func(i int) error {
		var err error
		got[i], err = f.Svc.Book(web(), r)
		return err
	})
	ids := map[int64]bool{}
	for i, err := range errs {
		switch {
		case err == nil:
			ids[got[i].ID] = true
			if got[i].PaidWith == nil || got[i].PaidWith.Visits != 1 {
				t.Errorf("a replay paid with %+v", got[i].PaidWith)
			}
		case errors.Is(err, booking.ErrInProgress):
		default:
			t.Fatalf("replay %d: %v", i, err)
		}
	}
	again, err := f.Svc.Book(web(), r)
	if err != nil {
		t.Fatal(err)
	}
	ids[again.ID] = true
	if l := readLedger(t, f, pkg.ID); len(ids) != 1 || l.types["reserve"] != 1 || l.remaining != 2 || again.PaidWith == nil ||
		again.PaidWith.Remaining != 2 {
		t.Fatalf("the same request six times: bookings %v, ledger %+v, paid with %+v", ids, l, again.PaidWith)
	}
}

// TestWhatWasReservedIsSettled: completing a visit spends what it
// reserved, a no-show too; a cancellation by the client in time, by
// staff, or an unpaid hold's expiry releases it; under a policy that keeps
// deposits a client's cancellation spends it. A certificate pays up to the
// price, the deposit first: a deposit it covers is not asked online.
func TestWhatWasReservedIsSettled(t *testing.T) {
	f := setup(t, booking.WithOnlineDeposits())
	ctx := context.Background()
	sys := bookingtest.System()
	phone := bookingtest.Phone()
	pkg, _ := aPackage(t, f, 10, phone)
	book := func(m *booking.Master, hhmm string, c booking.Caller, pay booking.PayWith) *booking.Booking {
		t.Helper()
		r := f.req(m, hhmm)
		r.Client.Phone, r.PayWith = phone, &pay
		return f.mustBookAs(t, c, r)
	}
	byCode := booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code}
	done := book(f.masters[0], "10:00", booking.Visitor(), byCode)
	gone := book(f.masters[0], "12:00", booking.Visitor(), byCode)
	staffGone := book(f.masters[0], "14:00", f.admin(1), byCode)
	noShow := book(f.masters[1], "10:00", f.admin(1), byCode)
	if l := readLedger(t, f, pkg.ID); l.remaining != 6 || l.types["reserve"] != 4 {
		t.Fatalf("four reserved: %+v", l)
	}
	if _, err := f.Svc.Cancel(booking.As(ctx, booking.ByToken(gone.ManageToken)), booking.CancelRequest{BookingID: gone.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Cancel(booking.As(ctx, f.admin(1)), booking.CancelRequest{SalonID: f.salon.ID, BookingID: staffGone.ID}); err != nil {
		t.Fatal(err)
	}
	f.Clock.Set(f.at("13:00"))
	if _, err := f.Svc.MarkCompleted(booking.As(ctx, f.admin(1)), done.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.MarkNoShow(booking.As(ctx, f.admin(1)), noShow.ID); err != nil {
		t.Fatal(err)
	}
	if l := readLedger(t, f, pkg.ID); l.remaining != 8 || l.types["release"] != 2 || l.types["spend"] != 2 {
		t.Fatalf("two released, two spent: %+v", l)
	}
	// A policy that keeps deposits keeps of a client's cancellation what a
	// card would lose: of a service that asks no deposit, nothing (the
	// visit is given back); one that asks a deposit keeps the visit (below).
	f.Clock.Set(bookingtest.DefaultNow)
	s := *f.salon
	s.RefundPolicy = booking.RefundNever
	if _, err := f.Svc.UpdateSalon(sys, s); err != nil {
		t.Fatal(err)
	}
	kept := book(f.masters[2], "16:00", booking.Visitor(), byCode)
	if _, err := f.Svc.Cancel(booking.As(ctx, booking.ByToken(kept.ManageToken)), booking.CancelRequest{BookingID: kept.ID}); err != nil {
		t.Fatal(err)
	}
	if l := readLedger(t, f, pkg.ID); l.remaining != 8 || l.types["spend"] != 2 || l.types["release"] != 3 {
		t.Fatalf("a kept cancellation of a visit asking no deposit: %+v, want it given back", l)
	}
	// The salon's own cancellation gives it back, whatever the policy.
	salonGone := book(f.masters[2], "18:00", booking.Visitor(), byCode)
	if _, err := f.Svc.Cancel(booking.As(ctx, f.admin(1)), booking.CancelRequest{SalonID: f.salon.ID, BookingID: salonGone.ID}); err != nil {
		t.Fatal(err)
	}
	if l := readLedger(t, f, pkg.ID); l.remaining != 8 || l.types["release"] != 4 {
		t.Fatalf("the salon's cancellation under a keeping policy: %+v", l)
	}
	// A booking paid with a package is not moved past the package's last day.
	short, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{f.svc.ID},
		Visits: 1, Client: booking.ClientInput{Name: "Regular", Phone: phone}, ValidUntil: f.day})
	if err != nil {
		t.Fatal(err)
	}
	f.Shift(t, f.salon, f.masters[2], f.day.AddDays(1), 1, "10:00", "20:00")
	last := book(f.masters[2], "19:00", f.admin(1), booking.PayWith{Kind: booking.BalancePackage, BalanceID: short.ID})
	_, err = f.Svc.Reschedule(booking.As(ctx, f.admin(1)), booking.RescheduleRequest{SalonID: f.salon.ID, BookingID: last.ID,
		StartsAt: bookingtest.At(f.salon, f.day.AddDays(1), "11:00")})
	var ve *booking.ValidationError
	if !errors.As(err, &ve) || ve.Fields["starts_at"].String() == "" {
		t.Fatalf("moved past the package's last day: %v", err)
	}
	// A certificate on a service with a deposit: 300.00 of a 1000.00 price
	// with a 500.00 deposit leaves 200.00 to pay online; a second of
	// 5000.00 pays the whole price and asks no deposit.
	dep := f.Service(t, f.salon, booking.SalonService{Name: "Extensions", DurationMin: 60, Price: 100000, Deposit: 50000})
	m := f.Master(t, f.salon, dep)
	f.Shift(t, f.salon, m, f.day, 1, "10:00", "20:00")
	small, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalanceCertificate, Amount: 30000})
	if err != nil {
		t.Fatal(err)
	}
	big, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalanceCertificate, Amount: 500000})
	if err != nil {
		t.Fatal(err)
	}
	r := booking.BookRequest{SalonID: f.salon.ID, ServiceID: dep.ID, MasterID: m.ID, StartsAt: f.at("10:00"),
		Client: booking.ClientInput{Name: "Gift", Phone: bookingtest.Phone()}, PayWith: &booking.PayWith{Kind: booking.BalanceCertificate, Code: small.Code}}
	part := f.mustBook(t, r)
	if part.PaidWith == nil || part.PaidWith.Amount != 30000 || part.PaidWith.Remaining != 0 || part.Deposit != 20000 || part.Status != booking.StatusPending {
		t.Fatalf("a small certificate: paid with %+v, deposit %v, %s", part.PaidWith, part.Deposit, part.Status)
	}
	r.StartsAt, r.PayWith = f.at("12:00"), &booking.PayWith{Kind: booking.BalanceCertificate, Code: big.Code}
	whole := f.mustBook(t, r)
	if whole.PaidWith == nil || whole.PaidWith.Amount != 100000 || whole.PaidWith.Remaining != 400000 || whole.Deposit != 0 ||
		whole.Status != booking.StatusConfirmed {
		t.Fatalf("a large certificate: paid with %+v, deposit %v, %s", whole.PaidWith, whole.Deposit, whole.Status)
	}
	// The small one's hold expires unpaid: the certificate has its 300.00 again.
	f.Clock.Set(part.HoldExpiresAt.Add(time.Minute))
	if _, err := f.Svc.ExpireHolds(sys); err != nil {
		t.Fatal(err)
	}
	if l := readLedger(t, f, small.ID); l.remaining != 30000 || l.types["release"] != 1 {
		t.Fatalf("after the hold expired: %+v", l)
	}
	if _, err := f.Svc.Book(web(), r); !errors.Is(err, booking.ErrSlotTaken) {
		t.Fatalf("the same time again: %v", err)
	}
	if l := readLedger(t, f, big.ID); l.remaining != 400000 {
		t.Fatalf("a refused booking moved the certificate: %+v", l)
	}
	// The client cancels the visit the large one paid in whole, under the
	// policy that keeps deposits: the 500.00 its deposit would have been
	// is kept (a spend), the other 500.00 given back (a release).
	if _, err := f.Svc.Cancel(booking.As(ctx, booking.ByToken(whole.ManageToken)), booking.CancelRequest{BookingID: whole.ID}); err != nil {
		t.Fatal(err)
	}
	if l := readLedger(t, f, big.ID); l.remaining != 450000 || l.types["spend"] != 1 || l.types["release"] != 1 {
		t.Fatalf("a kept cancellation of a certificate's visit: %+v, want 4500.00 left, 500.00 kept", l)
	}
	// A hold still awaiting the rest of its deposit, cancelled by the
	// client under the same policy, gives the certificate back whole, as
	// its expiry did (nothing confirmed, nothing kept); the client is
	// told so before cancelling.
	held, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalanceCertificate, Amount: 30000})
	if err != nil {
		t.Fatal(err)
	}
	r.StartsAt, r.PayWith = f.at("14:00"), &booking.PayWith{Kind: booking.BalanceCertificate, Code: held.Code}
	pending := f.mustBook(t, r)
	asClient := booking.As(ctx, booking.ByToken(pending.ManageToken))
	if v, err := f.Svc.BookingView(asClient, 0, pending.ID); err != nil || v.Status != booking.StatusPending || v.CancelKeeps != 0 {
		t.Fatalf("a hold paid in part with a certificate: %+v (%v), want pending, keeping nothing", v, err)
	}
	if _, err := f.Svc.Cancel(asClient, booking.CancelRequest{BookingID: pending.ID}); err != nil {
		t.Fatal(err)
	}
	if l := readLedger(t, f, held.ID); l.remaining != 30000 || l.types["spend"] != 0 || l.types["release"] != 1 {
		t.Fatalf("a hold cancelled by the client: %+v, want the certificate given back whole", l)
	}
	// A package's visit of a service asking a deposit is kept whole.
	deps, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{dep.ID},
		Visits: 2, Client: booking.ClientInput{Name: "Regular", Phone: phone}})
	if err != nil {
		t.Fatal(err)
	}
	r.StartsAt, r.Client.Phone, r.PayWith = f.at("16:00"), phone, &booking.PayWith{Kind: booking.BalancePackage, Code: deps.Code}
	visit := f.mustBook(t, r)
	if _, err := f.Svc.Cancel(booking.As(ctx, booking.ByToken(visit.ManageToken)), booking.CancelRequest{BookingID: visit.ID}); err != nil {
		t.Fatal(err)
	}
	if l := readLedger(t, f, deps.ID); l.remaining != 1 || l.types["spend"] != 1 || l.types["release"] != 0 {
		t.Fatalf("a kept cancellation of a package's visit asking a deposit: %+v, want the visit kept", l)
	}
	// Staff cancelling at the client's request (they phoned) keep what the
	// client's own cancellation would; the salon's own gave it back (above).
	r.StartsAt = f.at("18:00")
	phoned := f.mustBook(t, r)
	staff := booking.As(ctx, f.admin(1))
	if v, err := f.Svc.BookingView(staff, f.salon.ID, phoned.ID); err != nil || v.CancelKeeps != 1 {
		t.Fatalf("staff read what cancelling at the client's request keeps: %+v (%v), want the visit", v, err)
	}
	if _, err := f.Svc.Cancel(staff, booking.CancelRequest{SalonID: f.salon.ID, BookingID: phoned.ID, ForClient: true}); err != nil {
		t.Fatal(err)
	}
	if l := readLedger(t, f, deps.ID); l.remaining != 0 || l.types["spend"] != 2 || l.types["release"] != 0 {
		t.Fatalf("a cancellation at the client's request: %+v, want the visit kept", l)
	}
}

// TestBalanceLedgerProperty: for random sequences of sales, bookings paid
// with a balance (by the widget and by staff, at the desk too), cancels,
// completions and refunds, every balance equals the sum of its entries and
// is never below zero, and every reservation belongs to one booking, which
// is live (and not yet settled), or was settled once: spent when it took
// place, released when cancelled (by staff, or by the client in time), a
// move keeping it.
func TestBalanceLedgerProperty(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	sys := bookingtest.System()
	f.AllDay(t, f.salon, f.masters[0], f.day.AddDays(1), 5)
	f.AllDay(t, f.salon, f.masters[1], f.day.AddDays(1), 5)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(7, seed))
	refused := 0
	type held struct {
		b     *booking.Balance
		phone string
	}
	var balances []held
	var live []*booking.Booking
	slot := 0
	for step := range 200 {
		switch op := rng.IntN(10); {
		case op < 2 || len(balances) == 0:
			phone := bookingtest.Phone()
			in := booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{f.svc.ID},
				Visits: 1 + rng.IntN(3), Client: booking.ClientInput{Name: "P", Phone: phone}}
			if rng.IntN(2) == 0 {
				in = booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalanceCertificate, Amount: booking.Money(1000 * (1 + rng.IntN(5)))}
			}
			b, err := f.Svc.IssueBalance(sys, in)
			if err != nil {
				t.Fatal(err)
			}
			balances = append(balances, held{b, phone})
		case op < 6:
			h := balances[rng.IntN(len(balances))]
			slot++
			m := f.masters[slot%2]
			r := booking.BookRequest{SalonID: f.salon.ID, ServiceID: f.svc.ID, MasterID: m.ID,
				StartsAt: bookingtest.At(f.salon, f.day.AddDays(1+slot/40), fmt.Sprintf("%02d:%02d", (slot/2)%20, 0)),
				Client:   booking.ClientInput{Name: "C", Phone: h.phone}}
			pay := booking.PayWith{Kind: h.b.Kind, Code: h.b.Code}
			caller := booking.Visitor()
			if rng.IntN(3) == 0 && h.b.Kind == booking.BalancePackage {
				pay, caller = booking.PayWith{Kind: booking.BalancePackage, BalanceID: h.b.ID}, f.admin(1)
			}
			if rng.IntN(4) == 0 {
				// At the desk: booked first, paid with the balance after.
				b, err := f.Svc.Book(booking.As(ctx, f.admin(1)), r)
				if err != nil {
					refused++
					continue
				}
				if _, err := f.Svc.ApplyBalance(booking.As(ctx, f.admin(1)), f.salon.ID, b.ID, pay); err != nil &&
					!errors.Is(err, booking.ErrExhausted) {
					t.Fatalf("seed %d, step %d: at the desk: %v", seed, step, err)
				}
				live = append(live, b)
				continue
			}
			r.PayWith = &pay
			b, err := f.Svc.Book(booking.As(ctx, caller), r)
			switch {
			case err == nil:
				live = append(live, b)
			case errors.Is(err, booking.ErrExhausted), errors.Is(err, booking.ErrSlotTaken):
				refused++
			default:
				t.Fatalf("seed %d, step %d: book: %v", seed, step, err)
			}
		case op < 7 && len(live) > 0:
			// Cancelled by staff, or by the client with the booking's
			// token (in time: given back either way), or moved.
			i := rng.IntN(len(live))
			who := booking.As(ctx, f.admin(1))
			if live[i].ManageToken != "" && rng.IntN(2) == 0 {
				who = booking.As(ctx, booking.ByToken(live[i].ManageToken))
			}
			if rng.IntN(3) == 0 {
				slot++
				_, err := f.Svc.Reschedule(booking.As(ctx, f.admin(1)), booking.RescheduleRequest{SalonID: f.salon.ID, BookingID: live[i].ID,
					StartsAt: bookingtest.At(f.salon, f.day.AddDays(3), fmt.Sprintf("%02d:00", slot%20)), MasterID: f.masters[slot%2].ID})
				if err != nil && !errors.Is(err, booking.ErrSlotTaken) {
					t.Fatalf("seed %d, step %d: move: %v", seed, step, err)
				}
				continue
			}
			if _, err := f.Svc.Cancel(who, booking.CancelRequest{SalonID: f.salon.ID, BookingID: live[i].ID}); err != nil {
				t.Fatalf("seed %d, step %d: cancel: %v", seed, step, err)
			}
			live = append(live[:i], live[i+1:]...)
		case op < 9 && len(live) > 0:
			i := rng.IntN(len(live))
			// The visit took place (or not): what the day's end does.
			to := []string{"completed", "no_show"}[rng.IntN(2)]
			if _, err := f.Pool.Exec(ctx, `UPDATE bookings SET status = $2 WHERE id = $1 AND status = 'confirmed'`, live[i].ID, to); err != nil {
				t.Fatal(err)
			}
			live = append(live[:i], live[i+1:]...)
		default:
			h := balances[rng.IntN(len(balances))]
			if _, err := f.Svc.RefundBalance(sys, f.salon.ID, h.b.ID, "moved away"); err != nil && !errors.Is(err, booking.ErrConflict) {
				t.Fatalf("seed %d, step %d: refund: %v", seed, step, err)
			}
		}
	}
	var bad []string
	rows, err := f.Pool.Query(ctx, `
		SELECT format('balance %s: remaining %s, entries %s', b.id, b.remaining, COALESCE(sum(e.delta), 0))
		FROM balances b LEFT JOIN balance_entries e ON e.balance_id = b.id WHERE b.salon_id = $1
		GROUP BY b.id HAVING b.remaining <> COALESCE(sum(e.delta), 0) OR b.remaining < 0
		UNION ALL
		SELECT format('reservation %s of booking %s (%s): %s settlements, %s spends', r.id, r.booking_id, COALESCE(k.status, 'gone'),
		              count(x.id), count(x.id) FILTER (WHERE x.type = 'spend'))
		FROM balance_entries r LEFT JOIN bookings k ON k.id = r.booking_id
		LEFT JOIN balance_entries x ON x.balance_id = r.balance_id AND x.booking_id = r.booking_id AND x.type IN ('spend', 'release')
		WHERE r.salon_id = $1 AND r.type = 'reserve'
		GROUP BY r.id, r.booking_id, k.status, r.delta, r.keeps
		HAVING k.status IS NULL
		    OR (k.status IN ('pending', 'confirmed') AND count(x.id) <> 0)
		    OR (k.status IN ('completed', 'no_show') AND (count(x.id) <> 1 OR count(x.id) FILTER (WHERE x.type = 'spend') <> 1))
		    -- cancelled: given back, all of it but what a kept cancellation keeps
		    OR (k.status = 'cancelled' AND (count(x.id) NOT IN (1, 2) OR count(x.id) FILTER (WHERE x.type = 'release') > 1
		        OR count(x.id) FILTER (WHERE x.type = 'spend') > 1
		        OR COALESCE(sum(x.delta) FILTER (WHERE x.type = 'release'), 0) NOT BETWEEN -r.delta - r.keeps AND -r.delta))
		UNION ALL
		SELECT format('booking %s has %s reservations', booking_id, count(*)) FROM balance_entries
		WHERE salon_id = $1 AND type = 'reserve' GROUP BY booking_id HAVING count(*) > 1`, f.salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		bad = append(bad, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var entries, reserves int
	if err := f.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE type = 'reserve') FROM balance_entries WHERE salon_id = $1`,
		f.salon.ID).Scan(&entries, &reserves); err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 || reserves == 0 {
		t.Fatalf("seed %d: %d reservations; the ledger breaks: %v", seed, reserves, bad)
	}
	t.Logf("seed %d: %d balances, %d entries (%d reservations, %d bookings refused): every balance is its entries' sum, every reservation settled once or live", seed, len(balances), entries, reserves, refused)
}

// TestAVisitPaysWithABalance: a visit of two services pays with a package
// of one of them (a visit reserved, the visit's deposit less that
// service's) or with a certificate (up to the visit's whole price); a
// moved booking paid with a package is not asked a deposit again.
func TestAVisitPaysWithABalance(t *testing.T) {
	f := setup(t, booking.WithOnlineDeposits())
	sys := bookingtest.System()
	colour := f.Service(t, f.salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 300000, Deposit: 100000})
	cut := f.Service(t, f.salon, booking.SalonService{Name: "Cut", DurationMin: 30, Price: 150000, Deposit: 50000})
	var ms []*booking.Master
	for range 2 {
		m := f.Master(t, f.salon, colour, cut)
		f.Shift(t, f.salon, m, f.day, 1, "10:00", "20:00")
		ms = append(ms, m)
	}
	phone := bookingtest.Phone()
	pkg, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{cut.ID},
		Visits: 2, Client: booking.ClientInput{Name: "Regular", Phone: phone}})
	if err != nil {
		t.Fatal(err)
	}
	visit := booking.BookRequest{SalonID: f.salon.ID, StartsAt: f.at("10:00"), Client: booking.ClientInput{Name: "Regular", Phone: phone},
		Items:   []booking.VisitItem{{ServiceID: colour.ID, MasterID: ms[0].ID}, {ServiceID: cut.ID, MasterID: ms[0].ID}},
		PayWith: &booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code}}
	v, err := f.Svc.Book(web(), visit)
	if err != nil {
		t.Fatal(err)
	}
	if v.PaidWith == nil || v.PaidWith.Visits != 1 || v.PaidWith.Remaining != 1 || v.Deposit != 100000 {
		t.Fatalf("a visit with a package of its cut: paid with %+v, deposit %v", v.PaidWith, v.Deposit)
	}
	// Read back, it says what of the visit's price it pays: the cut's.
	if view, err := f.Svc.BookingView(sys, f.salon.ID, v.ID); err != nil || view.PaidWith == nil || view.PaidWith.Covers != 150000 {
		t.Fatalf("the visit's package covers %+v (%v), want the cut's 1500.00", view.PaidWith, err)
	}
	cert, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalanceCertificate, Amount: 1000000})
	if err != nil {
		t.Fatal(err)
	}
	visit.StartsAt, visit.Client.Phone = f.at("14:00"), bookingtest.Phone()
	visit.PayWith = &booking.PayWith{Kind: booking.BalanceCertificate, Code: cert.Code}
	v, err = f.Svc.Book(web(), visit)
	if err != nil {
		t.Fatal(err)
	}
	if v.PaidWith == nil || v.PaidWith.Amount != 450000 || v.PaidWith.Remaining != 550000 || v.Deposit != 0 || v.Status != booking.StatusConfirmed {
		t.Fatalf("a visit with a certificate: paid with %+v, deposit %v, %s", v.PaidWith, v.Deposit, v.Status)
	}
	if view, err := f.Svc.BookingView(sys, f.salon.ID, v.ID); err != nil || view.PaidWith == nil || view.PaidWith.Covers != 450000 {
		t.Fatalf("the visit's certificate covers %+v (%v), want its 4500.00", view.PaidWith, err)
	}
	// Moved whole to the other master, dearer for the colour: the visit
	// takes that master's prices, the certificate still pays what it
	// reserved, and the rest is to pay at the salon.
	if _, err := f.Pool.Exec(context.Background(), `UPDATE master_services SET price = 4000 WHERE master_id = $1 AND service_id = $2`,
		ms[1].ID, colour.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Reschedule(booking.As(context.Background(), f.admin(1)), booking.RescheduleRequest{SalonID: f.salon.ID, BookingID: v.ID,
		StartsAt: f.at("16:30"), Items: []booking.VisitItem{{ServiceID: colour.ID, MasterID: ms[1].ID}, {ServiceID: cut.ID, MasterID: ms[1].ID}}}); err != nil {
		t.Fatal(err)
	}
	wentOver := f.get(t, v.ID)
	if got, due := booking.VisitPrice(&wentOver.Booking), booking.Money(-1); got != 550000 {
		t.Fatalf("the certificate's visit moved: price %v, want 5500.00, the new master's", got)
	} else if due, _ = wentOver.AtSalon(); due != 100000 || wentOver.PaidWith.Covers != 450000 {
		t.Fatalf("the certificate's visit moved: %v to pay at the salon, the certificate covering %v; want 1000.00 and 4500.00", due, wentOver.PaidWith.Covers)
	}
	// A cut paid with the package, moved to the other master: no deposit asked.
	r := booking.BookRequest{SalonID: f.salon.ID, ServiceID: cut.ID, MasterID: ms[1].ID, StartsAt: f.at("12:00"),
		Client: booking.ClientInput{Name: "Regular", Phone: phone}, PayWith: &booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code}}
	b := f.mustBook(t, r)
	if b.Deposit != 0 || b.Status != booking.StatusConfirmed {
		t.Fatalf("a cut with the package: deposit %v, %s", b.Deposit, b.Status)
	}
	moved, err := f.Svc.Reschedule(booking.As(context.Background(), f.admin(1)), booking.RescheduleRequest{SalonID: f.salon.ID, BookingID: b.ID,
		StartsAt: f.at("16:00"), MasterID: ms[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	view := f.get(t, moved.ID)
	if view.Deposit != 0 || view.DepositDue != 0 || view.Status != booking.StatusConfirmed || view.PaidWith == nil || view.PaidWith.Visits != 1 {
		t.Fatalf("moved: deposit %v, due %v, %s, paid with %+v", view.Deposit, view.DepositDue, view.Status, view.PaidWith)
	}
}

// TestACertificateBookingMovedToACheaperMasterSpendsItsPrice: a booking
// paid with a certificate and moved to a master whose price is lower takes
// that price; what is left to pay is nothing, and the visit, once made,
// spends the new price of the certificate and gives the rest back to it,
// in the same settlement.
func TestACertificateBookingMovedToACheaperMasterSpendsItsPrice(t *testing.T) {
	f := setup(t)
	sys := bookingtest.System()
	cut := f.Service(t, f.salon, booking.SalonService{Name: "Cut", DurationMin: 60, Price: 250000})
	anna, galina := f.Master(t, f.salon, cut), f.Master(t, f.salon, cut)
	for _, m := range []*booking.Master{anna, galina} {
		f.Shift(t, f.salon, m, f.day, 1, "10:00", "20:00")
	}
	if _, err := f.Pool.Exec(context.Background(), `UPDATE master_services SET price = 1500 WHERE master_id = $1 AND service_id = $2`,
		galina.ID, cut.ID); err != nil {
		t.Fatal(err)
	}
	cert, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalanceCertificate, Amount: 300000})
	if err != nil {
		t.Fatal(err)
	}
	b := f.mustBook(t, booking.BookRequest{SalonID: f.salon.ID, ServiceID: cut.ID, MasterID: anna.ID, StartsAt: f.at("12:00"),
		Client: booking.ClientInput{Name: "Vera", Phone: bookingtest.Phone()}, PayWith: &booking.PayWith{Code: cert.Code}})
	if b.Price != 250000 || b.PaidWith == nil || b.PaidWith.Amount != 250000 || b.PaidWith.Remaining != 50000 {
		t.Fatalf("booked: price %v, paid with %+v", b.Price, b.PaidWith)
	}
	staff := booking.As(context.Background(), f.admin(1))
	if _, err := f.Svc.Reschedule(staff, booking.RescheduleRequest{SalonID: f.salon.ID, BookingID: b.ID, StartsAt: f.at("14:00"),
		MasterID: galina.ID}); err != nil {
		t.Fatal(err)
	}
	moved := f.get(t, b.ID)
	if due, ok := moved.AtSalon(); moved.Price != 150000 || !ok || due != 0 || moved.PaidWith.Covers != 150000 {
		t.Fatalf("moved: price %v, %v to pay (%v), covering %v; want 1500.00, nothing, 1500.00", moved.Price, due, ok, moved.PaidWith.Covers)
	}
	f.Clock.Set(f.at("15:30"))
	if _, err := f.Svc.MarkCompleted(staff, b.ID); err != nil {
		t.Fatal(err)
	}
	l := readLedger(t, f, cert.ID)
	if l.remaining != 150000 || l.types["spend"] != 1 || l.types["release"] != 1 {
		t.Fatalf("the certificate after the visit: %+v, want 1500.00 left, a spend and a release", l)
	}
	var back int64
	if err := f.Pool.QueryRow(context.Background(), `SELECT delta FROM balance_entries WHERE balance_id = $1 AND booking_id = $2 AND type = 'release'`,
		cert.ID, b.ID).Scan(&back); err != nil || back != 100000 {
		t.Fatalf("given back %d (%v), want 1000.00", back, err)
	}
	// What it says it paid: before the visit, 1500.00 of the 2500.00 it
	// took, 1000.00 to come back; after, the 1500.00 it spent.
	if pays, back := moved.PaidWith.Pays(moved.Status); pays != 150000 || back != 100000 {
		t.Fatalf("before the visit it pays %v, %v back; want 1500.00 and 1000.00", pays, back)
	}
	if made := f.get(t, b.ID); made.PaidWith == nil {
		t.Fatal("the visit made has no balance")
	} else if pays, back := made.PaidWith.Pays(made.Status); pays != 150000 || back != 0 {
		t.Fatalf("the visit made: it paid %v, %v back; want 1500.00 and nothing", pays, back)
	}
}

// TestALatePaymentDoesNotTakeBackAGivenBackBalance: a certificate pays
// part of a deposit, the rest is left to pay online; the hold ends unpaid
// (the certificate has it back and is spent on another booking), then the
// client pays late: the booking is not taken again, the late money is
// released at the provider, and the certificate is spent once.
func TestALatePaymentDoesNotTakeBackAGivenBackBalance(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	ctx := bookingtest.System()
	cert, err := w.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: 30000})
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.Svc.Book(web(), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "11:00"), Client: booking.ClientInput{Name: "Gift", Phone: bookingtest.Phone()},
		PayWith: &booking.PayWith{Kind: booking.BalanceCertificate, Code: cert.Code}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != booking.StatusPending || b.Deposit != 70000 {
		t.Fatalf("booked: %s, deposit %v", b.Status, b.Deposit)
	}
	sess, err := w.Svc.StartPayment(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Clock.Advance(20 * time.Minute)
	if _, err := w.Svc.ExpireHolds(ctx); err != nil {
		t.Fatal(err)
	}
	other, err := w.Svc.Book(web(), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "15:00"), Client: booking.ClientInput{Name: "Friend", Phone: bookingtest.Phone()},
		PayWith: &booking.PayWith{Kind: booking.BalanceCertificate, Code: cert.Code}})
	if err != nil || other.PaidWith == nil || other.PaidWith.Amount != 30000 {
		t.Fatalf("the certificate given back, spent again: %+v (%v)", other, err)
	}
	if !w.fake.Pay(sess.ExternalID) {
		t.Fatal("pay")
	}
	if _, err := w.Svc.PaymentNotified(ctx, "yookassa", sess.ExternalID); err != nil {
		t.Fatal(err)
	}
	bookingtest.WaitFor(t, 10*time.Second, "the late money released", func() bool {
		_, _ = w.Svc.SweepPayments(ctx)
		return w.fake.Status(sess.ExternalID) == "canceled"
	})
	if bs, _ := w.status(b.ID); bs != booking.StatusCancelled {
		t.Fatalf("the booking paid late: %s, want cancelled", bs)
	}
	// The history says why: the certificate went back, not the time.
	if n := w.count(`SELECT count(*) FROM payment_events WHERE session_id = $1 AND to_status = 'canceling'
		AND detail LIKE '%certificate it used given back%'`, sess.ID); n != 1 {
		t.Fatalf("%d events releasing the late money for the certificate given back, want 1", n)
	}
	var reserved, left int64
	if err := w.Pool.QueryRow(context.Background(), `SELECT COALESCE(-sum(delta) FILTER (WHERE type = 'reserve'), 0) -
		COALESCE(sum(delta) FILTER (WHERE type = 'release'), 0), (SELECT remaining FROM balances WHERE id = $1)
		FROM balance_entries WHERE balance_id = $1`, cert.ID).Scan(&reserved, &left); err != nil {
		t.Fatal(err)
	}
	if reserved != 30000 || left != 0 {
		t.Fatalf("the certificate: %d held by live bookings, %d left; want 30000 and 0", reserved, left)
	}
}

// TestACertificateAndADepositOnlineMovedToACheaperMaster: a deposit paid
// online, the rest of the price paid at the desk with a certificate; the
// booking moved to a master whose price is lower: the certificate covers
// what the deposit leaves of the new price, nothing is left to pay, and
// the visit spends that much of it, the rest back on it.
func TestACertificateAndADepositOnlineMovedToACheaperMaster(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	b := w.book("11:00")
	if s := w.paid(b); s.Status != booking.PayCompleted && s.Status != booking.PayAuthorized {
		t.Fatalf("the deposit: %+v", s)
	}
	w.sweep(2) // (captured)
	cert, err := w.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: 500000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.ApplyBalance(w.staff(), w.salon.ID, b.ID, booking.PayWith{Code: cert.Code}); err != nil {
		t.Fatal(err)
	}
	cheaper := w.anotherMaster()
	if _, err := w.Pool.Exec(context.Background(), `UPDATE master_services SET price = 2000 WHERE master_id = $1 AND service_id = $2`,
		cheaper.ID, w.svc.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Reschedule(w.staff(), booking.RescheduleRequest{SalonID: w.salon.ID, BookingID: b.ID,
		StartsAt: bookingtest.At(w.salon, w.day, "13:00"), MasterID: cheaper.ID}); err != nil {
		t.Fatal(err)
	}
	v, err := w.Svc.BookingView(w.staff(), w.salon.ID, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if due, ok := v.AtSalon(); v.Price != 200000 || v.Held != 100000 || v.PaidWith.Amount != 400000 || v.PaidWith.Covers != 100000 || !ok || due != 0 {
		t.Fatalf("moved: price %v, held %v, paid with %+v, %v to pay", v.Price, v.Held, v.PaidWith, due)
	}
	w.Clock.Set(bookingtest.At(w.salon, w.day, "14:30"))
	if _, err := w.Svc.MarkCompleted(w.staff(), b.ID); err != nil {
		t.Fatal(err)
	}
	var left, back int64
	if err := w.Pool.QueryRow(context.Background(), `SELECT remaining, (SELECT delta FROM balance_entries WHERE balance_id = $1 AND type = 'release')
		FROM balances WHERE id = $1`, cert.ID).Scan(&left, &back); err != nil || left != 400000 || back != 300000 {
		t.Fatalf("the certificate after the visit: %d left, %d back (%v); want 4000.00 and 3000.00", left, back, err)
	}
}

// TestAReplayCountsTheDepositPaidSince: a booking paid in part with a
// certificate and in part with a deposit online, sent again under its
// idempotency key after the deposit was paid, says what is left to pay at
// the salon as the booking is now: the price less both.
func TestAReplayCountsTheDepositPaidSince(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	cert, err := w.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: 50000})
	if err != nil {
		t.Fatal(err)
	}
	r := booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.svc.ID, MasterID: w.master.ID, StartsAt: bookingtest.At(w.salon, w.day, "11:00"),
		Client: booking.ClientInput{Name: "Payer", Phone: bookingtest.Phone()}, IdempotencyKey: "replay-after-deposit",
		PayWith: &booking.PayWith{Kind: booking.BalanceCertificate, Code: cert.Code}}
	b, err := w.Svc.Book(web(), r)
	if err != nil {
		t.Fatal(err)
	}
	// 5 000 ₽: 500 ₽ of the 1 000 ₽ deposit paid by the certificate, 500 ₽
	// online, 4 000 ₽ at the salon.
	if due, ok := booking.DueAtSalon(b); b.Status != booking.StatusPending || b.Deposit != 50000 || !ok || due != 400000 {
		t.Fatalf("booked: %s, deposit %v, %v to pay at the salon", b.Status, b.Deposit, due)
	}
	w.paid(b)
	w.sweep(2) // (captured)
	again, err := w.Svc.Book(web(), r)
	if err != nil {
		t.Fatal(err)
	}
	if due, ok := booking.DueAtSalon(again); again.ID != b.ID || again.Status != booking.StatusConfirmed || again.Held != 50000 || !ok || due != 400000 {
		t.Fatalf("replayed after the deposit was paid: #%d %s, held %v, %v to pay at the salon; want #%d confirmed, 500 ₽ held, 4 000 ₽",
			again.ID, again.Status, again.Held, due, b.ID)
	}
}

// TestTriesOfACodeAreDecidedInTurn: a try with the package's client's own
// phone, sent while six tries of the code with other phones are under way
// before it, is decided after them, by booking (one service or a visit)
// and by the lookup alike: the sixth locked the code, so it is refused
// too. Tries sent at once learn no more than as many sent one by one.
func TestTriesOfACodeAreDecidedInTurn(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	tries := codeTries(f)
	for _, how := range []string{"booking", "visit", "lookup"} {
		phone := bookingtest.Phone()
		pkg, _ := aPackage(t, f, 3, phone)
		// A try under way holds the code's lock.
		holder := holdLock(t, f, booking.CodeLockKey(pkg.Code))
		const others = 6
		results := make([]chan error, others+1)
		waiting := func(n int) {
			t.Helper()
			bookingtest.WaitFor(t, 10*time.Second, fmt.Sprintf("%s: %d tries waiting for the code's lock", how, n), func() bool {
				select {
				case err := <-results[n-1]: // (answered: it did not wait)
					t.Fatalf("%s: try %d answered without waiting for the code's lock: %v", how, n, err)
				default:
				}
				var got int
				if err := f.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
				AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
					AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`, booking.CodeLockKey(pkg.Code)).Scan(&got); err != nil {
					t.Fatal(err)
				}
				return got == n
			})
		}
		// Six other phones, then the client's own, each queued behind the
		// one before (the lock's queue is first come, first served).
		for i := range results {
			p := bookingtest.Phone()
			if i == others {
				p = phone
			}
			results[i] = make(chan error, 1)
			go func() { results[i] <- tries[how](pkg.Code, p, i) }()
			waiting(i + 1)
		}
		if err := holder.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		for i, c := range results {
			why, err := refusalOf(t, fmt.Sprintf("%s: try %d", how, i+1), c)
			want := "another client's"
			if i >= 5 {
				want = "too many other phones" // the sixth locks it, for every phone
			}
			if !strings.Contains(why, want) {
				t.Fatalf("%s: try %d (the client's own: %v): %v, want %q", how, i+1, i == others, err, want)
			}
		}
		if l := readLedger(t, f, pkg.ID); l.remaining != 3 || l.types["reserve"] != 0 {
			t.Fatalf("%s: after the tries: %+v", how, l)
		}
	}
}

// codeTries are the ways a client tries a package's code, by name: the
// i-th try books (one service, or a visit of two) on master i mod 3 at
// 10+i o'clock, or looks the code up.
func codeTries(f *fixture) map[string]func(code, phone string, i int) error {
	return map[string]func(code, phone string, i int) error{
		"booking": func(code, phone string, i int) error {
			r := f.req(f.masters[i%len(f.masters)], fmt.Sprintf("%02d:00", 10+i))
			r.Client.Phone, r.PayWith = phone, &booking.PayWith{Kind: booking.BalancePackage, Code: code}
			_, err := f.Svc.Book(web(), r)
			return err
		},
		"visit": func(code, phone string, i int) error {
			r := f.req(f.masters[i%len(f.masters)], fmt.Sprintf("%02d:00", 10+i))
			r.Items = []booking.VisitItem{{ServiceID: f.svc.ID, MasterID: r.MasterID}, {ServiceID: f.svc.ID, MasterID: r.MasterID}}
			r.ServiceID, r.MasterID = 0, 0
			r.Client.Phone, r.PayWith = phone, &booking.PayWith{Kind: booking.BalancePackage, Code: code}
			_, err := f.Svc.Book(web(), r)
			return err
		},
		"lookup": func(code, phone string, _ int) error {
			_, err := f.Svc.CheckBalance(web(), f.salon.ID, code, booking.BalanceUse{Phone: phone})
			return err
		},
	}
}

// holdLock holds the advisory lock of key in a transaction of its own
// until it is rolled back (at the test's end at the latest).
func holdLock(t *testing.T, f *fixture, key string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := f.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) }) //nolint:errcheck
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
		t.Fatal(err)
	}
	return tx
}

// refusalOf waits (with a deadline) for the answer of a try of a code
// and returns why pay_with was refused ("" if it was not).
func refusalOf(t *testing.T, what string, c chan error) (string, error) {
	t.Helper()
	select {
	case err := <-c:
		var ve *booking.ValidationError
		if errors.As(err, &ve) {
			return ve.Fields["pay_with"].String(), err
		}
		return "", err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s not answered", what)
		return "", nil
	}
}

// waitForLockWaiters waits until n transactions wait for the advisory lock
// of key (hashtextextended(key, 0)).
func waitForLockWaiters(t *testing.T, f *fixture, what, key string, n int) {
	t.Helper()
	bookingtest.WaitFor(t, 10*time.Second, what, func() bool {
		var got int
		if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
				AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`, key).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got == n
	})
}

// TestATryOfACodeKeepsItsTurnAtABusyMaster: a try of a code that gets the
// code's lock while its master is busy with another booking waits for
// the master holding the code's lock, so the tries queued behind it are
// decided after it: the first of six other phones is told "another
// client's", and the sixth, not the first, locks the code.
func TestATryOfACodeKeepsItsTurnAtABusyMaster(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	tries := codeTries(f)
	for _, how := range []string{"booking", "visit"} {
		pkg, _ := aPackage(t, f, 3, bookingtest.Phone())
		codeKey, masterKey := booking.CodeLockKey(pkg.Code), fmt.Sprintf("booking-master:%d", f.masters[0].ID)
		busy, code := holdLock(t, f, masterKey), holdLock(t, f, codeKey)
		// The first try is on the busy master (try 0: master 0), the five
		// after it on the others (tries 1, 2, 4, 5, 7).
		results := make([]chan error, 6)
		for n, i := range []int{0, 1, 2, 4, 5, 7} {
			results[n] = make(chan error, 1)
			go func() { results[n] <- tries[how](pkg.Code, bookingtest.Phone(), i) }()
			waitForLockWaiters(t, f, fmt.Sprintf("%s: %d tries waiting for the code's lock", how, n+1), codeKey, n+1)
		}
		if err := code.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		waitForLockWaiters(t, f, how+": the first try, holding the code's lock, waiting for its master", masterKey, 1)
		if err := busy.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		for n, c := range results {
			why, err := refusalOf(t, fmt.Sprintf("%s: try %d", how, n+1), c)
			want := "another client's"
			if n == 5 {
				want = "too many other phones"
			}
			if !strings.Contains(why, want) {
				t.Fatalf("%s: try %d: %v, want %q", how, n+1, err, want)
			}
		}
	}
}

// TestACodeThatIsNobodysWaitsAtTheGate: tries of codes that are no
// balance's have no turn to keep: on a busy master they wait at its gate,
// without a connection, as any booking does (one of them in the
// database), so made-up codes cannot take the connections other salons
// need.
func TestACodeThatIsNobodysWaitsAtTheGate(t *testing.T) {
	f := setup(t)
	m := f.masters[0]
	release := bookingtest.HoldMaster(t, f.Pool, m.ID)
	const n = 6
	results := make(chan error, n)
	for i := range n {
		go func() {
			r := f.req(m, fmt.Sprintf("%02d:00", 10+i))
			r.PayWith = &booking.PayWith{Kind: booking.BalanceCertificate, Code: fmt.Sprintf("NOPE-%04d-%04d", i, i)}
			_, err := f.Svc.Book(web(), r)
			results <- err
		}()
	}
	bookingtest.WaitFor(t, 10*time.Second, "the made-up codes' tries at the master's gate", func() bool {
		return booking.GateWaiting(f.Svc, m.ID) == n
	})
	waitForLockWaiters(t, f, "one of them waiting in the database", fmt.Sprintf("booking-master:%d", m.ID), 1)
	release()
	for range n {
		select {
		case err := <-results:
			var ve *booking.ValidationError
			if !errors.As(err, &ve) || ve.Fields["pay_with"].String() == "" {
				t.Errorf("a made-up code: %v, want a refusal of pay_with", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a try not answered")
		}
	}
}

// TestACodesTurnAndItsMasterShareOneLockWait: a try of a balance's code
// waits for the code's turn and for its busy master within one lock wait
// in all, not one each.
func TestACodesTurnAndItsMasterShareOneLockWait(t *testing.T) {
	const wait = 2 * time.Second
	f := setup(t, booking.WithLockWait(wait))
	ctx := context.Background()
	tries := codeTries(f)
	bookingtest.HoldMaster(t, f.Pool, f.masters[0].ID) // (held to the end)
	for _, how := range []string{"booking", "visit"} {
		pkg, _ := aPackage(t, f, 3, bookingtest.Phone())
		code := holdLock(t, f, booking.CodeLockKey(pkg.Code))
		start := time.Now()
		result := make(chan error, 1)
		go func() { result <- tries[how](pkg.Code, bookingtest.Phone(), 0) }() // (master 0)
		waitForLockWaiters(t, f, how+": the try waiting for the code's turn", booking.CodeLockKey(pkg.Code), 1)
		// Its turn comes three quarters into the lock wait.
		<-time.After(time.Until(start.Add(wait * 3 / 4)))
		if err := code.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-result:
			if took := time.Since(start); !errors.Is(err, booking.ErrUnavailable) || took > wait*3/2 {
				t.Errorf("%s: answered %v after %v, want unavailable within about %v (the turn and the master share it)", how, err, took, wait)
			}
		case <-time.After(4 * wait):
			t.Fatalf("%s: not answered", how)
		}
	}
}

// TestPhonesTriedAtOnceAreCountedInTurn: twenty bookings with a package's
// code released at once from a barrier, nineteen with phones not its
// client's and one with its client's: they are decided in turn (the
// code's lock), so exactly five are told "another client's", the sixth
// locks the code, and the tries after it are refused as locked, as when
// they come one by one. Its client's phone books only if its turn came
// before the sixth miss.
func TestPhonesTriedAtOnceAreCountedInTurn(t *testing.T) {
	f := setup(t)
	phone := bookingtest.Phone()
	pkg, _ := aPackage(t, f, 3, phone)
	const n = 20
	phones := make([]string, n)
	for i := range phones {
		phones[i] = bookingtest.Phone()
	}
	phones[n/2] = phone
	errs := race(n, func(i int) error {
		r := f.req(f.masters[i%len(f.masters)], fmt.Sprintf("%02d:00", 10+i%8))
		r.Client.Phone, r.PayWith = phones[i], &booking.PayWith{Kind: booking.BalancePackage, Code: pkg.Code}
		_, err := f.Svc.Book(booking.As(context.Background(), booking.Visitor()), r)
		return err
	})
	var others, locked, booked, rest int
	for i, err := range errs {
		var ve *booking.ValidationError
		switch {
		case err == nil:
			booked++
			if phones[i] != phone {
				t.Errorf("booked with a wrong phone")
			}
		case errors.As(err, &ve) && strings.Contains(ve.Fields["pay_with"].String(), "another client's"):
			others++
		case errors.As(err, &ve) && strings.Contains(ve.Fields["pay_with"].String(), "too many other phones"):
			locked++
		default:
			rest++ // (a time taken by another try: not about the code)
			t.Logf("try %d: %v", i, err)
		}
	}
	var misses int
	if err := f.Pool.QueryRow(context.Background(), `SELECT COALESCE((SELECT misses FROM balance_phone_misses WHERE balance_id = $1), 0)`,
		pkg.ID).Scan(&misses); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d booked, %d told another client's, %d locked, %d else; %d misses counted", booked, others, locked, rest, misses)
	// Decided in turn (the code's lock): the first five other phones are
	// told, the sixth locks the code, and every try after it, the client's
	// own phone too if it came later, is refused without being counted.
	if others != 5 || misses != 6 || others+locked+booked+rest != n || booked > 1 || others+locked < n-1-rest {
		t.Fatalf("%d told another client's, %d locked, %d booked, %d misses counted: tries at once passed the count", others, locked, booked, misses)
	}
}

// dayMarks are the balance marks of the day's calendar, by "15:04
// Service": the kind that pays it ("" none), " in part" after a
// certificate's that leaves part of it to pay at the salon.
func dayMarks(t *testing.T, f *fixture, ctx context.Context) map[string]booking.BalanceKind {
	t.Helper()
	cal, err := f.Svc.Calendar(ctx, booking.CalendarQuery{SalonID: f.salon.ID, First: f.day, Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	marks := map[string]booking.BalanceKind{}
	for _, l := range cal.Bookings {
		mark := l.PaidWith
		if l.InPart {
			mark += " in part"
		}
		marks[l.StartsAt.In(f.salon.Location()).Format("15:04")+" "+l.ServiceName] = mark
	}
	return marks
}

// TestAVisitIsPaidWithABalanceAtTheDesk: at the desk, a visit of two
// services (a colour, then a cut) booked first is paid from either of its
// pages with a package of the cut (its visit: the cut's price paid, the
// colour's left to pay at the salon) or with a certificate smaller than
// the visit's price (all of it paid, the rest at the salon).
func TestAVisitIsPaidWithABalanceAtTheDesk(t *testing.T) {
	f := setup(t)
	sys := bookingtest.System()
	desk := booking.As(context.Background(), f.admin(1))
	colour := f.Service(t, f.salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 300000})
	cut := f.Service(t, f.salon, booking.SalonService{Name: "Cut", DurationMin: 30, Price: 150000})
	m := f.Master(t, f.salon, colour, cut)
	f.Shift(t, f.salon, m, f.day, 1, "10:00", "20:00")
	phone := bookingtest.Phone()
	pkg, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{cut.ID},
		Visits: 3, Client: booking.ClientInput{Name: "Regular", Phone: phone}})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalanceCertificate, Amount: 200000})
	if err != nil {
		t.Fatal(err)
	}
	big, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalanceCertificate, Amount: 1000000})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at       string
		page     int // the visit's service whose page pays
		pay      booking.PayWith
		covers   booking.Money
		atSalon  booking.Money
		unitLeft int64
	}{
		{"10:00", 1, booking.PayWith{Kind: booking.BalancePackage, BalanceID: pkg.ID}, 150000, 300000, 2},
		{"12:00", 0, booking.PayWith{Code: cert.Code}, 200000, 250000, 0},
		{"14:00", 0, booking.PayWith{Code: big.Code}, 450000, 0, 550000},
	} {
		v := f.mustBook(t, booking.BookRequest{SalonID: f.salon.ID, StartsAt: f.at(c.at), Client: booking.ClientInput{Name: "Regular", Phone: phone},
			Items: []booking.VisitItem{{ServiceID: colour.ID, MasterID: m.ID}, {ServiceID: cut.ID, MasterID: m.ID}}})
		paid, err := f.Svc.ApplyBalance(desk, f.salon.ID, v.Segments[c.page].ID, c.pay)
		if err != nil {
			t.Fatalf("%s: pay the visit from its service %d: %v", c.at, c.page, err)
		}
		if paid.PaidWith == nil || paid.PaidWith.Remaining != c.unitLeft {
			t.Errorf("%s: paid with %+v, want %d left", c.at, paid.PaidWith, c.unitLeft)
		}
		view := f.get(t, v.ID)
		if due, ok := view.AtSalon(); view.PaidWith == nil || view.PaidWith.Covers != c.covers || !ok || due != c.atSalon {
			t.Errorf("%s: the visit paid with %+v, %v to pay at the salon; want %v covered and %v", c.at, view.PaidWith, due, c.covers, c.atSalon)
		}
	}
	// The day's calendar marks the cut the package paid, not the colour
	// beside it; a certificate's visit, both (it pays toward the visit),
	// saying so when it pays part of it (the rest is due at the salon).
	marks := dayMarks(t, f, desk)
	want := map[string]booking.BalanceKind{"10:00 Colour": "", "11:00 Cut": booking.BalancePackage,
		"12:00 Colour": "certificate in part", "13:00 Cut": "certificate in part", "14:00 Colour": booking.BalanceCertificate,
		"15:00 Cut": booking.BalanceCertificate}
	if fmt.Sprint(marks) != fmt.Sprint(want) {
		t.Errorf("the calendar marks %v, want %v", marks, want)
	}
}

// TestAPackageOfSeveralServicesPaysEachOfAVisit: a package of a colour and
// a cut ("each visit is of any one ticked") pays a visit of both with a
// visit of it for each: both prices paid, the colour's deposit covered,
// both marked paid on the day's calendar, a manicure beside them due at
// the salon. With one visit left, it pays the first of them in visit
// order, the other's deposit asked. A cancellation the policy keeps
// keeps the visits of the services that ask a deposit (the colour's) and
// gives back the rest (the cut's); a missed visit spends both. At the
// desk, it pays the same, and keeps the same.
func TestAPackageOfSeveralServicesPaysEachOfAVisit(t *testing.T) {
	f := setup(t, booking.WithOnlineDeposits())
	sys := bookingtest.System()
	ctx := context.Background()
	desk := booking.As(ctx, f.admin(1))
	colour := f.Service(t, f.salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 300000, Deposit: 100000})
	cut := f.Service(t, f.salon, booking.SalonService{Name: "Cut", DurationMin: 30, Price: 150000, Deposit: 50000})
	nails := f.Service(t, f.salon, booking.SalonService{Name: "Nails", DurationMin: 30, Price: 100000})
	m := f.Master(t, f.salon, colour, cut, nails)
	f.Shift(t, f.salon, m, f.day, 1, "10:00", "21:00")
	if _, err := f.Pool.Exec(ctx, `UPDATE services SET deposit = 0 WHERE id = $1`, cut.ID); err != nil {
		t.Fatal(err) // (the cut asks no deposit: a kept cancellation gives its visit back)
	}
	phone := bookingtest.Phone()
	client := booking.ClientInput{Name: "Regular", Phone: phone}
	issue := func(visits int) *booking.Balance {
		t.Helper()
		p, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{colour.ID, cut.ID},
			Visits: visits, Client: client})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pkg := issue(6)
	visit := func(at string, pay *booking.PayWith, services ...*booking.SalonService) *booking.Booking {
		t.Helper()
		r := booking.BookRequest{SalonID: f.salon.ID, StartsAt: f.at(at), Client: client, PayWith: pay}
		for _, sv := range services {
			r.Items = append(r.Items, booking.VisitItem{ServiceID: sv.ID, MasterID: m.ID})
		}
		b, err := f.Svc.Book(desk, r)
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		return b
	}
	count := func(sql string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := f.Pool.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	units := func(b *booking.Booking) int64 {
		return count(`SELECT COALESCE(-sum(delta), 0) FROM balance_entries WHERE booking_id = $1 AND type = 'reserve'`, b.ID)
	}
	byID := &booking.PayWith{Kind: booking.BalancePackage, BalanceID: pkg.ID}

	// Both services of a visit, the nails beside them: two visits.
	both := visit("10:00", byID, colour, cut, nails)
	if both.PaidWith == nil || both.PaidWith.Visits != 2 || both.PaidWith.Remaining != 4 || both.Deposit != 0 || units(both) != 2 {
		t.Fatalf("a visit of both: paid with %+v, deposit %v, %d reserved", both.PaidWith, both.Deposit, units(both))
	}
	view := f.get(t, both.ID)
	if due, ok := view.AtSalon(); view.PaidWith == nil || view.PaidWith.Covers != 450000 || !ok || due != 100000 || view.PaidWith.Keeps != 1 {
		t.Fatalf("a visit of both: %+v, %v to pay at the salon; want 4500.00 covered, the nails' 1000.00 due, the colour's visit kept by the policy",
			view.PaidWith, due)
	}
	marks := dayMarks(t, f, desk)
	if want := map[string]booking.BalanceKind{"10:00 Colour": booking.BalancePackage, "11:00 Cut": booking.BalancePackage, "11:30 Nails": ""}; fmt.Sprint(marks) != fmt.Sprint(want) {
		t.Errorf("the calendar marks %v, want %v", marks, want)
	}
	// Another, to be missed: two more.
	missed := visit("12:00", byID, colour, cut)
	// At the desk, a visit booked first: the last two.
	desked := visit("14:00", nil, cut, colour)
	paid, err := f.Svc.ApplyBalance(desk, f.salon.ID, desked.ID, *byID)
	if err != nil {
		t.Fatal(err)
	}
	if paid.PaidWith == nil || paid.PaidWith.Visits != 2 || paid.PaidWith.Remaining != 0 || paid.PaidWith.Keeps != 1 {
		t.Fatalf("paid at the desk: %+v, want two visits, none left, the colour's kept by the policy", paid.PaidWith)
	}
	// One left of another: the first of the visit's services it is for.
	one := issue(1)
	last := visit("16:00", &booking.PayWith{Kind: booking.BalancePackage, BalanceID: one.ID}, cut, colour)
	if last.PaidWith == nil || last.PaidWith.Visits != 1 || last.PaidWith.Remaining != 0 || last.Deposit != 100000 {
		t.Fatalf("one visit left: paid with %+v, deposit %v; want the cut paid, the colour's deposit asked", last.PaidWith, last.Deposit)
	}
	if v := f.get(t, last.ID); v.PaidWith == nil || v.PaidWith.Covers != 150000 {
		t.Fatalf("one visit left covers %+v, want the cut's 1500.00", v.PaidWith)
	}
	// Cancelled at the client's request under a policy that keeps
	// deposits: the colour's visit kept, the cut's back.
	s := *f.salon
	s.RefundPolicy = booking.RefundNever
	if _, err := f.Svc.UpdateSalon(sys, s); err != nil {
		t.Fatal(err)
	}
	for _, b := range []*booking.Booking{both, desked} {
		if _, err := f.Svc.Cancel(desk, booking.CancelRequest{SalonID: f.salon.ID, BookingID: b.ID, ForClient: true}); err != nil {
			t.Fatal(err)
		}
	}
	if l := readLedger(t, f, pkg.ID); l.remaining != 2 {
		t.Fatalf("two kept cancellations of visits of both: %+v, want 2 back (the cuts')", l)
	}
	// Missed: both spent.
	f.Clock.Set(f.at("13:00"))
	if _, err := f.Svc.MarkNoShow(desk, missed.ID); err != nil {
		t.Fatal(err)
	}
	spent := count(`SELECT count(*) FROM balance_entries WHERE booking_id = $1 AND type = 'spend'`, missed.ID)
	back := count(`SELECT count(*) FROM balance_entries WHERE booking_id = $1 AND type = 'release'`, missed.ID)
	if l := readLedger(t, f, pkg.ID); l.remaining != 2 || spent != 1 || back != 0 {
		t.Fatalf("a missed visit of both: %+v, %d spends, %d releases; want both spent", l, spent, back)
	}
	// Paid at the desk after the salon stopped asking the deposit it was
	// booked with: the policy still keeps its visit.
	asked := visit("18:00", nil, colour)
	if _, err := f.Pool.Exec(ctx, `UPDATE services SET deposit = 0 WHERE id = $1`, colour.ID); err != nil {
		t.Fatal(err)
	}
	if paid, err := f.Svc.ApplyBalance(desk, f.salon.ID, asked.ID, booking.PayWith{Kind: booking.BalancePackage, BalanceID: issue(1).ID}); err != nil ||
		paid.PaidWith == nil || paid.PaidWith.Keeps != 1 {
		t.Fatalf("paid at the desk, the deposit since dropped: %+v (%v), want its visit kept by the policy", paid, err)
	}
}
