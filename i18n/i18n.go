// Package i18n is the one catalogue of what the core says to people: why an
// input was refused, the names of the fields it names, the words of a
// booking's history. The core writes a Text, a key (the English message,
// a format with %s, %d or %q for its arguments) and its arguments, never a
// finished sentence; every front end (panel, widget, bot, importer) puts it
// in the reader's language with In. A key without a translation reads in
// English, and the catalogue test fails for it.
package i18n

import (
	"errors"
	"fmt"
	"strings"
)

// Languages are the languages the catalogue speaks; the first is the one
// the keys are written in.
var Languages = []string{"en", "ru"}

// Text is a message in code: its key and arguments. It is an error too, so
// a parse function can return one and the front end can still translate it.
type Text struct {
	Key  string
	Args []any
}

// New returns the message key with args.
func New(key string, args ...any) Text { return Text{Key: key, Args: args} }

// String is the message in English.
func (t Text) String() string { return t.In("en") }

// Error is the message in English.
func (t Text) Error() string { return t.In("en") }

// IsZero reports whether t is no message.
func (t Text) IsZero() bool { return t.Key == "" }

// In is the message in lang (en or ru; anything else reads in English).
// Arguments that say themselves in a language (a Text, a date: an In
// method) are put in lang too.
func (t Text) In(lang string) string {
	format := t.Key
	if tr, ok := catalogue[lang][t.Key]; ok {
		format = tr
	}
	if len(t.Args) == 0 {
		return format
	}
	args := make([]any, len(t.Args))
	for i, a := range t.Args {
		if x, ok := a.(interface{ In(string) string }); ok {
			a = x.In(lang)
		}
		args[i] = a
	}
	return fmt.Sprintf(format, args...)
}

// Has reports whether lang has its own words for key (English has them
// all: the keys are English).
func Has(lang, key string) bool {
	if lang == "en" {
		return true
	}
	_, ok := catalogue[lang][key]
	return ok
}

// Keys lists the keys lang translates.
func Keys(lang string) []string {
	out := make([]string, 0, len(catalogue[lang]))
	for k := range catalogue[lang] {
		out = append(out, k)
	}
	return out
}

// Of is the message err carries: the Text it is or wraps, or its English
// text as a key of its own (which no language translates).
func Of(err error) Text {
	var t Text
	if errors.As(err, &t) {
		return t
	}
	return Text{Key: err.Error()}
}

// Field is the name people read for a field the core names (price,
// client.phone, shifts[0], 2026-03-08 shifts): a label of the catalogue,
// or the name itself when it has none.
func Field(name string) Text {
	prefix, base := "", name
	if i := strings.LastIndexByte(base, ' '); i >= 0 {
		prefix, base = base[:i], base[i+1:]
	}
	if i := strings.IndexByte(base, '['); i >= 0 {
		base = base[:i]
	}
	label, ok := fields[base]
	switch {
	case !ok:
		return New(name)
	case prefix != "":
		return New("%s: %s", prefix, New(label))
	}
	return New(label)
}

// Plural forms of a noun after a count, as Russian has them (English uses
// PluralOne for 1 and PluralMany otherwise).
const (
	PluralOne  = iota // 1, 21, 101: визит, день
	PluralFew         // 2-4, 22-24: визита, дня
	PluralMany        // 0, 5-20, 25-30: визитов, дней
)

// Visits is a count of visits with its noun in the number lang wants: 1
// visit, 2 visits; 1 визит, 3 визита, 5 визитов, 21 визит.
func Visits(lang string, n int64) string {
	nouns := [...]string{"visit", "visits", "visits"}
	if lang == "ru" {
		nouns = [...]string{"визит", "визита", "визитов"}
	}
	return fmt.Sprintf("%d %s", n, nouns[Plural(lang, n)])
}

// Plural is the form of a noun after n in lang (its sign aside).
func Plural(lang string, n int64) int {
	if n < 0 {
		n = -n
	}
	switch {
	case lang != "ru":
		if n == 1 {
			return PluralOne
		}
		return PluralMany
	case n%10 == 1 && n%100 != 11:
		return PluralOne
	case n%10 >= 2 && n%10 <= 4 && (n%100 < 12 || n%100 > 14):
		return PluralFew
	}
	return PluralMany
}
