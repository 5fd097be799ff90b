package panel

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"salon/booking"
	"salon/web"
)

// TestEveryTextHasItsRussian finds every text the templates and the code
// translate and checks that ru has it.
func TestEveryTextHasItsRussian(t *testing.T) {
	re := []*regexp.Regexp{
		regexp.MustCompile(`\.L\.T "([^"]+)"`),               // templates
		regexp.MustCompile(`\bT\("((?:[^"\\]|\\.)+)"`),       // l.T("...") in code
		regexp.MustCompile(`return [^,\n]+, "([A-Z][^"]+)"`), // classify's messages
	}
	seen := map[string]bool{}
	check := func(name string, src []byte) {
		for _, r := range re {
			for _, m := range r.FindAllSubmatch(src, -1) {
				s := string(m[1])
				if seen[s] {
					continue
				}
				seen[s] = true
				if _, ok := ru[s]; !ok {
					t.Errorf("%s: no Russian for %q", name, s)
				}
			}
		}
	}
	_ = fs.WalkDir(web.Panel, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(web.Panel, p)
			check(p, b)
		}
		return nil
	})
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if f == "i18n.go" || f == "i18n_test.go" {
			continue // the dictionary itself
		}
		b, _ := os.ReadFile(f)
		check(f, b)
	}
	for _, n := range phaseTexts {
		if _, ok := ru[n]; !ok {
			t.Errorf("import phase %q has no Russian", n)
		}
	}
	for _, n := range notices {
		if _, ok := ru[n]; !ok {
			t.Errorf("notice %q has no Russian", n)
		}
	}
	if len(seen) < 80 {
		t.Errorf("only %d texts found: the patterns no longer match", len(seen))
	}
}

// TestAttentionKindsHaveTheirRussian: the kinds of what needs attention are
// named in both languages.
func TestAttentionKindsHaveTheirRussian(t *testing.T) {
	for _, k := range []booking.AttentionKind{booking.AttentionStuck, booking.AttentionHeld, booking.AttentionKept, booking.AttentionReceipt} {
		en := (&lang{Code: "en"}).Attention(k)
		if ru := (&lang{Code: "ru"}).Attention(k); en == "" || ru == en {
			t.Errorf("%s: en %q, ru %q", k, en, ru)
		}
	}
}
