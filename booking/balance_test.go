package booking_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"salon/booking"
	"salon/booking/bookingtest"
)

// TestBalancesAreTheirLedger: a certificate and a package are issued with
// their credit; the code finds them however it is typed, and only at
// their salon; the ledger is the balance (remaining is the entries' sum);
// an entry that would overdraw is refused by the database, and an entry
// is never changed.
func TestBalancesAreTheirLedger(t *testing.T) {
	f := setup(t)
	sys := bookingtest.System()
	cert, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalanceCertificate, Amount: 500000})
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{f.svc.ID},
		Visits: 5, Client: booking.ClientInput{Name: "Regular", Phone: bookingtest.Phone()}, ValidUntil: f.day.AddDays(90)})
	if err != nil {
		t.Fatal(err)
	}
	if len(cert.Code) != 14 || cert.Remaining != 500000 || pkg.Remaining != 5 || pkg.ClientID == 0 {
		t.Fatalf("issued %+v and %+v", cert, pkg)
	}
	// However it is typed: lower case, spaces, tabs, en and em dashes, minus signs,
	// the Cyrillic letters a Russian keyboard types for Latin ones.
	cyrillic := strings.NewReplacer("A", "А", "B", "В", "E", "Е", "K", "К", "M", "М", "H", "Н", "P", "Р", "C", "С", "T", "Т",
		"X", "Х", "Y", "У")
	for _, typed := range []string{strings.ToLower(strings.ReplaceAll(pkg.Code, "-", " ")), "\t" + pkg.Code + " \n",
		strings.ReplaceAll(pkg.Code, "-", "\u2013"), strings.ReplaceAll(pkg.Code, "-", " \u2014 "), strings.ReplaceAll(pkg.Code, "-", "\u2212"), cyrillic.Replace(pkg.Code),
		strings.ToLower(cyrillic.Replace(pkg.Code))} {
		got, err := f.Svc.BalanceByCode(web(), f.salon.ID, typed)
		if err != nil || got.ID != pkg.ID || got.Remaining != 5 || got.ExpiresOn != f.day.AddDays(90) || got.Kind != booking.BalancePackage {
			t.Fatalf("by code %q: %+v (%v)", typed, got, err)
		}
	}
	other := f.Salon(t, booking.Salon{})
	if _, err := f.Svc.BalanceByCode(web(), other.ID, cert.Code); !errors.Is(err, booking.ErrNotFound) {
		t.Fatalf("another salon's code: %v", err)
	}
	for _, bad := range []booking.BalanceIssue{
		{SalonID: f.salon.ID, Kind: booking.BalanceCertificate},
		{SalonID: f.salon.ID, Kind: booking.BalancePackage, Visits: 3},
		{SalonID: f.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{f.svc.ID}, Visits: 0, Client: booking.ClientInput{Name: "X", Phone: bookingtest.Phone()}},
		{SalonID: f.salon.ID, Kind: "voucher"},
	} {
		if _, err := f.Svc.IssueBalance(sys, bad); !errors.Is(err, booking.ErrInvalid) {
			t.Errorf("issuing %+v: %v, want invalid", bad, err)
		}
	}
	if _, err := f.Svc.IssueBalance(booking.As(context.Background(), booking.Visitor()), booking.BalanceIssue{SalonID: f.salon.ID,
		Kind: booking.BalanceCertificate, Amount: 100}); !errors.Is(err, booking.ErrForbidden) {
		t.Fatalf("a visitor issues: %v", err)
	}
	ctx := context.Background()
	var pgErr *pgconn.PgError
	// Overdrawing: refused by the database itself.
	_, err = f.Pool.Exec(ctx, `INSERT INTO balance_entries (balance_id, salon_id, type, delta) VALUES ($1, $2, 'refund', -6)`, pkg.ID, f.salon.ID)
	if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
		t.Fatalf("an entry overdrawing the package: %v, want a check violation", err)
	}
	_, err = f.Pool.Exec(ctx, `UPDATE balance_entries SET delta = 100 WHERE balance_id = $1`, pkg.ID)
	if err == nil {
		t.Fatal("an entry was changed")
	}
	// Whatever path writes them, entries and balances keep their shape
	// (each refused write names the invariant it broke, and writes nothing).
	booked := f.mustBook(t, f.req(f.masters[0], "10:00")).ID
	for _, bad := range []struct{ sql, constraint string }{
		{`INSERT INTO balance_entries (balance_id, salon_id, type, delta) VALUES ($1, $2, 'gift', 5)`, "balance_entries_type_check"},
		{`INSERT INTO balance_entries (balance_id, salon_id, type, delta) VALUES ($1, $2, 'credit', -5)`, "balance_entries_check"},
		{`INSERT INTO balance_entries (balance_id, salon_id, type, delta) VALUES ($1, $2, 'refund', 1)`, "balance_entries_check"},
		{`INSERT INTO balance_entries (balance_id, salon_id, type, delta, booking_id) VALUES ($1, $2, 'spend', -1, $3)`, "balance_entries_check"},
		{`INSERT INTO balance_entries (balance_id, salon_id, type, delta, booking_id) VALUES ($1, $2, 'release', 0, $3)`, "balance_entries_check"},
		{`INSERT INTO balance_entries (balance_id, salon_id, type, delta) VALUES ($1, $2, 'reserve', -1)`, "balance_entries_check1"},
		{`INSERT INTO balance_entries (balance_id, salon_id, type, delta, booking_id) VALUES ($1, $2, 'credit', 1, $3)`, "balance_entries_check1"},
		{`UPDATE balances SET total = 0 WHERE id = $1 AND salon_id = $2`, "balances_total_check"},
		{`UPDATE balances SET kind = 'voucher' WHERE id = $1 AND salon_id = $2`, "balances_kind_check"},
		{`UPDATE balances SET paid_via = 'cash' WHERE id = $1 AND salon_id = $2`, "balances_paid_via_check"},
		{`UPDATE balances SET client_id = NULL WHERE id = $1 AND salon_id = $2`, "balances_check"},
		{`UPDATE balances SET remaining = -1 WHERE id = $1 AND salon_id = $2`, "balances_remaining_check"},
	} {
		args := []any{pkg.ID, f.salon.ID}
		if strings.Contains(bad.sql, "$3") {
			args = append(args, booked)
		}
		_, err := f.Pool.Exec(ctx, bad.sql, args...)
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" || pgErr.ConstraintName != bad.constraint {
			t.Errorf("%s: %v, want a check violation of %s", bad.sql, err, bad.constraint)
		}
	}
	for _, bad := range []struct{ sql, constraint string }{
		{`UPDATE balances SET client_id = (SELECT client_id FROM balances WHERE id = $2) WHERE id = $1`, "balances_check"},
		{`UPDATE balances SET service_ids = '{1}' WHERE id = $1 AND $2::bigint > 0`, "balances_check1"},
	} {
		_, err := f.Pool.Exec(ctx, bad.sql, cert.ID, pkg.ID)
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" || pgErr.ConstraintName != bad.constraint {
			t.Errorf("%s: %v, want a check violation of %s", bad.sql, err, bad.constraint)
		}
	}
	ledger, err := f.Svc.BalanceLedger(sys, f.salon.ID, pkg.ID)
	if err != nil || len(ledger) != 1 || ledger[0].Type != booking.EntryCredit || ledger[0].Delta != 5 {
		t.Fatalf("the package's ledger: %+v (%v)", ledger, err)
	}
}

