package importer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"salon/i18n"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Reader reads a CSV file as people export it: UTF-8 with or without a
// BOM, UTF-16 with a BOM, or a single-byte code page (what Excel saves as
// "CSV" on Windows: Windows-1251 in a Cyrillic locale, Windows-1252 in a
// Western one; see legacyCharset); CRLF
// or LF; the delimiter (comma, semicolon or tab) found on the header line;
// quoted fields with delimiters, quotes and newlines inside; blank lines
// skipped. Each record carries the physical line it starts on. What one
// record may cost is bounded (MaxLine, MaxCell).
type Reader struct {
	scan     *scanner
	count    *counter
	Encoding string // utf-8, utf-16, windows-1251, windows-1252
	Delim    rune
	Header   []string // as written: its first MaxFields cells
	// HeaderPast counts the header's cells past MaxFields that are not
	// blank: columns no row can fill.
	HeaderPast int
}

// Record is one row of the file.
type Record struct {
	Line   int // the physical line it starts on (1 is the header)
	Fields []string
}

// sniffSize is how much of the file decides its encoding.
const sniffSize = 64 << 10

// NewReader reads the header of r. lang is the salon's language: it
// decides the code page of a file that is not UTF-8 only when the file's
// own letters do not (legacyCharset).
func NewReader(r io.Reader, lang string) (*Reader, error) {
	cnt := &counter{r: r}
	br := bufio.NewReaderSize(cnt, sniffSize)
	head, err := br.Peek(sniffSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("read: %w", err)
	}
	rd := &Reader{count: cnt}
	var text io.Reader
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		_, _ = br.Discard(3)
		text, rd.Encoding = br, "utf-8"
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		text = transform.NewReader(br, unicode.BOMOverride(unicode.UTF8.NewDecoder()))
		rd.Encoding = "utf-16"
	case validUTF8Prefix(head, len(head) == sniffSize):
		text, rd.Encoding = br, "utf-8"
	default:
		cm, name := legacyCharset(head, lang == "ru")
		text, rd.Encoding = transform.NewReader(br, cm.NewDecoder()), name
	}
	// The delimiter: the most frequent candidate on the header line.
	tb := bufio.NewReaderSize(text, sniffSize)
	line, _ := tb.Peek(sniffSize)
	if i := bytes.IndexAny(line, "\r\n"); i >= 0 {
		line = line[:i]
	}
	rd.Delim = delimiter(string(line))
	rd.scan = newScanner(tb, rd.Delim)
	for {
		h, _, err := rd.scan.next()
		var fe *FileError
		switch {
		case errors.Is(err, io.EOF):
			return nil, errors.New("the file is empty: no header line")
		case errors.As(err, &fe):
			return nil, fmt.Errorf("the header: %w", err)
		case err != nil:
			return nil, fmt.Errorf("header: %w", err)
		}
		if !blank(h) {
			for _, f := range h {
				if !utf8.ValidString(f) {
					return nil, errors.New("the header line is not valid text in UTF-8, Windows-1251 or Windows-1252")
				}
			}
			rd.Header, rd.HeaderPast = h, rd.scan.dropped
			break
		}
	}
	return rd, nil
}

// validUTF8Prefix reports whether b is UTF-8, allowing a rune cut off at
// its end when b is only the beginning of the file.
func validUTF8Prefix(b []byte, cut bool) bool {
	if utf8.Valid(b) {
		return true
	}
	for k := 1; cut && k < utf8.UTFMax && k < len(b); k++ {
		if utf8.Valid(b[:len(b)-k]) {
			return true
		}
	}
	return false
}

// legacyCharset picks the code page of a file that is not UTF-8 from its
// first bytes b: Windows-1251 or Windows-1252. Both keep ASCII and put
// letters from 0xC0 up (and Ё, ё, at 0xA8, 0xB8, in 1251). A Western
// letter from there stands inside a word of ASCII letters ("José",
// "Müller", "Conceição", "Größe"): it touches one. A Cyrillic one stands
// in a word of its own kind ("Анна", "р."): it touches none. So letters
// that mostly touch an ASCII letter read as Windows-1252, letters that
// mostly do not as Windows-1251; a file with too few to tell (or none:
// only "£" or a dash) takes the salon's: cyrillic.
func legacyCharset(b []byte, cyrillic bool) (*charmap.Charmap, string) {
	high := func(c byte) bool { return c >= 0xC0 || c == 0xA8 || c == 0xB8 }
	ascii := func(i int) bool {
		return i >= 0 && i < len(b) && (b[i] >= 'a' && b[i] <= 'z' || b[i] >= 'A' && b[i] <= 'Z')
	}
	letters, touching := 0, 0
	for i, c := range b {
		if high(c) {
			letters++
			if ascii(i-1) || ascii(i+1) {
				touching++
			}
		}
	}
	switch {
	case letters >= 3 && 3*touching >= 2*letters:
		cyrillic = false
	case letters >= 3 && 3*touching <= letters:
		cyrillic = true
	}
	if cyrillic {
		return charmap.Windows1251, "windows-1251"
	}
	return charmap.Windows1252, "windows-1252"
}

// delimiter picks the delimiter of a header line: the candidate found most
// often outside quotes (semicolon first on a tie, as Excel writes it).
func delimiter(line string) rune {
	counts := map[rune]int{}
	quoted := false
	for _, r := range line {
		switch {
		case r == '"':
			quoted = !quoted
		case !quoted && (r == ';' || r == ',' || r == '\t'):
			counts[r]++
		}
	}
	best, n := ',', 0
	for _, r := range []rune{';', ',', '\t'} {
		if counts[r] > n {
			best, n = r, counts[r]
		}
	}
	return best
}

// Next returns the next non-blank record, or io.EOF. A row that cannot be
// read whole is a *LineError, and reading may go on after it; a line that
// cannot be a row (longer than MaxLine) is a *FileError, and it may not.
func (r *Reader) Next() (Record, error) {
	for {
		fields, line, err := r.scan.next()
		var le *LineError
		switch {
		case errors.Is(err, io.EOF):
			return Record{}, io.EOF
		case errors.As(err, &le):
			return Record{Line: line}, err
		case err != nil:
			return Record{Line: line}, err
		}
		if blank(fields) {
			continue
		}
		for i, f := range fields {
			if !utf8.ValidString(f) {
				return Record{Line: line}, &LineError{Line: line, Column: i + 1, Reason: i18n.New("must be valid UTF-8 text")}
			}
			fields[i] = unneutralize(f) // as Export wrote it, a formula made text
		}
		return Record{Line: line, Fields: fields}, nil
	}
}

// Offset is how many bytes of the file have been read.
func (r *Reader) Offset() int64 { return r.count.n }

// LineError is a row that could not be read whole: its line, the column
// at fault (1-based; 0 for the row) and why.
type LineError struct {
	Line, Column int
	Reason       i18n.Text
}

func (e *LineError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Reason.String())
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Reason.String())
}

func blank(fields []string) bool {
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
