package widget

import (
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