// TestOneVisitLeftIsSpentOnce: a package with one visit left, and ten
// transactions reserving it at once (raw SQL, as any path would): the
// database lets exactly one through; the balance is 0 and equals the sum
// of its entries, which are one credit and one reservation.
func TestOneVisitLeftIsSpentOnce(t *testing.T) {
	f := setup(t)
	sys := bookingtest.System()
	pkg, err := f.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{f.svc.ID},
		Visits: 1, Client: booking.ClientInput{Name: "Regular", Phone: bookingtest.Phone()}})
	if err != nil {
		t.Fatal(err)
	}
	var bookings []int64
	for _, hhmm := range []string{"10:00", "11:00", "12:00", "13:00", "14:00", "15:00", "16:00", "17:00", "18:00", "19:00"} {
		bookings = append(bookings, f.mustBook(t, f.req(f.masters[0], hhmm)).ID)
	}
	errs := race(len(bookings), func(i int) error {
		_, err := f.Pool.Exec(context.Background(), `INSERT INTO balance_entries (balance_id, salon_id, type, delta, booking_id)
			VALUES ($1, $2, 'reserve', -1, $3)`, pkg.ID, f.salon.ID, bookings[i])
		return err
	})
	ok := 0
	for _, err := range errs {
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &pgErr) && pgErr.Code == "23514":
		default:
			t.Fatalf("reserve: %v", err)
		}
	}
	var remaining, sum, entries int64
	if err := f.Pool.QueryRow(context.Background(), `SELECT b.remaining, (SELECT sum(delta) FROM balance_entries WHERE balance_id = b.id),
		(SELECT count(*) FROM balance_entries WHERE balance_id = b.id) FROM balances b WHERE b.id = $1`, pkg.ID).Scan(&remaining, &sum, &entries); err != nil {
		t.Fatal(err)
	}
	if ok != 1 || remaining != 0 || sum != 0 || entries != 2 {
		t.Fatalf("%d reservations went through; remaining %d, the entries' sum %d, %d entries; want 1, 0, 0, 2", ok, remaining, sum, entries)
	}
}

