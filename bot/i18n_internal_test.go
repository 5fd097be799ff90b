package bot

import (
	"regexp"
	"testing"
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
