package courier_test

import (
	"strings"
	"testing"

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
