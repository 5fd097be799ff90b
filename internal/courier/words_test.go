package courier_test

import (
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/internal/courier"
)

// TestSaleMailWordsInTheReadersLanguage: a sale's e-mail writes its last
// day as its reader does (no 05.12.2027 to an English reader, who may
// read it as the 12th of May), and a refund's says what came back of the
// price and what bookings still hold, in visits for a package.
func TestSaleMailWordsInTheReadersLanguage(t *testing.T) {
	salon := booking.Salon{Name: "Studio", Slug: "studio", Currency: "RUB"}
	for _, c := range []struct{ lang, want string }{{"en", "Valid until: 5 Dec 2027"}, {"ru", "Действует до: 05.12.2027"}} {
		w := courier.ComposeSale(&booking.SaleMail{Lang: c.lang, Salon: salon, Kind: booking.BalanceCertificate, Code: "ABCD-EFGH-JKMN",
			Units: 300000, ValidUntil: booking.Date{Year: 2027, Month: 12, Day: 5}}, "https://salon.test")
		if got := w.Text(); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.lang, got, c.want)
		}
	}
	w := courier.ComposeSale(&booking.SaleMail{Lang: "en", Salon: salon, Kind: booking.BalancePackage, Title: "5 colours",
		Refund: 400000, Refunded: 400000, Price: 1000000, Units: 0, Held: 3}, "https://salon.test")
	got := w.Text()
	for _, want := range []string{"Refunded in all: 4,000\u00a0₽ of 10,000\u00a0₽", "Held by bookings: 3", "if one is cancelled"} {
		if !strings.Contains(got, want) {
			t.Errorf("the refund's e-mail lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Left on it") {
		t.Errorf("the refund's e-mail says what is left of nothing:\n%s", got)
	}
}

// paidSalon is the salon of paidView's bookings.
var paidSalon = booking.Salon{Name: "Studio", Slug: "studio", Currency: "RUB", Timezone: "Europe/Moscow"}

// paidView is a booking of paidSalon in status st, paid with p.
func paidView(st booking.Status, p booking.PaidWith) *booking.View {
	return &booking.View{Booking: booking.Booking{Status: st, PaidWith: &p}, Salon: paidSalon, ServiceName: "Colour", MasterName: "Anna"}
}

// TestBookingMailSaysWhatABalancePaid: a booking's e-mail names the
// certificate or package that paid it, what is left on it and what is
// left to pay at the salon (the price less what the balance and the
// deposit online pay; awaiting the deposit the balance is only held);
// once the booking is cancelled, what the cancellation kept of it and
// gave back, in the reader's words (visits counted as the language
// counts them).
func TestBookingMailSaysWhatABalancePaid(t *testing.T) {
	salon, view := paidSalon, paidView
	// priced is a booking paid with p, of price (or of segments'), its
	// deposit, and held, what its payments online hold.
	priced := func(st booking.Status, price, deposit, held booking.Money, p booking.PaidWith, segments ...booking.Money) *booking.View {
		v := view(st, p)
		v.Price, v.Deposit, v.Held = price, deposit, held
		for _, sp := range segments {
			v.Segments = append(v.Segments, booking.Booking{Price: sp})
		}
		return v
	}
	for _, c := range []struct {
		name, lang string
		kind       booking.MessageKind
		v          *booking.View
		want, not  []string
	}{
		{"a certificate, booked", "en", booking.KindConfirmation,
			view(booking.StatusConfirmed, booking.PaidWith{Kind: booking.BalanceCertificate, Hint: "86XD", Amount: 300000, Covers: 300000, Remaining: 50000}),
			[]string{"Paid with: the certificate …86XD: 3,000\u00a0₽", "Left on it: 500\u00a0₽"}, []string{"Kept", "Back on it"}},
		{"a certificate, cancelled", "ru", booking.KindCancelled,
			view(booking.StatusCancelled, booking.PaidWith{Kind: booking.BalanceCertificate, Hint: "86XD", Amount: 300000, Remaining: 250000,
				Settled: true, Kept: 100000, Returned: 200000}),
			[]string{"Было зарезервировано для записи: сертификат …86XD: 3\u00a0000\u00a0₽", "Удержано по правилам отмены: 1\u00a0000\u00a0₽",
				"Вернулось на него: 2\u00a0000\u00a0₽", "Осталось на нём: 2\u00a0500\u00a0₽"}, nil},
		{"a package, booked", "ru", booking.KindConfirmation,
			view(booking.StatusConfirmed, booking.PaidWith{Kind: booking.BalancePackage, Hint: "RVND", Visits: 1, Remaining: 4}),
			[]string{"Оплачено: абонементом …RVND: 1 визит", "Осталось на нём: 4 визита"}, []string{"Удержано"}},
		{"a package, cancelled, all back", "en", booking.KindCancelled,
			view(booking.StatusCancelled, booking.PaidWith{Kind: booking.BalancePackage, Hint: "RVND", Visits: 1, Remaining: 5,
				Settled: true, Returned: 1}),
			[]string{"Was held for the booking: package …RVND: 1 visit", "Back on it: 1 visit", "Left on it: 5 visits"}, []string{"Kept"}},
		{"a certificate paying part", "ru", booking.KindConfirmation,
			priced(booking.StatusConfirmed, 250000, 0, 0, booking.PaidWith{Kind: booking.BalanceCertificate, Hint: "WDTX", Amount: 100000, Covers: 100000}),
			[]string{"Цена: 2\u00a0500\u00a0₽", "Оплачено: сертификатом …WDTX: 1\u00a0000\u00a0₽", "К оплате в салоне: 1\u00a0500\u00a0₽"}, nil},
		{"a package paying one service of two", "ru", booking.KindReminder,
			priced(booking.StatusConfirmed, 180000, 0, 0, booking.PaidWith{Kind: booking.BalancePackage, Hint: "RVND", Visits: 1, Remaining: 2, Covers: 180000},
				180000, 250000),
			[]string{"Цена: 4\u00a0300\u00a0₽", "К оплате в салоне: 2\u00a0500\u00a0₽"}, nil},
		{"a deposit paid online and a certificate", "en", booking.KindPaid,
			priced(booking.StatusConfirmed, 600000, 50000, 50000, booking.PaidWith{Kind: booking.BalanceCertificate, Hint: "4KGN", Amount: 50000, Covers: 50000}),
			[]string{"To pay at the salon: 5,000\u00a0₽"}, nil},
		{"moved to a cheaper master", "ru", booking.KindChanged,
			priced(booking.StatusConfirmed, 150000, 0, 0, booking.PaidWith{Kind: booking.BalanceCertificate, Hint: "WDTX", Amount: 250000, Covers: 150000, Remaining: 50000}),
			[]string{"Цена: 1\u00a0500\u00a0₽", "Оплачено: сертификатом …WDTX: 1\u00a0500\u00a0₽", "Вернётся на него после визита: 1\u00a0000\u00a0₽",
				"К оплате в салоне: ничего — всё оплачено"}, []string{"2\u00a0500"}},
		{"all paid", "ru", booking.KindConfirmation,
			priced(booking.StatusConfirmed, 150000, 0, 0, booking.PaidWith{Kind: booking.BalancePackage, Hint: "RVND", Visits: 1, Covers: 150000}),
			[]string{"К оплате в салоне: ничего — всё оплачено"}, nil},
		{"awaiting the deposit", "ru", booking.KindPaymentDue,
			priced(booking.StatusPending, 600000, 50000, 0, booking.PaidWith{Kind: booking.BalanceCertificate, Hint: "4KGN", Amount: 50000, Covers: 50000}),
			[]string{"Зарезервировано для записи: сертификат …4KGN: 500\u00a0₽", "К оплате в салоне: 5\u00a0000\u00a0₽"}, []string{"Оплачено"}},
		{"the deposit did not come", "ru", booking.KindHoldExpired,
			priced(booking.StatusCancelled, 600000, 50000, 0, booking.PaidWith{Kind: booking.BalanceCertificate, Hint: "4KGN", Amount: 50000, Covers: 50000,
				Remaining: 50000, Settled: true, Returned: 50000}),
			[]string{"Было зарезервировано для записи: сертификат …4KGN: 500\u00a0₽", "Вернулось на него: 500\u00a0₽",
				"Выбрать другое время"}, []string{"Оплачено", "К оплате"}},
	} {
		got := courier.Compose(&booking.Outgoing{Message: booking.Message{Kind: c.kind}, Booking: c.v, Lang: c.lang}, "https://salon.test").Text()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the e-mail lacks %q:\n%s", c.name, w, got)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%s: the e-mail says %q:\n%s", c.name, w, got)
			}
		}
	}
	// Moved to another master at the same time: said so, with no "was"
	// of the same time; its SMS says what the certificate pays now.
	moved := priced(booking.StatusConfirmed, 150000, 0, 0, booking.PaidWith{Kind: booking.BalanceCertificate, Hint: "WDTX", Amount: 250000,
		Covers: 150000, Remaining: 50000})
	moved.StartsAt = time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)
	change := booking.Outgoing{Message: booking.Message{Kind: booking.KindChanged}, Booking: moved, Lang: "ru"}
	change.Change.FromStartsAt, change.Change.FromMasterID = moved.StartsAt, 7
	if got := courier.Compose(&change, "").Text(); !strings.Contains(got, "У вашей записи другой мастер.") || strings.Contains(got, "Было:") {
		t.Errorf("a move to another master at the same time:\n%s", got)
	}
	if got := courier.Short(&change, ""); !strings.Contains(got, "Сертификат: оплачено 1\u00a0500\u00a0₽, осталось 500\u00a0₽; после визита вернётся на него 1\u00a0000\u00a0₽") {
		t.Errorf("the SMS of a move: %q", got)
	}
	// Without a balance: no such lines.
	plain := &booking.View{Booking: booking.Booking{Status: booking.StatusConfirmed}, Salon: salon, ServiceName: "Colour"}
	if got := courier.Compose(&booking.Outgoing{Message: booking.Message{Kind: booking.KindConfirmation}, Booking: plain, Lang: "en"}, "").Text(); strings.Contains(got, "Paid with") {
		t.Errorf("a booking paid with nothing:\n%s", got)
	}
}