// TestASaleKeyTellsARepeatFromAnotherSale: a sale made under a request
// key, asked again under it, sells nothing more; the refusal says whether
// the request was the same (a repeat) or asked something else (another
// phone, number of visits or last day: a second sale meant).
func TestASaleKeyTellsARepeatFromAnotherSale(t *testing.T) {
	f := setup(t)
	sys := bookingtest.System()
	phone := bookingtest.Phone()
	in := booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{f.svc.ID}, Visits: 5,
		Client: booking.ClientInput{Name: "Regular", Phone: phone}, ValidUntil: f.day.AddDays(90), RequestKey: "form-1"}
	first, err := f.Svc.IssueBalance(sys, in)
	if err != nil {
		t.Fatal(err)
	}
	other := bookingtest.Phone()
	for _, c := range []struct {
		name    string
		change  func(*booking.BalanceIssue)
		differs bool
	}{
		{"the same", func(*booking.BalanceIssue) {}, false},
		{"the phone as typed at the desk", func(x *booking.BalanceIssue) { x.Client.Phone = "8" + phone[2:] }, false},
		{"another phone", func(x *booking.BalanceIssue) { x.Client.Phone = other }, true},
		{"more visits", func(x *booking.BalanceIssue) { x.Visits = 6 }, true},
		{"no last day", func(x *booking.BalanceIssue) { x.ValidUntil = booking.Date{} }, true},
		{"a certificate", func(x *booking.BalanceIssue) {
			*x = booking.BalanceIssue{SalonID: f.salon.ID, Kind: booking.BalanceCertificate, Amount: 5, RequestKey: "form-1"}
		}, true},
	} {
		x := in
		c.change(&x)
		_, err := f.Svc.IssueBalance(sys, x)
		var sold *booking.SoldAlready
		if !errors.As(err, &sold) || sold.BalanceID != first.ID || sold.Differs != c.differs {
			t.Errorf("%s: %+v, %v; want balance %d, differs %v", c.name, sold, err, first.ID, c.differs)
		}
	}
	var n int
	if err := f.Pool.QueryRow(context.Background(), `SELECT count(*) FROM balances WHERE salon_id = $1`, f.salon.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d balances (%v), want 1", n, err)
	}
}

