package widget

import (
	"fmt"
	"regexp"
	"testing"
)

var verbRE = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)

// Every text of the widget (the page's and the script's) has both its
// languages, taking the same arguments, and the Russian is not the English.
func TestEveryWidgetTextInBothLanguages(t *testing.T) {
	for key, en := range messages["en"] {
		ru, ok := messages["ru"][key]
		switch {
		case !ok || ru == "":
			t.Errorf("%s has no Russian", key)
		case len(verbRE.FindAllString(en, -1)) != len(verbRE.FindAllString(ru, -1)):
			t.Errorf("%s takes other arguments in Russian: %q / %q", key, en, ru)
		case ru == en && key != "lang_other":
			t.Errorf("%s reads the same in Russian: %q", key, ru)
		}
	}
	for key := range messages["ru"] {
		if _, ok := messages["en"][key]; !ok {
			t.Errorf("%s has no English", key)
		}
	}
}

// TestPluralKey: the gift page's visits agree with their number (2 визита,
// 5 визитов, 21 визит; 1 visit, 2 visits), in both languages' words.
func TestPluralKey(t *testing.T) {
	for _, c := range []struct {
		lang string
		n    int
		want string
	}{{"ru", 1, "1 визит: Стрижка"}, {"ru", 2, "2 визита: Стрижка"}, {"ru", 5, "5 визитов: Стрижка"}, {"ru", 21, "21 визит: Стрижка"},
		{"ru", 12, "12 визитов: Стрижка"}, {"en", 1, "1 visit: Стрижка"}, {"en", 2, "2 visits: Стрижка"}} {
		if got := fmt.Sprintf(messages[c.lang][pluralKey("gift_pkg_for", c.lang, c.n)], c.n, "Стрижка"); got != c.want {
			t.Errorf("%s %d: %q, want %q", c.lang, c.n, got, c.want)
		}
	}
}
