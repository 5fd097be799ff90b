package importer

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"salon/booking"
)

func readAll(t testing.TB, data []byte) (*Reader, []Record) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data), "en")
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r, out
		}
		if err != nil {
			t.Fatalf("line %d: %v", rec.Line, err)
		}
		out = append(out, rec)
	}
}

func TestReaderVariations(t *testing.T) {
	cp1251, _ := charmap.Windows1251.NewEncoder().String("Имя;Телефон\r\nАнна;1\r\n")
	cp1252, _ := charmap.Windows1252.NewEncoder().String("Name,Phone,Notes\r\nJosé Müller,07911 123460,£10 voucher – café\r\nZoë Brontë,1,naïve\r\n")
	utf16, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String("name\tphone\nАнна\t1\n")
	cases := []struct {
		name     string
		data     string
		encoding string
		delim    rune
		header   string
		rows     [][]string
		lines    []int
	}{
		{"utf-8, comma, LF", "name,phone\nAnna,1\n", "utf-8", ',', "name", [][]string{{"Anna", "1"}}, []int{2}},
		{"BOM, semicolon, CRLF", "\ufeffИмя;Телефон\r\nАнна;1\r\n", "utf-8", ';', "Имя", [][]string{{"Анна", "1"}}, []int{2}},
		{"windows-1251", cp1251, "windows-1251", ';', "Имя", [][]string{{"Анна", "1"}}, []int{2}},
		{"windows-1252 (Excel on English Windows)", cp1252, "windows-1252", ',', "Name",
			[][]string{{"José Müller", "07911 123460", "£10 voucher – café"}, {"Zoë Brontë", "1", "naïve"}}, []int{2, 3}},
		{"utf-16 with BOM, tab", utf16, "utf-16", '\t', "name", [][]string{{"Анна", "1"}}, []int{2}},
		{"quoted delimiters, quotes, newlines", "a,b\n\"x, y\",\"say \"\"hi\"\"\"\n\"two\nlines\",z\nlast,1\n", "utf-8", ',', "a",
			[][]string{{"x, y", `say "hi"`}, {"two\nlines", "z"}, {"last", "1"}}, []int{2, 3, 5}},
		{"blank lines and blank rows skipped", "a;b\n\n;\nx;y\n\n", "utf-8", ';', "a", [][]string{{"x", "y"}}, []int{4}},
		{"more semicolons than commas", "a;b;c,d\n1;2;3,4\n", "utf-8", ';', "a", [][]string{{"1", "2", "3,4"}}, []int{2}},
		{"delimiter inside quotes does not count", "\"a;b\",c\n1,2\n", "utf-8", ',', "a;b", [][]string{{"1", "2"}}, []int{2}},
		{"leading blank lines", "\n\nname\nx\n", "utf-8", ',', "name", [][]string{{"x"}}, []int{4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, recs := readAll(t, []byte(c.data))
			if r.Encoding != c.encoding || r.Delim != c.delim || r.Header[0] != c.header {
				t.Errorf("encoding %s delim %q header %q", r.Encoding, r.Delim, r.Header)
			}
			if len(recs) != len(c.rows) {
				t.Fatalf("%d rows: %+v", len(recs), recs)
			}
			for i, rec := range recs {
				if strings.Join(rec.Fields, "|") != strings.Join(c.rows[i], "|") || rec.Line != c.lines[i] {
					t.Errorf("row %d: line %d %q, want line %d %q", i, rec.Line, rec.Fields, c.lines[i], c.rows[i])
				}
			}
		})
	}
}

func TestHeaderNamesInBothLanguages(t *testing.T) {
	l, err := mapHeader(Bookings, []string{" Мастер ", "УСЛУГА", "Дата", "время", "Телефон", "Заметка"})
	if err != nil {
		t.Fatal(err)
	}
	if l.index["master"] != 0 || l.index["service"] != 1 || l.index["start"] != 3 || l.index["client_phone"] != 4 ||
		len(l.unknown) != 1 || l.unknown[0] != "Заметка" {
		t.Errorf("layout %+v", l)
	}
	if _, err := mapHeader(Schedule, []string{"master", "date", "start"}); err == nil || !strings.Contains(err.Error(), "end / конец") {
		t.Errorf("missing column: %v", err)
	}
}

