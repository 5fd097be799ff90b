package booking_test

import (
	"testing"

	"salon/booking"
)

// Money reads as each language writes it; a negative amount (a spend in a
// ledger) with its minus before a leading sign: -£50, not £-50.
func TestMoneyReadsAsTheLanguageWritesIt(t *testing.T) {
	for _, c := range []struct {
		m              booking.Money
		currency, lang string
		want           string
	}{
		{120050, "GBP", "en", "£1,200.50"},
		{-5000, "GBP", "en", "-£50"},
		{-123456, "USD", "en", "-$1,234.56"},
		{150050, "RUB", "ru", "1\u00a0500,50\u00a0₽"},
		{-300000, "RUB", "ru", "-3\u00a0000\u00a0₽"},
	} {
		if got := c.m.Format(c.currency, c.lang); got != c.want {
			t.Errorf("%d %s %s: %q, want %q", c.m, c.currency, c.lang, got, c.want)
		}
	}
}
