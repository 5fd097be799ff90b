package widget

import "testing"

// TestKeepTogether: the spaces inside an amount an owner typed become
// no-break; the others stay.
func TestKeepTogether(t *testing.T) {
	for in, want := range map[string]string{
		"Сертификат на 3 000 ₽":     "Сертификат на 3\u00a0000\u00a0₽",
		"Gift 10 000 000 руб":       "Gift 10\u00a0000\u00a0000\u00a0руб",
		"5 окрашиваний за 2 месяца": "5 окрашиваний за 2 месяца",
		"Certificate 500 $":         "Certificate 500\u00a0$",
		"1 2 3":                     "1 2 3",
	} {
		if got := keepTogether(in); got != want {
			t.Errorf("keepTogether(%q) = %q, want %q", in, got, want)
		}
	}
}