// TestBookingMailSaysThePrice: a booking's e-mail says what the visit
// costs, as the widget did when it was booked, and, its deposit paid
// online, what is left to pay at the salon; a cancellation's says
// neither.
func TestBookingMailSaysThePrice(t *testing.T) {
	v := &booking.View{Booking: booking.Booking{Status: booking.StatusConfirmed, Price: 600000, Deposit: 100000}, Salon: paidSalon,
		ServiceName: "Окрашивание", MasterName: "Анна"}
	mail := func(kind booking.MessageKind) string {
		return strings.ReplaceAll(courier.Compose(&booking.Outgoing{Message: booking.Message{Kind: kind}, Booking: v, Lang: "ru"}, "").Text(), "\u00a0", " ")
	}
	if got := mail(booking.KindConfirmation); !strings.Contains(got, "Цена: 6 000 ₽") || strings.Contains(got, "К оплате в салоне") {
		t.Errorf("a confirmation, nothing paid online:\n%s", got)
	}
	// Until when: an hour of colour, half an hour's wait, a quarter's
	// finish (helper-51 L4: the start alone).
	loc, _ := time.LoadLocation("Europe/Moscow")
	v.StartsAt, v.DurationMin, v.ProcessingMin, v.FinishMin = time.Date(2026, 12, 12, 14, 30, 0, 0, loc), 60, 30, 15
	if got := mail(booking.KindConfirmation); !strings.Contains(got, "Когда: сб, 12 дек., 14:30–16:15") {
		t.Errorf("a confirmation of a colour with processing time:\n%s", got)
	}
	v.Prepaid = 100000
	for _, kind := range []booking.MessageKind{booking.KindPaid, booking.KindReminder} {
		if got := mail(kind); !strings.Contains(got, "Цена: 6 000 ₽") || !strings.Contains(got, "К оплате в салоне: 5 000 ₽") {
			t.Errorf("%s, the deposit paid online:\n%s", kind, got)
		}
	}
	v.Status = booking.StatusCancelled
	if got := mail(booking.KindCancelled); strings.Contains(got, "Цена") {
		t.Errorf("a cancellation:\n%s", got)
	}
}

