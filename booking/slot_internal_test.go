package booking

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestFreeStarts(t *testing.T) {
	day := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	at := func(hhmm string) time.Time {
		c, err := ParseClock(hhmm)
		if err != nil {
			panic(err)
		}
		return day.Add(time.Duration(c) * time.Minute)
	}
	sh := func(a, b string) shift { return shift{start: at(a), end: at(b)} }
	withBreak := func(a, b, bs, be string) shift {
		s := sh(a, b)
		s.breakStart, s.breakEnd = at(bs), at(be)
		return s
	}
	busy := func(pairs ...string) []interval {
		var out []interval
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, interval{at(pairs[i]), at(pairs[i+1])})
		}
		return out
	}
	all := window{at("00:00"), at("24:00")}
	base := slotRules{timing: timing{dur: 60 * time.Minute}, step: 30 * time.Minute, earliest: at("00:00"), latest: at("24:00")}
	with := func(f func(r *slotRules)) slotRules { r := base; f(&r); return r }

	cases := []struct {
		name   string
		shifts []shift
		busy   []interval
		rules  slotRules
		w      window
		want   string
	}{
		{"plain", []shift{sh("10:00", "12:00")}, nil, base, all, "[10:00 10:30 11:00]"},
		{"no shift", nil, nil, base, all, "[]"},
		{"too short", []shift{sh("10:00", "10:45")}, nil, base, all, "[]"},
		{"break splits, grid restarts after it", []shift{withBreak("10:00", "14:00", "11:30", "12:10")}, nil, base, all,
			"[10:00 10:30 12:10 12:40]"},
		{"busy", []shift{sh("10:00", "14:00")}, busy("11:00", "12:00"), base, all, "[10:00 12:00 12:30 13:00]"},
		{"busy with buffer", []shift{sh("10:00", "14:00")}, busy("11:00", "12:15"), base, all, "[10:00 12:30 13:00]"},
		{"own buffer", []shift{sh("10:00", "14:00")}, busy("12:00", "13:00"),
			with(func(r *slotRules) { r.buffer = 15 * time.Minute }), all, "[10:00 10:30 13:00]"},
		{"buffer may run past the shift", []shift{sh("10:00", "11:00")}, nil,
			with(func(r *slotRules) { r.buffer = 30 * time.Minute }), all, "[10:00]"},
		{"earliest", []shift{sh("10:00", "14:00")}, nil, with(func(r *slotRules) { r.earliest = at("11:10") }), all, "[11:30 12:00 12:30 13:00]"},
		{"latest", []shift{sh("10:00", "14:00")}, nil, with(func(r *slotRules) { r.latest = at("11:00") }), all, "[10:00 10:30]"},
		{"window", []shift{sh("10:00", "14:00")}, nil, base, window{at("11:00"), at("12:00")}, "[11:00 11:30]"},
		{"two shifts", []shift{sh("08:00", "09:00"), sh("18:00", "19:30")}, nil, base, all, "[08:00 18:00 18:30]"},
		{"odd shift start keeps its own grid", []shift{sh("10:10", "12:00")}, nil, base, all, "[10:10 10:40]"},
	}
	for _, c := range cases {
		got := freeStarts(c.shifts, c.busy, c.rules, c.w)
		var s []string
		for _, g := range got {
			s = append(s, g.Format("15:04"))
		}
		if fmt.Sprint(s) != c.want && !(len(s) == 0 && c.want == "[]") {
			t.Errorf("%s: %v, want %s", c.name, s, c.want)
		}
	}
}

