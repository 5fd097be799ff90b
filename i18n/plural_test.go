package i18n_test

import (
	"testing"

	"salon/i18n"
)

// TestPlural: Russian nouns after a count take one of three forms by the
// count's last digits (11-14 are many); English, one for 1 alone.
func TestPlural(t *testing.T) {
	for _, c := range []struct {
		lang string
		n    int64
		want int
	}{
		{"ru", 1, i18n.PluralOne}, {"ru", 21, i18n.PluralOne}, {"ru", 101, i18n.PluralOne}, {"ru", -1, i18n.PluralOne},
		{"ru", 2, i18n.PluralFew}, {"ru", 4, i18n.PluralFew}, {"ru", 22, i18n.PluralFew}, {"ru", 104, i18n.PluralFew},
		{"ru", 0, i18n.PluralMany}, {"ru", 5, i18n.PluralMany}, {"ru", 11, i18n.PluralMany}, {"ru", 12, i18n.PluralMany},
		{"ru", 14, i18n.PluralMany}, {"ru", 111, i18n.PluralMany}, {"ru", 365, i18n.PluralMany},
		{"en", 1, i18n.PluralOne}, {"en", 21, i18n.PluralMany}, {"en", 2, i18n.PluralMany}, {"en", 0, i18n.PluralMany},
	} {
		if got := i18n.Plural(c.lang, c.n); got != c.want {
			t.Errorf("Plural(%s, %d) = %d, want %d", c.lang, c.n, got, c.want)
		}
	}
}
