package booking

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Text that people type (names, notes, reasons, keys) is checked here, once,
// for every field and every front end, before it reaches the database:
// valid UTF-8, normalised (NFC) and trimmed; no control characters (a NUL
// would make PostgreSQL refuse the row), no bidirectional overrides or
// isolates (which make a name display as something else), no line or
// paragraph separators in one-line fields; and, when the field is required,
// at least one visible character (a name of zero-width spaces is no name).

// Field lengths, in characters.
const (
	MaxNameLen   = 100  // a client's or master's name
	MaxTitleLen  = 200  // a salon's or service's name
	MaxNotesLen  = 1000 // notes on a booking or a client
	MaxReasonLen = 500  // a cancellation reason
)

// textKind says what a field may hold.
type textKind int

const (
	oneLine   textKind = iota // a name: one line
	multiLine                 // notes: newlines allowed
)

// cleanText checks s for field and returns it cleaned; problems are added to
// fe. An empty result is allowed unless required.
func cleanText(fe fieldErrors, field, s string, maxLen int, kind textKind, required bool) string {
	if !utf8.ValidString(s) {
		fe.add(field, "must be valid UTF-8 text")
		return ""
	}
	s = norm.NFC.String(s)
	if kind == multiLine {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	s = strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || invisible(r) && !bidiControl(r) })
	if reason := badRunes(s, kind); reason != "" {
		fe.add(field, reason)
		return ""
	}
	switch {
	case s == "" && required:
		fe.add(field, "required")
	case s != "" && !strings.ContainsFunc(s, visible):
		fe.add(field, "must contain letters or digits, not only invisible characters")
		return ""
	case utf8.RuneCountInString(s) > maxLen:
		fe.add(field, "too long (%d characters at most)", maxLen)
	}
	return s
}

// badRunes names what is wrong with the characters of s, or returns "".
func badRunes(s string, kind textKind) string {
	for _, r := range s {
		switch {
		case r == '\n' && kind == multiLine:
		case r == '\t' && kind == multiLine:
		case unicode.IsControl(r):
			return "must not contain control characters"
		case bidiControl(r):
			return "must not contain text direction controls"
		case r == '\u2028' || r == '\u2029':
			if kind == oneLine {
				return "must be one line"
			}
			return "must not contain line or paragraph separators"
		case r == utf8.RuneError:
			return "must be valid UTF-8 text"
		}
	}
	return ""
}

// bidiControl reports the explicit directional embeddings, overrides and
// isolates (U+202A..U+202E, U+2066..U+2069).
func bidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// invisible reports characters that occupy no visible space: format
// characters (zero-width space and joiners, the BOM) and the blank
// "letters" used to fake an empty name.
func invisible(r rune) bool {
	switch r {
	case '\u115F', '\u1160', '\u3164', '\uFFA0', '\u2800', '\u180E':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// visible reports a character that shows: a letter, digit, punctuation or symbol.
func visible(r rune) bool {
	return !invisible(r) && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsPunct(r) || unicode.IsSymbol(r))
}

// CleanName returns s cleaned as a name would be, cut to MaxNameLen
// characters, or "" when nothing visible is left. Front ends use it for
// names they did not ask the person to type (a Telegram display name).
func CleanName(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || bidiControl(r) || r == '\u2028' || r == '\u2029' {
			return -1
		}
		return r
	}, s)
	if r := []rune(s); len(r) > MaxNameLen {
		s = string(r[:MaxNameLen])
	}
	fe := fieldErrors{}
	s = cleanText(fe, "name", s, MaxNameLen, oneLine, false)
	if len(fe) > 0 {
		return ""
	}
	return s
}

// checkKey checks an idempotency key: 1 to MaxKeyLen visible ASCII
// characters. An absent key is "", and allowed; a key of spaces is not.
func checkKey(fe fieldErrors, field, key string) {
	if key == "" {
		return
	}
	if len(key) > MaxKeyLen {
		fe.add(field, "at most %d characters", MaxKeyLen)
		return
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7E {
			fe.add(field, "use visible ASCII characters only (letters, digits, punctuation; no spaces)")
			return
		}
	}
}
