package bot

import (
	"regexp"
	"testing"

	"salon/booking"
)

var verbRE = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)

// Every message of the bot has both its languages, taking the same
// arguments.
func TestEveryBotTextInBothLanguages(t *testing.T) {
	for key, en := range texts["en"] {
		ru, ok := texts["ru"][key]
		switch {
		case !ok || ru == "":
			t.Errorf("%s has no Russian", key)
		case len(verbRE.FindAllString(en, -1)) != len(verbRE.FindAllString(ru, -1)):
			t.Errorf("%s takes other arguments in Russian: %q / %q", key, en, ru)
		}
	}
	for key := range texts["ru"] {
		if _, ok := texts["en"][key]; !ok {
			t.Errorf("%s has no English", key)
		}
	}
}

// A package's visits of a visit of several services read in numbers: what
// cancelling now keeps and gives back, and, once cancelled, what was kept,
// what went back and what is left.
func TestAPackagesVisitsReadInNumbers(t *testing.T) {
	v := &booking.View{Booking: booking.Booking{PaidWith: &booking.PaidWith{Kind: booking.BalancePackage, Hint: "AB12", Visits: 2, Remaining: 3}}}
	for _, c := range []struct {
		lang  string
		keeps int64
		want  string
	}{
		{"ru", 1, "\nПо правилам отмены салона при отмене сейчас с абонемента …AB12 удерживается — 1 визит, остальное вернётся на него — 1 визит."},
		{"ru", 2, "\nПо правилам отмены салона при отмене сейчас с абонемента …AB12 удерживается — 2 визита."},
		{"en", 0, "\nWhat it paid goes back to the package …AB12: 2 visits."},
	} {
		v.CancelKeeps = c.keeps
		tn := &turn{c: chat{Lang: c.lang}}
		if got := tn.cancelKeeps(v); got != c.want {
			t.Errorf("%s, keeping %d: %q, want %q", c.lang, c.keeps, got, c.want)
		}
	}
	v.PaidWith.Settled, v.PaidWith.Kept, v.PaidWith.Returned = true, 1, 1
	want := "\nПо правилам отмены салона с абонемента …AB12 удержано — 1 визит.\nНа абонемент …AB12 возвращено — 1 визит.\nНа нём осталось: 3 визита."
	if got := cancelledLines("ru", v); got != want {
		t.Errorf("cancelled: %q, want %q", got, want)
	}
}