// TestSMSSaysWhatABalancePaid: a confirmation's SMS says what the package
// or certificate paid and has left; a cancellation's, what came back to
// it and what the rules kept; a reminder's, nothing of it (each part of an
// SMS costs).
func TestSMSSaysWhatABalancePaid(t *testing.T) {
	view := paidView
	for _, c := range []struct {
		name, lang string
		kind       booking.MessageKind
		v          *booking.View
		want, not  string
	}{
		{"a package, booked", "ru", booking.KindConfirmation,
			view(booking.StatusConfirmed, booking.PaidWith{Kind: booking.BalancePackage, Visits: 1, Remaining: 4}),
			"Абонемент: оплачено 1 визит, осталось 4 визита", ""},
		{"a certificate, booked", "en", booking.KindConfirmation,
			view(booking.StatusConfirmed, booking.PaidWith{Kind: booking.BalanceCertificate, Amount: 250000, Covers: 250000, Remaining: 50000}),
			"Certificate: paid 2,500\u00a0₽, 500\u00a0₽ left", ""},
		{"a certificate paying part, booked", "ru", booking.KindConfirmation,
			&booking.View{Booking: booking.Booking{Status: booking.StatusConfirmed, Price: 250000, PaidWith: &booking.PaidWith{Kind: booking.BalanceCertificate,
				Amount: 100000, Covers: 100000}}, Salon: paidSalon, ServiceName: "Colour"},
			"Сертификат: оплачено 1\u00a0000\u00a0₽, осталось 0\u00a0₽; в салоне к оплате 1\u00a0500\u00a0₽", ""},
		{"a certificate, cancelled, part kept", "ru", booking.KindCancelled,
			view(booking.StatusCancelled, booking.PaidWith{Kind: booking.BalanceCertificate, Amount: 300000, Remaining: 250000,
				Settled: true, Kept: 100000, Returned: 200000}),
			"Сертификат: возвращено — 2\u00a0000\u00a0₽, удержано по правилам отмены — 1\u00a0000\u00a0₽", ""},
		{"a package, cancelled, kept", "en", booking.KindCancelled,
			view(booking.StatusCancelled, booking.PaidWith{Kind: booking.BalancePackage, Visits: 1, Remaining: 3, Settled: true, Kept: 1}),
			"Package: 1 visit kept by the cancellation rules", "back on it"},
		{"a package, reminded", "en", booking.KindReminder,
			view(booking.StatusConfirmed, booking.PaidWith{Kind: booking.BalancePackage, Visits: 1, Remaining: 3}), "", "Package"},
	} {
		got := courier.Short(&booking.Outgoing{Message: booking.Message{Kind: c.kind}, Booking: c.v, Lang: c.lang}, "https://salon.test")
		if !strings.Contains(got, c.want) || (c.not != "" && strings.Contains(got, c.not)) {
			t.Errorf("%s: the SMS %q, want %q, not %q", c.name, got, c.want, c.not)
		}
	}
}
