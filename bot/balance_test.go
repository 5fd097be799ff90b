package bot_test

import (
	"strings"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
)

// TestBookWithAPackageOrACertificateInTheChat: a client whose chat is
// proven (a contact shared at a first booking) sees their package on the
// confirm screen and books with it in one tap; a certificate's code sent
// at the confirm screen books with it; the same code, spent, and an
// unknown code are said so, and nothing more is booked or reserved.
func TestBookWithAPackageOrACertificateInTheChat(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sys := bookingtest.System()
	u := w.tg.NewUser("Vera", "en")
	w.toContact(u, "Anna", "10:00")
	u.ShareContact("+7 999 710-00-01")
	if err := u.WaitButton("Confirm", wait); err != nil {
		t.Fatalf("%v\nbot log: %s", err, w.logs.String())
	}
	w.tap(u, "Confirm")
	w.see(u, "✅ You are booked!")
	pkg, err := w.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{w.haircut.ID}, Visits: 5, Client: booking.ClientInput{Name: "Vera", Phone: "+79997100001"}})
	w.must(err)
	cert, err := w.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: w.haircut.Price})
	w.must(err)
	again := func(hhmm string) {
		t.Helper()
		u.Send("/start studio")
		w.tap(u, "Haircut")
		w.tap(u, "Anna")
		w.tap(u, "Tue 3 Mar")
		w.tap(u, hhmm)
		w.must(u.WaitButton("Confirm", wait))
	}
	again("12:00")
	w.see(u, "Send its code here")
	w.tap(u, "Confirm with the package …"+pkg.Hint+" (5 visits left)")
	done := w.see(u, "Paid with the package …"+pkg.Hint+": 4 visits left")
	if !strings.Contains(done.Text, "✅ You are booked!") {
		t.Fatalf("booked with the package: %q", done.Text)
	}
	again("14:00")
	u.Send("nope-nope-nope")
	w.see(u, "No certificate or package with this code")
	u.Send(strings.ToLower(cert.Code))
	done = w.see(u, "paid with the certificate")
	if !strings.Contains(done.Text, "✅ You are booked!") || !strings.Contains(done.Text, "14:00") {
		t.Fatalf("booked with the certificate: %q", done.Text)
	}
	again("16:00")
	u.Send(cert.Code)
	w.see(u, "Nothing is left on this certificate or package")
	w.allAnswered()
	if n := w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id WHERE c.phone = '+79997100001'`); n != 3 {
		t.Fatalf("%d bookings, want 3", n)
	}
	if n := w.count(t, `SELECT count(*) FROM balance_entries WHERE type = 'reserve' AND balance_id IN ($1, $2)`, pkg.ID, cert.ID); n != 2 {
		t.Fatalf("%d reservations, want 2", n)
	}
	// The codes sent are kept nowhere readable: not in the inbox, the
	// outbox or the chat's state.
	if n := w.count(t, `SELECT (SELECT count(*) FROM tg_updates WHERE position(upper($1) IN upper(convert_from(payload, 'UTF8'))) > 0
		OR position($2 IN upper(convert_from(payload, 'UTF8'))) > 0)
		+ (SELECT count(*) FROM tg_outbox WHERE payload::text ILIKE '%' || $2 || '%')
		+ (SELECT count(*) FROM tg_chats WHERE dialog::text ILIKE '%' || $2 || '%')`, cert.Code, strings.ReplaceAll(cert.Code, "-", "")); n != 0 {
		t.Fatalf("the certificate's code is stored in %d rows", n)
	}
}

// TestAPackageSoldAtTheDeskIsOfferedAtTheFirstBooking: a package sold at
// the desk before the client ever wrote to the bot is offered on the
// confirm screen of their first booking, once they share their own
// contact (the proof), and books in one tap; their phone typed by someone
// else is no proof, and their package is not offered.
func TestAPackageSoldAtTheDeskIsOfferedAtTheFirstBooking(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sys := bookingtest.System()
	pkg, err := w.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{w.haircut.ID}, Visits: 3, Client: booking.ClientInput{Name: "Olga", Phone: "+79997100002"}})
	w.must(err)
	button := "Confirm with the package …" + pkg.Hint + " (3 visits left)"
	// Her phone typed by someone else (no proof: a contact of another's
	// is refused): no package offered.
	other := w.tg.NewUser("Mallory", "en")
	w.toContact(other, "Anna", "10:00")
	other.ShareOthersContact("+7 999 710-00-02")
	w.see(other, "share your own phone number")
	other.Send("+7 999 710-00-02")
	w.must(other.WaitButton("Confirm", wait))
	if strings.Contains(other.Dump(), "Confirm with the package") {
		t.Fatalf("a package offered to a chat that shared another's contact:%s", other.Dump())
	}
	// Her own: offered, and it books.
	u := w.tg.NewUser("Olga", "en")
	w.toContact(u, "Anna", "12:00")
	u.ShareContact("+7 999 710-00-02")
	w.must(u.WaitButton(button, wait))
	w.tap(u, button)
	done := w.see(u, "Paid with the package …"+pkg.Hint+": 2 visits left")
	if !strings.Contains(done.Text, "✅ You are booked!") {
		t.Fatalf("booked with the package: %q", done.Text)
	}
	if n := w.count(t, `SELECT count(*) FROM balance_entries WHERE type = 'reserve' AND balance_id = $1`, pkg.ID); n != 1 {
		t.Fatalf("%d reservations, want 1", n)
	}
}