func TestValuesAsPeopleWriteThem(t *testing.T) {
	amounts := map[string]booking.Money{"1500": 150000, "1 500,50": 150050, "1\u00a0500.5": 150050, "1,500.50": 150050,
		"1.500,50": 150050, "2 500 ₽": 250000, "0": 0}
	for s, want := range amounts {
		if got, err := booking.ParseMoney(s); err != nil || got != want {
			t.Errorf("ParseMoney(%q) = %v %v, want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"abc", "-5", "1.234.567,891", ""} {
		if _, err := booking.ParseMoney(s); err == nil {
			t.Errorf("ParseMoney(%q) accepted", s)
		}
	}
	mar8 := booking.Date{Year: 2026, Month: 3, Day: 8}
	dates := map[string]booking.Date{"2026-03-08": mar8, "08.03.2026": mar8, "8.3.2026": mar8,
		// As spreadsheets in English write them.
		"2026/03/08": mar8, "8-Mar-2026": mar8, "08-mar-26": mar8, "8 Mar 2026": mar8, "Mar 8, 2026": mar8, "March 8, 2026": mar8}
	for s, want := range dates {
		if got, err := ParseDate(s); err != nil || got != want {
			t.Errorf("ParseDate(%q) = %v %v", s, got, err)
		}
	}
	for _, s := range []string{"31.02.2026", "2026/02/30", "03-08-2026", "tomorrow", "Smarch 8, 2026"} {
		if _, err := ParseDate(s); err == nil {
			t.Errorf("ParseDate(%q) accepted", s)
		}
	}
	for s, want := range map[string]booking.Date{"08/03/26": mar8, "8/3/2026": mar8} {
		if got, err := ParseDateIn(s, "GB"); err != nil || got != want {
			t.Errorf("ParseDateIn(%q, GB) = %v %v", s, got, err)
		}
	}
	if got, err := ParseDateIn("03/08/26", "US"); err != nil || got != mar8 {
		t.Errorf("ParseDateIn(03/08/26, US) = %v %v", got, err)
	}
	minutes := map[string]int{"45": 45, "45 mins": 45, "45 min": 45, "45minutes": 45, "90 мин": 90, "1:30": 90, "1:30:00": 90, "0:45": 45, "-10": -10}
	for s, want := range minutes {
		if got, err := parseMinutes(s); err != nil || got != want {
			t.Errorf("parseMinutes(%q) = %d %v, want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"an hour", "1:5", "1:75", "45 hours", "", "1.5"} {
		if got, err := parseMinutes(s); err == nil {
			t.Errorf("parseMinutes(%q) = %d, accepted", s, got)
		}
	}
	for s, want := range map[string]string{"09:00:00": "09:00", "9:00:00 AM": "9:00 AM", "5:30:00 pm": "5:30 pm", "26:00:00": "26:00",
		"09:00:30": "09:00:30", "9:00": "9:00"} {
		if got := noSeconds(s); got != want {
			t.Errorf("noSeconds(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzReader: whatever the bytes, the reader returns records or errors,
// never panics, and every field it returns is valid UTF-8.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"name,phone\nAnna,1\n", "\ufeffИмя;Телефон\r\n\"a;b\";\"x\"\"y\"\r\n", "a\tb\n\"open\n",
		"\xff\xfe", "\xcf\xf0\xe8;\xe2\n1;2\n", "", "\n\n\n", "a,\"b\nc\",d\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), "ru")
		if err != nil {
			return
		}
		for _, h := range r.Header {
			if !utf8.ValidString(h) {
				t.Fatalf("header %q is not UTF-8", h)
			}
		}
		for range 10000 {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				continue
			}
			for _, f := range rec.Fields {
				if !utf8.ValidString(f) {
					t.Fatalf("field %q is not UTF-8", f)
				}
			}
			if rec.Line < 2 {
				t.Fatalf("record on line %d", rec.Line)
			}
		}
	})
}

// TestACodePageWithoutLettersIsTheSalons: a file that is not UTF-8 and
// has no letters past ASCII ("£", a dash) is read in the salon's code
// page; one with letters, by its letters, whatever the salon's language.
func TestACodePageWithoutLettersIsTheSalons(t *testing.T) {
	for _, c := range []struct {
		text, lang, encoding, want string
	}{
		{"note\n£10 – gift\n", "en", "windows-1252", "£10 – gift"},
		{"note\n№ 10 – gift\n", "ru", "windows-1251", "№ 10 – gift"},
		{"note\nJosé Müller / café\n", "ru", "windows-1252", "José Müller / café"},
		{"note\nАнна и Ёлка\n", "en", "windows-1251", "Анна и Ёлка"},
		// Two Western letters side by side still touch ASCII ones.
		{"note\nMaria da Conceição / João Assunção\n", "en", "windows-1252", "Maria da Conceição / João Assunção"},
		{"note\nJürgen Groß / Größe\n", "ru", "windows-1252", "Jürgen Groß / Größe"},
		// Cyrillic letters alone ("р.", initials) are still Cyrillic.
		{"note\n1500 р. / А. Б. Иванова\n", "en", "windows-1251", "1500 р. / А. Б. Иванова"},
		// Too few letters to tell: the salon's.
		{"note\nJosé\n", "en", "windows-1252", "José"},
		{"note\nр.\n", "ru", "windows-1251", "р."},
	} {
		cm := charmap.Windows1252
		if c.encoding == "windows-1251" {
			cm = charmap.Windows1251
		}
		data, err := cm.NewEncoder().String(c.text)
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(strings.NewReader(data), c.lang)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next()
		if err != nil || r.Encoding != c.encoding || rec.Fields[0] != c.want {
			t.Errorf("%q in a %s salon: %s %q (%v), want %s %q", c.text, c.lang, r.Encoding, rec.Fields, err, c.encoding, c.want)
		}
	}
}