func TestParseShiftEnd(t *testing.T) {
	for in, want := range map[string]Clock{"18:00": 1080, "24:00": 1440, "+02:00": 1560, "+2:30": 1590, "26:00": 1560,
		" +00:00 ": 1440, "47:59": 2879} {
		if got, err := ParseShiftEnd(in); err != nil || got != want {
			t.Errorf("ParseShiftEnd(%q) = %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "+", "+24:01", "48:00", "25:60", "++01:00", "-01:00", "25:5", "+25:00"} {
		if got, err := ParseShiftEnd(in); err == nil {
			t.Errorf("ParseShiftEnd(%q) = %v, want an error", in, got)
		}
	}
	if got := Clock(1560).String(); got != "+02:00" {
		t.Errorf("26:00 prints as %q", got)
	}
}

func TestShiftInputInstants(t *testing.T) {
	loc, _ := time.LoadLocation("Europe/Moscow")
	day := Date{2026, 3, 3}
	cases := []struct {
		in      ShiftInput
		ok      bool
		wantDur time.Duration
	}{
		{ShiftInput{Start: 600, End: 1200}, true, 10 * time.Hour},
		{ShiftInput{Start: 1320, End: 1440 + 120}, true, 4 * time.Hour}, // overnight 22:00-+02:00
		{ShiftInput{Start: 600, End: 1440}, true, 14 * time.Hour},
		{ShiftInput{Start: 600, End: 1200, BreakStart: 780, BreakEnd: 840}, true, 10 * time.Hour},
		{ShiftInput{Start: 1320, End: 1440 + 120, BreakStart: 0, BreakEnd: 30}, true, 4 * time.Hour},      // break after midnight
		{ShiftInput{Start: 1320, End: 1440 + 120, BreakStart: 1470, BreakEnd: 1500}, true, 4 * time.Hour}, // written +00:30-+01:00
		{ShiftInput{Start: 600, End: 1200, BreakStart: 1140, BreakEnd: 1260}, false, 0},
		{ShiftInput{Start: 600, End: 1200, BreakStart: 500, BreakEnd: 560}, false, 0},
		{ShiftInput{Start: 1440, End: 100}, false, 0},
		{ShiftInput{Start: -1, End: 100}, false, 0},
		// Defect: an end before the start was read as the next day, so a
		// reversed 15:00-10:00 became a 19-hour night shift.
		{ShiftInput{Start: 900, End: 600}, false, 0},
		{ShiftInput{Start: 1320, End: 120}, false, 0},
		{ShiftInput{Start: 600, End: 600}, false, 0},
		{ShiftInput{Start: 360, End: 1440}, false, 0},       // 18 hours
		{ShiftInput{Start: 900, End: 1440 + 600}, false, 0}, // 19 hours: a mistake
		{ShiftInput{Start: 480, End: 1440 + 1}, false, 0},   // 16 h 1 min
		{ShiftInput{Start: 480, End: 1440}, true, 16 * time.Hour},
	}
	for i, c := range cases {
		sh, err := c.in.instants(day, loc)
		if (err == nil) != c.ok {
			t.Errorf("case %d: err %v, want ok=%v", i, err, c.ok)
			continue
		}
		if c.ok && sh.end.Sub(sh.start) != c.wantDur {
			t.Errorf("case %d: lasts %v, want %v", i, sh.end.Sub(sh.start), c.wantDur)
		}
	}
}

func TestNormalizePhone(t *testing.T) {
	type tc struct{ in, region, want string }
	cases := []tc{
		{"+7 999 123-45-67", "RU", "+79991234567"},
		{"8 (999) 123-45-67", "RU", "+79991234567"},
		{"79991234567", "RU", "+79991234567"},
		{"9991234567", "RU", "+79991234567"},
		{"+49 30 1234567", "RU", "+49301234567"},
		{"+1 (212) 555-0100", "RU", "+12125550100"},
		{"+7\u00a0999 1234567", "RU", "+79991234567"},
		// National formats follow the salon's country.
		{"07911 123456", "GB", "+447911123456"},
		{"(212) 555-0100", "US", "+12125550100"},
		{"030 1234567", "DE", "+49301234567"},
		{"+44 7911 123456", "DE", "+447911123456"},
		// A Russian national number is not a British one.
		{"8 (999) 123-45-67", "GB", ""},
		{"12345", "RU", ""},
		{"+0123456789", "RU", ""},
		{"+1234567890123456", "RU", ""},
		{"phone", "RU", ""},
		{"+7 999 123 45 67 ext 1", "RU", ""},
		{"++79991234567", "RU", ""},
		{"", "RU", ""},
		{"+7 999 123-45-67\x00", "RU", ""},
		// A premium-rate number is no client's (a number of another
		// country typed without its code, costing the salon's messages).
		{"0900 123 4567", "GB", ""},
		{"8 809 505 12 34", "RU", ""},
		{"+1 900 555 0123", "GB", ""},
	}
	for _, c := range cases {
		got, err := ClientPhone(c.in, c.region)
		if c.want == "" {
			if err == nil {
				t.Errorf("NormalizePhone(%q, %s) = %q, want an error", c.in, c.region, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("NormalizePhone(%q, %s) = %q, %v; want %q", c.in, c.region, got, err, c.want)
		}
	}
	// A premium-rate number stored is still found by it.
	if got, err := NormalizePhone("0900 123 4567", "GB"); err != nil || got != "+449001234567" {
		t.Errorf("NormalizePhone of a premium-rate number = %q, %v", got, err)
	}
	// A number Telegram shares is international even without its +.
	for in, want := range map[string]string{"447911123456": "+447911123456", "79991234567": "+79991234567", "+12125550100": "+12125550100"} {
		if got, err := InternationalPhone(in); err != nil || got != want {
			t.Errorf("InternationalPhone(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if CountryOf("Europe/London") != "GB" || CountryOf("Europe/Moscow") != "RU" || CountryOf("America/New_York") != "US" {
		t.Error("CountryOf does not know the zones")
	}
	// Old names, which systems and people still write: a salon made with
	// --tz US/Eastern is in the United States, not in Russia by default.
	for zone, want := range map[string]string{"US/Eastern": "US", "Europe/Kiev": "UA", "Asia/Calcutta": "IN", "Australia/NSW": "AU",
		"Canada/Pacific": "CA", "GB": "GB", "W-SU": "RU", "Etc/GMT-3": "", "UTC": ""} {
		if got := CountryOf(zone); got != want {
			t.Errorf("CountryOf(%q) = %q, want %q", zone, got, want)
		}
	}
	s := Salon{Slug: "east", Name: "East", Timezone: "US/Eastern"}
	if err := s.normalize(); err != nil || s.Country != "US" || s.Currency != "USD" || s.Locale != "en" {
		t.Errorf("a salon in US/Eastern: %s, %s, %s (%v)", s.Country, s.Currency, s.Locale, err)
	}
}

func TestCleanText(t *testing.T) {
	type tc struct {
		in, want string
		ok       bool
	}
	for _, c := range []tc{
		{"  Anna  ", "Anna", true},
		{"Anna\u00a0Maria", "Anna\u00a0Maria", true},
		{"Cafe\u0301", "Caf\u00e9", true}, // NFC
		{"Jos\u00e9 \U0001F469\u200D\U0001F4BB", "Jos\u00e9 \U0001F469\u200D\U0001F4BB", true},
		{"\u200b\u200b", "", false},      // zero-width spaces only
		{"\u3164", "", false},            // the Hangul filler "blank name"
		{"Anna\u202Eevil", "", false},    // bidi override
		{"Anna\u2066x\u2069", "", false}, // isolate
		{"Anna\u2028Maria", "", false},   // line separator
		{"Anna\x00", "", false},          // NUL
		{"Anna\nMaria", "", false},       // one line
		{"\xff\xfe", "", false},          // not UTF-8
		{strings.Repeat("я", 101), "", false},
		{strings.Repeat("я", 100), strings.Repeat("я", 100), true},
	} {
		fe := fieldErrors{}
		got := cleanText(fe, "name", c.in, MaxNameLen, oneLine, true)
		if ok := len(fe) == 0; ok != c.ok || (ok && got != c.want) {
			t.Errorf("cleanText(%q) = %q %v; want %q ok=%v", c.in, got, fe, c.want, c.ok)
		}
	}
	fe := fieldErrors{}
	if got := cleanText(fe, "notes", "line one\r\nline two", MaxNotesLen, multiLine, false); got != "line one\nline two" || len(fe) > 0 {
		t.Errorf("notes: %q %v", got, fe)
	}
	// Keys: visible ASCII only; absent is fine, spaces are not.
	for key, ok := range map[string]bool{"": true, "abc-123_XYZ:1": true, " ": false, "   ": false, "a b": false,
		"\xff": false, "ключ": false, strings.Repeat("k", 256): false, strings.Repeat("k", 255): true} {
		fe := fieldErrors{}
		checkKey(fe, "idempotency_key", key)
		if (len(fe) == 0) != ok {
			t.Errorf("checkKey(%q): %v, want ok=%v", key, fe, ok)
		}
	}
	if got := CleanName(strings.Repeat("Ж", 150) + "\u202E"); len([]rune(got)) != MaxNameLen {
		t.Errorf("CleanName cuts to %d runes, got %d", MaxNameLen, len([]rune(got)))
	}
	if got := CleanName("\u200b\u3164"); got != "" {
		t.Errorf("CleanName of invisibles = %q", got)
	}
}

func TestParseMoney(t *testing.T) {
	cases := map[string]Money{"1500": 150000, "1500.5": 150050, "1500,50": 150050, "1 500": 150000, "0": 0, "0.01": 1,
		// As the panel shows amounts, and as people type them.
		"2\u00a0500\u00a0₽": 250000, "2 500 ₽": 250000, "2 500,00": 250000, "2500 руб.": 250000, "$2,500": 250000,
		"€1,234,567.5": 123456750, "1.234": 123400, "1.500,50": 150050, "1,5": 150,
		"£85.50": 8550, "85.50 GBP": 8550, "2 500 ₸": 250000}
	for in, want := range cases {
		if got, err := ParseMoney(in); err != nil || got != want {
			t.Errorf("ParseMoney(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-5", "abc", "1.", ".5", "1e3", "99999999999", "₽", "1,2345", "1.234.567,891", "0.001", "0,001", "01.500", "1.50.000"} {
		if got, err := ParseMoney(in); err == nil {
			t.Errorf("ParseMoney(%q) = %v, want an error", in, got)
		}
	}
	for _, m := range []Money{0, 1, 150000, 150050, 99, 123456789} {
		if back, err := ParseMoney(m.String()); err != nil || back != m {
			t.Errorf("round trip %d: %q -> %v %v", m, m.String(), back, err)
		}
		// What a page shows is read back as the same amount.
		for _, cur := range []string{"RUB", "USD", "EUR"} {
			for _, lang := range []string{"ru", "en"} {
				if back, err := ParseMoney(m.Format(cur, lang)); err != nil || back != m {
					t.Errorf("round trip %d: %q -> %v %v", m, m.Format(cur, lang), back, err)
				}
			}
		}
	}
}

// TestParseMoneyIn: a salon reads its own currency's sign or code beside
// an amount, and refuses another currency's (a "$25" typed in a salon of
// rupees is not 25 rupees); what its pages show reads back.
func TestParseMoneyIn(t *testing.T) {
	for _, c := range []struct {
		in, currency string
		want         Money
	}{
		{"₹25", "INR", 2500}, {"25 INR", "INR", 2500}, {"Rs. 2,000", "INR", 200000}, {"25.50", "INR", 2550},
		{"$25", "USD", 2500}, {"$25", "CAD", 2500}, {"CA$25", "CAD", 2500}, {"A$ 1,500.5", "AUD", 150050},
		{"2 500 руб.", "RUB", 250000}, {"2500р.", "RUB", 250000}, {"£85.50", "GBP", 8550}, {"85.50 gbp", "GBP", 8550},
		{"100 kr", "SEK", 10000}, {"25 kr.", "DKK", 2500}, {"2500 AED", "AED", 250000}, {"$25", "ARS", 2500}, {"kr 25", "ISK", 2500},
		{"Rs 500", "PKR", 50000}, {"25 руб", "BYN", 2500},
	} {
		if got, err := ParseMoneyIn(c.in, c.currency); err != nil || got != c.want {
			t.Errorf("ParseMoneyIn(%q, %s) = %v, %v; want %v", c.in, c.currency, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, currency, says string }{
		{"$25", "INR", `"$25" is in USD, and this salon's prices are in INR`},
		{"$25", "GBP", "USD"}, {"€25", "USD", "EUR"}, {"25 ₽", "EUR", "RUB"}, {"R$25", "USD", "BRL"}, {"25 USD", "AUD", "USD"},
		{"25 abc", "INR", "not an amount"}, {"₹", "INR", "empty amount"}, {"25 AED", "INR", "is in AED"},
	} {
		_, err := ParseMoneyIn(c.in, c.currency)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParseMoneyIn(%q, %s) = %v, want an error saying %q", c.in, c.currency, err, c.says)
		}
	}
	for cur := range currencies {
		for _, lang := range []string{"ru", "en"} {
			for _, m := range []Money{0, 1, 150050, 123456789} {
				if back, err := ParseMoneyIn(m.Format(cur, lang), cur); err != nil || back != m {
					t.Errorf("%s %s: %q -> %v %v", cur, lang, m.Format(cur, lang), back, err)
				}
			}
		}
	}
	if m, err := ParseMoney("25 XYZ"); err == nil {
		t.Errorf("ParseMoney(25 XYZ) = %v, want an error: no currency is XYZ", m)
	}
	if got := Money(250050).Format("INR", "en"); got != "₹2,500.50" {
		t.Errorf("INR in English: %q", got)
	}
}

func FuzzParseMoney(f *testing.F) {
	for _, s := range []string{"1500", "1500.50", "1 500,5", "-1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMoney(s)
		if err != nil {
			return
		}
		if m < 0 {
			t.Fatalf("ParseMoney(%q) = %d, negative", s, m)
		}
		if back, err := ParseMoney(m.String()); err != nil || back != m {
			t.Fatalf("ParseMoney(%q) = %d, which does not round-trip: %q -> %v %v", s, m, m.String(), back, err)
		}
	})
}

func FuzzNormalizePhone(f *testing.F) {
	for _, s := range []string{"+7 999 123-45-67", "8 (999) 123-45-67", "9991234567", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := NormalizePhone(s, "RU")
		if err != nil {
			return
		}
		again, err := NormalizePhone(p, "GB")
		if err != nil || again != p {
			t.Fatalf("NormalizePhone(%q) = %q, not a fixed point: %q %v", s, p, again, err)
		}
		// E.164: a + and at most 15 digits; the shortest numbers in use
		// have 7 (Niue's +683 4002, New Zealand's +64 87000).
		if len(p) < 8 || len(p) > 16 || p[0] != '+' || strings.Trim(p[1:], "0123456789") != "" {
			t.Fatalf("NormalizePhone(%q) = %q, not E.164", s, p)
		}
	})
}

func TestParseClock(t *testing.T) {
	for in, want := range map[string]Clock{"9:30": 570, "09:30": 570, "00:00": 0, "24:00": 1440, "23:59": 1439} {
		if got, err := ParseClock(in); err != nil || got != want {
			t.Errorf("ParseClock(%q) = %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "9", "9:3", "24:01", "25:00", "9:60", "a:bc", "-1:00", "123:00"} {
		if _, err := ParseClock(in); err == nil {
			t.Errorf("ParseClock(%q) accepted", in)
		}
	}
}

func TestMoneyFormat(t *testing.T) {
	cases := []struct {
		m      Money
		cur, l string
		want   string
	}{
		{250000, "RUB", "ru", "2\u00a0500\u00a0₽"},
		{150050, "USD", "en", "$1,500.50"},
		{99, "EUR", "en", "€0.99"},
		{123456789, "KZT", "ru", "1\u00a0234\u00a0567,89\u00a0₸"},
		{8550, "GBP", "en", "£85.50"},
		{150000, "CHF", "en", "1,500\u00a0CHF"}, // (no sign of its own: the code, kept on its line)
		{90000, "RUB", "ru", "900\u00a0₽"},
	}
	for _, c := range cases {
		if got := c.m.Format(c.cur, c.l); got != c.want {
			t.Errorf("%d %s %s = %q, want %q", c.m, c.cur, c.l, got, c.want)
		}
	}
}

func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"Anna", " \u200bAnna\u202e", "a\x00b", "Ж\u2028", "\xff", "x\r\ny"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, multi bool) {
		kind := oneLine
		if multi {
			kind = multiLine
		}
		fe := fieldErrors{}
		got := cleanText(fe, "f", s, 50, kind, true)
		if len(fe) > 0 {
			return
		}
		if !utf8.ValidString(got) || utf8.RuneCountInString(got) > 50 || got == "" || !strings.ContainsFunc(got, visible) {
			t.Fatalf("cleanText(%q) = %q", s, got)
		}
		if reason := badRunes(got, kind); reason != "" {
			t.Fatalf("cleanText(%q) = %q, which has %s", s, got, reason)
		}
		if again := cleanText(fieldErrors{}, "f", got, 50, kind, true); again != got {
			t.Fatalf("cleanText(%q) = %q, not a fixed point: %q", s, got, again)
		}
	})
}

func TestPhoneDigits(t *testing.T) {
	for _, c := range []struct{ q, country, want string }{
		{"8 (915) 123-45-67", "RU", "79151234567"}, // whole, nationally
		{"+7 915 123 45 67", "RU", "79151234567"},
		{"8 915 123", "RU", "7915123"}, // in part: the trunk 8 is the code 7
		{"915 12", "RU", "91512"},
		{"+8 915", "RU", "8915"}, // written as international: as typed
		{"07911 123", "GB", "447911123"},
		{"12", "RU", ""},
		{"Мария", "RU", ""},
	} {
		if got := phoneDigits(c.q, c.country); got != c.want {
			t.Errorf("phoneDigits(%q, %s) = %q, want %q", c.q, c.country, got, c.want)
		}
	}
}
