package bot_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/bot/tgtest"
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
		w.pick(u, "Haircut", "Anna", "Tue 3 Mar", hhmm)
		w.must(u.WaitButton("Confirm", wait))
	}
	again("12:00")
	w.see(u, "Send its code here")
	w.tap(u, "Confirm with the package …"+pkg.Hint+" (5 visits left)")
	done := w.see(u, "Paid with the package …"+pkg.Hint+": 1 visit, 4 visits left")
	if !strings.Contains(done.Text, "✅ You are booked!") {
		t.Fatalf("booked with the package: %q", done.Text)
	}
	again("14:00")
	w.screenKnown(u) // (the sender recorded it: a code typed on it then strips its buttons)
	// Text that is no code is not looked up: the chat says what to do.
	u.Send("thanks")
	w.see(u, "To book, tap Confirm. To pay with a gift certificate or a package, send its code")
	w.screenKnown(u)
	u.Send("ABCD-EFGH-JK23")
	w.see(u, "No certificate or package with this code")
	// Said with the confirmation again, the chat's last message, whose
	// buttons are the live ones: the screen above the code loses its own.
	w.until("the refusal with the confirmation, below; the screen above without buttons", func() bool {
		last, live := newest(u), 0
		for _, m := range u.Messages() {
			// (The confirmations' one taps, "r:", are the booking's, live for good.)
			if slices.ContainsFunc(slices.Concat(m.Inline...), func(b tgtest.Button) bool { return !strings.HasPrefix(b.Data, "r:") }) {
				live++
			}
		}
		return last != nil && strings.HasPrefix(last.Text, "No certificate or package") && strings.Contains(last.Text, "Check your booking:") &&
			len(last.Inline) > 0 && live == 1
	})
	w.screenKnown(u)
	u.Send("my code is " + strings.ToLower(cert.Code) + ", thanks")
	done = w.see(u, "paid with the certificate")
	if !strings.Contains(done.Text, "✅ You are booked!") || !strings.Contains(done.Text, "14:00") {
		t.Fatalf("booked with the certificate: %q", done.Text)
	}
	// The confirmation screen the code was typed on keeps its text and
	// loses its buttons (they would look live above the answer).
	w.until("the confirmation screen's buttons gone", func() bool {
		for _, m := range u.Messages() {
			if strings.HasPrefix(m.Text, "Check your booking:") && strings.Contains(m.Text, "14:00") {
				return len(m.Inline) == 0
			}
		}
		return false
	})
	again("16:00")
	w.screenKnown(u)
	u.Send(cert.Code)
	w.see(u, "It cannot pay for this booking: nothing is left on it")
	w.until("the refusal with the confirmation, below", func() bool {
		last := newest(u)
		return last != nil && strings.HasPrefix(last.Text, "It cannot pay") && strings.Contains(last.Text, "Check your booking:") &&
			strings.Contains(last.Text, "16:00")
	})
	w.tap(u, "✅ Confirm")
	w.until("booked at 16:00 without it", func() bool {
		last := newest(u)
		return last != nil && strings.HasPrefix(last.Text, "✅ You are booked!") && strings.Contains(last.Text, "16:00")
	})
	w.allAnswered()
	if n := w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id WHERE c.phone = '+79997100001'`); n != 4 {
		t.Fatalf("%d bookings, want 4", n)
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

// newest is the chat's newest message from the bot (the last one below;
// u.Last is the last sent or edited).
func newest(u *tgtest.User) *tgtest.Message {
	var last *tgtest.Message
	for _, m := range u.Messages() {
		if last == nil || m.ID > last.ID {
			last = &m
		}
	}
	return last
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
	done := w.see(u, "Paid with the package …"+pkg.Hint+": 1 visit, 2 visits left")
	if !strings.Contains(done.Text, "✅ You are booked!") {
		t.Fatalf("booked with the package: %q", done.Text)
	}
	if n := w.count(t, `SELECT count(*) FROM balance_entries WHERE type = 'reserve' AND balance_id = $1`, pkg.ID); n != 1 {
		t.Fatalf("%d reservations, want 1", n)
	}
}

// TestTheChatIsToldWhatCancellingKeeps: cancelling from the chat a booking
// paid with a package or a certificate says first what cancelling now
// would keep of it by the salon's policy and what goes back, and after it
// what was kept and what went back, as the ledger has it. What a booking
// paid says what is left, until when, and what is left to pay.
func TestTheChatIsToldWhatCancellingKeeps(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sys := bookingtest.System()
	colour := w.Service(t, w.salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 600000, Deposit: 100000})
	irina := mustMaster(t, w.Env, w.salon, "Irina", colour)
	w.Shift(t, w.salon, irina, testDay, 2, "10:00", "20:00")
	u := w.tg.NewUser("Vera", "en")
	w.toContact(u, "Anna", "10:00")
	u.ShareContact("+7 999 710-00-03")
	w.tap(u, "Confirm")
	w.see(u, "✅ You are booked!")
	pkg, err := w.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{w.haircut.ID}, Visits: 2, Client: booking.ClientInput{Phone: "+79997100003"}, ValidUntil: testDay.AddDays(10)})
	w.must(err)
	cert, err := w.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: 200000})
	w.must(err)
	to := func(service, master, hhmm string) {
		t.Helper()
		w.pick(u, service, master, "Tue 3 Mar", hhmm)
		w.must(u.WaitButton("Confirm", wait))
	}
	// A package, under the default policy (cancelled before the cutoff):
	// its visit goes back.
	to("Haircut", "Anna", "12:00")
	w.tap(u, "Confirm with the package …"+pkg.Hint+" (2 visits left)")
	w.see(u, "Paid with the package …"+pkg.Hint+": 1 visit, 1 visit left (valid until 13 Mar 2026)")
	u.Send("/my")
	w.see(u, "Your bookings")
	w.tap(u, "❌ Cancel 2")
	if q := w.see(u, "Cancel this booking?").Text; !strings.Contains(q, "12:00") || !strings.Contains(q, "What it paid goes back to the package …"+pkg.Hint+": 1 visit.") {
		t.Fatalf("the question: %q", q)
	}
	w.tap(u, "Yes, cancel")
	w.see(u, "Given back to the package …"+pkg.Hint+": 1 visit.\nLeft on it: 2 visits.")
	// A certificate paying part of a price with a deposit, under a policy
	// that keeps a client's cancellation: the part that paid the deposit
	// is kept, the rest goes back.
	_, err = w.Pool.Exec(context.Background(), `UPDATE salons SET refund_policy = 'never', catalog_version = catalog_version + 1 WHERE id = $1`, w.salon.ID)
	w.must(err)
	to("Colour", "Irina", "14:00")
	w.see(u, "Unless a package or certificate pays it, a deposit of 1,000\u00a0₽ is paid in the salon.")
	u.Send(cert.Code)
	paid := w.see(u, "paid with the certificate")
	if !strings.Contains(paid.Text, "To pay at the salon: 4,000") {
		t.Fatalf("booked with the certificate: %q", paid.Text)
	}
	u.Send("/my")
	w.tap(u, "❌ Cancel 2")
	if q := w.see(u, "Cancel this booking?").Text; !strings.Contains(q, "cancelling now keeps 1,000\u00a0₽ of what the certificate …"+cert.Hint+" paid; 1,000\u00a0₽ goes back to it") {
		t.Fatalf("the question: %q", q)
	}
	// The salon's policy changes before "Yes": the question comes again,
	// with what cancelling keeps now, and again when it changes back.
	policy := func(p string) {
		t.Helper()
		_, err := w.Pool.Exec(context.Background(), `UPDATE salons SET refund_policy = $2, catalog_version = catalog_version + 1 WHERE id = $1`, w.salon.ID, p)
		w.must(err)
	}
	policy("always")
	w.tap(u, "Yes, cancel")
	if q := w.see(u, "The cancellation terms changed").Text; !strings.Contains(q, "2,000\u00a0₽ goes back to the certificate …"+cert.Hint) {
		t.Fatalf("asked again: %q", q)
	}
	policy("never")
	w.tap(u, "Yes, cancel")
	w.see(u, "The cancellation terms changed while you decided:\nCancel this booking?\nService: Colour")
	w.until("asked again, keeping 1,000 ₽", func() bool {
		return strings.Contains(u.Dump(), "cancelling now keeps 1,000") && strings.Contains(u.Dump(), "The cancellation terms changed")
	})
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE status = 'cancelled' AND service_id = $1`, colour.ID); n != 0 {
		t.Fatalf("%d cancelled while the terms changed", n)
	}
	w.tap(u, "Yes, cancel")
	done := w.see(u, "went back to the certificate")
	if !strings.Contains(done.Text, "1,000\u00a0₽ of what the certificate …"+cert.Hint+" paid was kept") ||
		!strings.Contains(done.Text, "1,000\u00a0₽ went back to the certificate …"+cert.Hint+": 1,000\u00a0₽ left on it") {
		t.Fatalf("the cancellation: %q", done.Text)
	}
	var left int64
	w.must(w.Pool.QueryRow(context.Background(), `SELECT remaining FROM balances WHERE id = $1`, cert.ID).Scan(&left))
	if left != 100000 {
		t.Fatalf("the certificate has %d left, the chat said 1,000 ₽", left)
	}
	w.allAnswered()
}