// TestLooksLikeCode: a balance's code reads as one however it is typed
// (case, dashes, spaces, inside a sentence); a phone, a name or a short
// word does not.
func TestLooksLikeCode(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"ABCD-EFGH-JK23", true},
		{"abcd-efgh-jk23", true},
		{"ABCD EFGH JK23", true},
		{"abcdefghjk23", true},
		{"мой код ABCD-EFGH-JK23, спасибо", true},
		{"код: «ABCD-EFGH-JK23».", true},
		{"code:ABCD-EFGH-JK23", true},
		{"ABCD - EFGH - JK23", true},
		{"ABCD–EFGH–JK23", true}, // (en dashes)
		{"ABCD—EFGH—JK23", true}, // (em dashes)
		{"\tABCD-EFGH-JK23\t", true},
		{"АВСD-ЕFGН-JК23", true},         // (Cyrillic А, В, С, Е, Н, К)
		{"мой код авсd-еfgн-jк23", true}, // (the same, in lower case)
		{"спасибо большое", false},
		{"Запишите меня на маникюр", false},
		{"ABCDEFGH JKMN", true}, // (the whole message a code, split otherwise)
		{"abcdef-ghjkmn", true},
		{"Нет, на 28 марта", false}, // (Russian words whose letters look Latin, and a date)
		{"Как на 29 марта", false},
		{"Мне на 28 марта", false},
		{"На 23 марта к Вере", false},
		{"Мне к Вере на 25", false},
		{"abcd efgh jkmn", true},
		{"we are seven twenty", false}, // (twelve letters of words, no digit, not grouped as a code)
		{"+7 999 234-56-78", false},
		{"234567892345", false}, // (digits alone: a phone's shape)
		{"ABCD-EFGH-JK2", false},
		{"ABCD-EFGH-JK234", false},
		{"ABCD-EFGH-JKL2", false}, // (L is not of the alphabet)
		{"Anna Petrova", false},
		{"please book me for next week", false},
		{"", false},
	} {
		if got := booking.LooksLikeCode(c.text); got != c.want {
			t.Errorf("LooksLikeCode(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestAFieldOfTheOtherKindIsRefused: a certificate sold with a client's
// phone or visits, a package with an amount, is refused naming the field
// (not sold with it dropped), and nothing is written.
func TestAFieldOfTheOtherKindIsRefused(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	salon := e.Salon(t, booking.Salon{})
	svc := e.Service(t, salon, booking.SalonService{Name: "Manicure", DurationMin: 60, Price: 150000})
	client := booking.ClientInput{Name: "Vera", Phone: bookingtest.Phone()}
	for _, c := range []struct {
		in    booking.BalanceIssue
		field string
	}{
		{booking.BalanceIssue{Kind: booking.BalanceCertificate, Amount: 100000, Client: client}, "client.phone"},
		{booking.BalanceIssue{Kind: booking.BalanceCertificate, Amount: 100000, Visits: 2}, "visits"},
		{booking.BalanceIssue{Kind: booking.BalancePackage, Amount: 100000, Visits: 2, ServiceIDs: []int64{svc.ID}, Client: client}, "amount"},
		// (Another salon's service, from a crafted form: its field, not a
		// page that is not there.)
		{booking.BalanceIssue{Kind: booking.BalancePackage, Visits: 2, ServiceIDs: []int64{svc.ID + 1000}, Client: client}, "service_id"},
	} {
		c.in.SalonID = salon.ID
		_, err := e.Svc.IssueBalance(bookingtest.System(), c.in)
		var ve *booking.ValidationError
		if !errors.As(err, &ve) || ve.Fields[c.field].String() == "" {
			t.Errorf("%s with %s: %v, want it refused naming %s", c.in.Kind, c.field, err, c.field)
		}
	}
	var n int
	if err := e.Pool.QueryRow(context.Background(), `SELECT count(*) FROM balances WHERE salon_id = $1`, salon.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d balances written (%v)", n, err)
	}
}

// TestADeskPriceSaysWhatARefundPaysBack: a package of 3 sold in the salon
// for 10000.00; one visit booked, the two left refunded: the desk pays
// back 6666.66; the visit cancelled, its visit comes back and is refunded
// in turn: 3333.34, the two adding up to the price. Without a price, the
// quote names no money.
func TestADeskPriceSaysWhatARefundPaysBack(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{})
	svc := e.Service(t, salon, booking.SalonService{Name: "Manicure", DurationMin: 60, Price: 300000})
	m := e.Master(t, salon, svc)
	day := booking.DateOf(e.Clock.Now().In(salon.Location())).AddDays(1)
	e.Shift(t, salon, m, day, 1, "10:00", "20:00")
	client := booking.ClientInput{Name: "Vera", Phone: bookingtest.Phone()}
	pkg, err := e.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{svc.ID},
		Visits: 3, Client: client, Price: 1000000})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Svc.Book(ctx, booking.BookRequest{SalonID: salon.ID, ServiceID: svc.ID, MasterID: m.ID, StartsAt: bookingtest.At(salon, day, "12:00"),
		Client: client, PayWith: &booking.PayWith{Kind: booking.BalancePackage, BalanceID: pkg.ID}})
	if err != nil {
		t.Fatal(err)
	}
	quoteAndRefund := func(left int64, money booking.Money) {
		t.Helper()
		q, err := e.Svc.BalanceRefundQuote(ctx, salon.ID, pkg.ID)
		if err != nil || q.Left != left || q.Money != money || q.Online {
			t.Fatalf("the quote: %+v (%v), want %d left paying back %s", q, err, left, money)
		}
		if _, err := e.Svc.RefundBalance(ctx, salon.ID, pkg.ID, ""); err != nil {
			t.Fatal(err)
		}
	}
	quoteAndRefund(2, 666666)
	if _, err := e.Svc.Cancel(ctx, booking.CancelRequest{SalonID: salon.ID, BookingID: b.ID}); err != nil {
		t.Fatal(err)
	}
	quoteAndRefund(1, 333334)
	plain, err := e.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: salon.ID, Kind: booking.BalanceCertificate, Amount: 500000})
	if err != nil {
		t.Fatal(err)
	}
	if q, err := e.Svc.BalanceRefundQuote(ctx, salon.ID, plain.ID); err != nil || q.Money != 0 || q.Left != 500000 {
		t.Fatalf("a certificate sold with no price: %+v, %v", q, err)
	}
}

// TestACertificateIsNotOfferedForMoreThanItHolds: an offer of a
// certificate of 1000.00 priced 5000.00 (a typo, surely) is refused by its
// price; at or below its amount it is put on sale.
func TestACertificateIsNotOfferedForMoreThanItHolds(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	salon := e.Salon(t, booking.Salon{})
	_, err := e.Svc.AddBalanceOffer(bookingtest.System(), booking.BalanceOffer{SalonID: salon.ID, Kind: booking.BalanceCertificate, Title: "Gift",
		Amount: 100000, Price: 500000})
	var ve *booking.ValidationError
	if !errors.As(err, &ve) || ve.Fields["price"].String() == "" {
		t.Fatalf("priced above its amount: %v", err)
	}
	if _, err := e.Svc.AddBalanceOffer(bookingtest.System(), booking.BalanceOffer{SalonID: salon.ID, Kind: booking.BalanceCertificate, Title: "Gift",
		Amount: 100000, Price: 90000}); err != nil {
		t.Fatalf("priced below its amount: %v", err)
	}
}