// TestACodeOutOfItsPlaceIsNotEchoed: a certificate's code sent at the
// phone question, or with no booking under way, is not read as a phone,
// not echoed, and kept nowhere; a package whose last day is before the
// visit's is not offered, and its code says so; a notice's button for a
// booking not the chat's (old, or forged) leaves the booking under way
// on screen.
func TestACodeOutOfItsPlaceIsNotEchoed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sys := bookingtest.System()
	cert, err := w.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: 100000})
	w.must(err)
	u := w.tg.NewUser("Vera", "ru")
	w.pick(u, "Haircut", "Anna", "вт, 3 мар.", "10:00")
	w.see(u, "поделитесь номером")
	u.Send(cert.Code)
	w.see(u, "Похоже на код сертификата или абонемента — пришлите его на следующем экране")
	u.ShareContact("+7 999 710-00-04")
	w.tap(u, "✅ Подтвердить")
	w.see(u, "Вы записаны")
	u.Send("мой код " + strings.ToLower(cert.Code))
	w.see(u, "Пришлите его на экране подтверждения записи")
	u.Send("/start " + cert.Code) // (as if a salon's link name)
	w.until("the code after /start answered", func() bool {
		return strings.Count(u.Dump(), "Пришлите его на экране подтверждения записи") == 2
	})
	if strings.Contains(strings.ToUpper(u.Dump()), strings.ReplaceAll(cert.Code, "-", "")) || strings.Contains(u.Dump(), cert.Code[5:]) {
		t.Fatalf("the code echoed:%s", u.Dump())
	}
	if n := w.count(t, `SELECT (SELECT count(*) FROM tg_updates WHERE position($1 IN upper(convert_from(payload, 'UTF8'))) > 0)
		+ (SELECT count(*) FROM tg_outbox WHERE payload::text ILIKE '%' || $1 || '%')`, cert.Code[5:9]); n != 0 {
		t.Fatalf("the code is stored in %d rows", n)
	}
	// A package whose last day (today) is before the visit's (tomorrow).
	pkg, err := w.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{w.haircut.ID}, Visits: 2, Client: booking.ClientInput{Phone: "+79997100004"}, ValidUntil: testDay.AddDays(-1)})
	w.must(err)
	w.pick(u, "Haircut", "Anna", "вт, 3 мар.", "12:00")
	confirm := w.see(u, "Проверьте запись")
	if strings.Contains(u.Dump(), "по абонементу") {
		t.Fatalf("a package that ends before the day offered:%s", u.Dump())
	}
	// A reminder's Cancel for another client's booking, tapped now.
	other, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID,
		ServiceID: w.haircut.ID, MasterID: w.boris.ID, StartsAt: bookingtest.At(w.salon, testDay, "15:00"),
		Client: booking.ClientInput{Name: "Other", Phone: "+79997100099"}})
	w.must(err)
	u.TapData(confirm, fmt.Sprintf("r:x:%d:%d", w.salon.ID, other.ID))
	w.allAnswered()
	u.Send(pkg.Code)
	w.see(u, "Им нельзя оплатить эту запись: действует до 02.03.2026")
	w.tap(u, "✅ Подтвердить")
	w.until("the second booking", func() bool {
		return w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id WHERE c.phone = '+79997100004'
			AND b.status = 'confirmed'`) == 2
	})
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE id = $1 AND status = 'confirmed'`, other.ID); n != 1 {
		t.Fatal("the other client's booking changed")
	}
	// A notice's button of the chat's own booking, tapped while another
	// booking waits on its confirmation screen: the notice asks, and the
	// confirmation screen, no longer the dialog's, loses its buttons.
	w.pick(u, "Haircut", "Anna", "вт, 3 мар.", "16:00")
	w.see(u, "вт, 3 мар., 16:00\nСтоимость: 2\u00a0500\u00a0₽\nТелефон") // (its own confirmation: an earlier one keeps its text)
	w.screenKnown(u)
	first := w.count(t, `SELECT b.id FROM bookings b JOIN clients c ON c.id = b.client_id WHERE c.phone = '+79997100004' ORDER BY b.starts_at LIMIT 1`)
	var booked *tgtest.Message
	for _, m := range u.Messages() {
		if strings.Contains(m.Text, "Вы записаны") && strings.Contains(m.Text, "10:00") {
			booked = &m
		}
	}
	if booked == nil {
		t.Fatalf("no booked message of 10:00:%s", u.Dump())
	}
	u.TapData(booked, fmt.Sprintf("r:x:%d:%d", w.salon.ID, first))
	w.see(u, "Отменить эту запись?")
	w.until("the waiting confirmation's buttons gone", func() bool {
		for _, m := range u.Messages() {
			if strings.HasPrefix(m.Text, "Проверьте запись") && strings.Contains(m.Text, "16:00") {
				return len(m.Inline) == 0
			}
		}
		return false
	})
	w.tap(u, "Да, отменить")
	w.see(u, "Запись отменена")
	// That notice's button again, its booking now cancelled, while a
	// booking waits on its confirmation: the tap's answer says so, and
	// the booking under way stays, and books.
	w.pick(u, "Haircut", "Anna", "вт, 3 мар.", "18:00")
	w.see(u, "вт, 3 мар., 18:00\nСтоимость: 2\u00a0500\u00a0₽\nТелефон") // (its own confirmation: an earlier one keeps its text)
	w.screenKnown(u)
	u.TapData(booked, fmt.Sprintf("r:x:%d:%d", w.salon.ID, first))
	w.allAnswered()
	w.tap(u, "✅ Подтвердить")
	w.until("booked at 18:00", func() bool {
		return w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id WHERE c.phone = '+79997100004'
			AND b.status = 'confirmed' AND b.starts_at = $1`, bookingtest.At(w.salon, testDay, "18:00")) == 1
	})
}

// TestAPackageSpentMeanwhile: the package on the confirm screen is spent
// elsewhere before its button is tapped: the tap says why it cannot pay,
// on that screen, and the confirmation comes again below it, without the
// package, and books.
func TestAPackageSpentMeanwhile(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Vera", "en")
	w.toContact(u, "Anna", "10:00")
	u.ShareContact("+7 999 710-00-05")
	w.tap(u, "Confirm")
	w.see(u, "✅ You are booked!")
	pkg, err := w.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{w.haircut.ID}, Visits: 1, Client: booking.ClientInput{Phone: "+79997100005"}})
	w.must(err)
	w.pick(u, "Haircut", "Anna", "Tue 3 Mar", "12:00")
	button := "💳 Confirm with the package …" + pkg.Hint + " (1 visit left)"
	w.must(u.WaitButton(button, wait))
	// Spent at the desk meanwhile.
	_, err = w.Svc.Book(bookingtest.System(), booking.BookRequest{SalonID: w.salon.ID, ServiceID: w.haircut.ID, MasterID: w.boris.ID,
		StartsAt: bookingtest.At(w.salon, testDay, "16:00"), Client: booking.ClientInput{Name: "Vera", Phone: "+79997100005"},
		PayWith: &booking.PayWith{Kind: booking.BalancePackage, BalanceID: pkg.ID}})
	w.must(err)
	w.tap(u, button)
	w.see(u, "It cannot pay for this booking: nothing is left on it")
	w.until("the confirmation again, below", func() bool {
		last := u.Last()
		return last != nil && strings.HasPrefix(last.Text, "Check your booking:") && strings.Contains(u.Dump(), "nothing is left on it")
	})
	if strings.Contains(u.Dump(), "Confirm with the package") {
		t.Fatalf("the spent package still offered:%s", u.Dump())
	}
	w.tap(u, "✅ Confirm")
	w.until("booked without it", func() bool {
		return w.count(t, `SELECT count(*) FROM bookings b JOIN clients c ON c.id = b.client_id WHERE c.phone = '+79997100005'`) == 3
	})
	w.allAnswered()
}

// TestCodesAreNotGuessedInTheChat: a chat may send ten codes that find
// nothing in an hour; past them a code is not looked up (not even a right
// one) until the hour is over, and then it books.
func TestCodesAreNotGuessedInTheChat(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cert, err := w.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalanceCertificate, Amount: w.haircut.Price})
	w.must(err)
	u := w.tg.NewUser("Guess", "en")
	w.toContact(u, "Anna", "12:00")
	u.ShareContact("+7 999 710-00-09")
	w.must(u.WaitButton("Confirm", wait))
	for i := range 10 {
		w.screenKnown(u)
		u.Send(fmt.Sprintf("ABCD-EFGH-JK%c2", "ABCDEFGHJK"[i]))
		w.until(fmt.Sprintf("code %d refused", i+1), func() bool { return countText(u, "No certificate or package with this code") == i+1 })
	}
	w.screenKnown(u)
	u.Send(cert.Code)
	w.see(u, "Too many codes that found nothing: try a code again in 60 min")
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE status = 'confirmed'`); n != 0 {
		t.Fatalf("%d bookings past the tries", n)
	}
	w.Clock.Advance(61 * time.Minute)
	w.screenKnown(u)
	u.Send(cert.Code)
	done := w.see(u, "paid with the certificate")
	if !strings.Contains(done.Text, "✅ You are booked!") {
		t.Fatalf("the right code an hour later: %q", done.Text)
	}
}

// TestTwoMessagesAtOnceLeaveOneLiveScreen: two messages typed at the
// confirm screen within a moment, the second's turn running while the
// first one's answer (a screen with buttons) is still being sent: the
// earlier screen loses its buttons when the later one goes, so the
// chat's one live screen is its last message.
func TestTwoMessagesAtOnceLeaveOneLiveScreen(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Vera", "en")
	w.toContact(u, "Anna", "10:00")
	u.ShareContact("+7 999 710-00-02")
	w.must(u.WaitButton("Confirm", wait))
	w.screenKnown(u)
	w.sendWhileAnswerGoes(u, "thanks", "thank you")
	w.until("two answers, the last one's buttons the only live ones", func() bool {
		answers, live := 0, 0
		for _, m := range u.Messages() {
			if strings.HasPrefix(m.Text, "To book, tap Confirm") {
				answers++
			}
			if len(m.Inline) > 0 {
				live++
			}
		}
		last := newest(u)
		return answers == 2 && live == 1 && last != nil && len(last.Inline) > 0
	})
	w.tap(u, "✅ Confirm")
	w.see(u, "✅ You are booked!")
	w.allAnswered()
	// Each removal of buttons took some away: none was queued twice, or
	// for a message that had none (a screen edited into plain text).
	w.until("the outbox sent", func() bool {
		return w.count(t, `SELECT count(*) FROM tg_outbox WHERE state = 'queued'`) == 0
	})
	for _, c := range w.tg.Calls() {
		if c.Method == "editMessageReplyMarkup" && c.Status != 200 {
			t.Errorf("buttons removed from message %s with none left: %d", c.Params["message_id"], c.Status)
		}
	}
}

// TestABookingPaidWithAPackageMovesNoLaterThanIt: moving a booking paid
// with a package that ends on its day offers no later day, and says why.
func TestABookingPaidWithAPackageMovesNoLaterThanIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	pkg, err := w.Svc.IssueBalance(bookingtest.System(), booking.BalanceIssue{SalonID: w.salon.ID, Kind: booking.BalancePackage,
		ServiceIDs: []int64{w.haircut.ID}, Visits: 2, Client: booking.ClientInput{Name: "Vera", Phone: "+79997100009"}, ValidUntil: testDay})
	w.must(err)
	u := w.tg.NewUser("Vera", "en")
	w.toContact(u, "Anna", "12:00")
	u.ShareContact("+7 999 710-00-09")
	button := "💳 Confirm with the package …" + pkg.Hint + " (2 visits left)"
	w.must(u.WaitButton(button, wait))
	w.tap(u, button)
	w.see(u, "You are booked")
	u.Send("/my")
	w.tap(u, "🔁 Move 1")
	m := w.see(u, "valid until 3 Mar 2026: it can be moved to that day at the latest")
	var days []string
	for _, b := range slices.Concat(m.Inline...) {
		days = append(days, b.Text)
	}
	if !slices.Contains(days, "Tue 3 Mar") || slices.Contains(days, "Wed 4 Mar") {
		t.Fatalf("the days offered to move it: %q", days)
	}
	w.tap(u, "Tue 3 Mar")
	w.tap(u, "15:00")
	w.tap(u, "🔁 Move here")
	w.see(u, "Your booking is moved:\nService: Haircut")
	w.allAnswered()
}

// TestAScreenWithoutButtonsAtOnceLeavesNoneLive: /book and then /my typed
// within a moment, the second's answer (no bookings: no buttons) written
// while the first's screen is still being sent: once both went, the
// service list has lost its buttons, which the dialog no longer knows.
func TestAScreenWithoutButtonsAtOnceLeavesNoneLive(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Rosa", "en")
	u.Send("/start studio")
	w.see(u, "Welcome to Studio")
	w.screenKnown(u)
	w.sendWhileAnswerGoes(u, "/book", "/my")
	w.see(u, "no upcoming bookings")
	w.until("no message with the dialog's buttons left", func() bool {
		for _, m := range u.Messages() {
			if len(m.Inline) > 0 {
				return false
			}
		}
		return true
	})
	w.allAnswered()
}
