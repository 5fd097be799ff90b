package booking_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

// Shifts are wall-clock times in the salon's zone, stored as instants: on
// DST change days they land where the clocks on the salon's wall say.
func TestShiftsOnDSTDays(t *testing.T) {
	t.Parallel()
	cases := []struct {
		zone       string
		day        string
		start, end string
		wantStart  string // UTC
		wantEnd    string
	}{
		{"America/New_York", "2026-03-07", "13:00", "18:00", "2026-03-07 18:00", "2026-03-07 23:00"}, // EST
		{"America/New_York", "2026-03-08", "13:00", "18:00", "2026-03-08 17:00", "2026-03-08 22:00"}, // spring forward: EDT
		{"America/New_York", "2026-03-08", "00:00", "06:00", "2026-03-08 05:00", "2026-03-08 10:00"}, // 5 real hours
		{"America/New_York", "2026-11-01", "13:00", "18:00", "2026-11-01 18:00", "2026-11-01 23:00"}, // fall back: EST
		{"America/New_York", "2026-11-01", "00:00", "06:00", "2026-11-01 04:00", "2026-11-01 11:00"}, // 7 real hours
		{"Europe/Berlin", "2026-03-28", "09:00", "17:00", "2026-03-28 08:00", "2026-03-28 16:00"},    // CET
		{"Europe/Berlin", "2026-03-29", "09:00", "17:00", "2026-03-29 07:00", "2026-03-29 15:00"},    // CEST
		{"Europe/Berlin", "2026-03-29", "01:00", "04:00", "2026-03-29 00:00", "2026-03-29 02:00"},    // 2 real hours
		{"Europe/Berlin", "2026-03-29", "02:30", "06:00", "2026-03-29 01:30", "2026-03-29 04:00"},    // 02:30 skipped: 03:30
		{"America/New_York", "2026-03-08", "02:30", "08:00", "2026-03-08 07:30", "2026-03-08 12:00"}, // 02:30 skipped: 03:30 EDT
		{"Europe/Berlin", "2026-10-25", "09:00", "17:00", "2026-10-25 08:00", "2026-10-25 16:00"},    // CET again
		{"Europe/Berlin", "2026-10-25", "22:00", "+02:00", "2026-10-25 21:00", "2026-10-26 01:00"},   // overnight
		{"Europe/Moscow", "2026-03-29", "10:00", "20:00", "2026-03-29 07:00", "2026-03-29 17:00"},    // no DST
		{"Europe/Moscow", "2026-10-25", "10:00", "20:00", "2026-10-25 07:00", "2026-10-25 17:00"},
	}
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salons := map[string]*booking.Salon{}
	for i, c := range cases {
		s := salons[c.zone]
		if s == nil {
			s = e.Salon(t, booking.Salon{Timezone: c.zone})
			salons[c.zone] = s
		}
		sv := e.Service(t, s, booking.SalonService{})
		m := e.Master(t, s, sv)
		day, _ := booking.ParseDate(c.day)
		e.Shift(t, s, m, day, 1, c.start, c.end)
		shifts, err := e.Svc.Shifts(ctx, s.ID, m.ID, day, 1)
		if err != nil || len(shifts) != 1 {
			t.Fatalf("case %d: shifts %v %v", i, shifts, err)
		}
		if got, want := shifts[0].Start.UTC(), utc(c.wantStart); !got.Equal(want) {
			t.Errorf("case %d %s %s %s: start %s UTC, want %s", i, c.zone, c.day, c.start, got.Format(time.DateTime), want.Format(time.DateTime))
		}
		if got, want := shifts[0].End.UTC(), utc(c.wantEnd); !got.Equal(want) {
			t.Errorf("case %d %s %s %s: end %s UTC, want %s", i, c.zone, c.day, c.end, got.Format(time.DateTime), want.Format(time.DateTime))
		}
	}
}

// TestAShiftTheClocksSkipWhollySaysSo: a shift wholly inside the hour the
// clocks skip is refused saying why, not only that it is empty.
func TestAShiftTheClocksSkipWhollySaysSo(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	s := e.Salon(t, booking.Salon{Timezone: "Europe/London", Locale: "en"})
	m := e.Master(t, s, e.Service(t, s, booking.SalonService{}))
	day, _ := booking.ParseDate("2027-03-28")
	start, _ := booking.ParseClock("01:30")
	end, _ := booking.ParseShiftEnd("02:00")
	err := e.Svc.SetShifts(bookingtest.System(), s.ID, m.ID, day, []booking.ShiftInput{{Start: start, End: end}})
	if err == nil || !strings.Contains(err.Error(), "shift 01:30-02:00 is empty: the clocks skip that time that day") {
		t.Fatalf("a shift the clocks skip: %v", err)
	}
}

// Slots on DST days: starts step through real time, the skipped hour offers
// nothing, the repeated hour offers both of its instants, and a day's slots
// are the ones whose start falls on that local date.
func TestSlotsOnDSTDays(t *testing.T) {
	t.Parallel()
	cases := []struct {
		zone       string
		day        string
		start, end string
		want       []string // local wall times with offsets
	}{
		{"Europe/Berlin", "2026-03-29", "00:00", "05:00",
			[]string{"00:00+01", "01:00+01", "03:00+02", "04:00+02"}},
		{"Europe/Berlin", "2026-10-25", "00:00", "05:00",
			[]string{"00:00+02", "01:00+02", "02:00+02", "02:00+01", "03:00+01", "04:00+01"}},
		{"America/New_York", "2026-03-08", "00:00", "05:00",
			[]string{"00:00-05", "01:00-05", "03:00-04", "04:00-04"}},
		{"America/New_York", "2026-11-01", "00:00", "04:00",
			[]string{"00:00-04", "01:00-04", "01:00-05", "02:00-05", "03:00-05"}},
		{"America/New_York", "2026-03-08", "13:00", "16:00",
			[]string{"13:00-04", "14:00-04", "15:00-04"}},
		{"Europe/Moscow", "2026-03-29", "10:00", "13:00",
			[]string{"10:00+03", "11:00+03", "12:00+03"}},
	}
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	for i, c := range cases {
		s := e.Salon(t, booking.Salon{Timezone: c.zone, SlotStepMin: 60})
		sv := e.Service(t, s, booking.SalonService{DurationMin: 60})
		m := e.Master(t, s, sv)
		day, _ := booking.ParseDate(c.day)
		e.Clock.Set(day.AddDays(-3).Start(s.Location()))
		e.Shift(t, s, m, day, 1, c.start, c.end)
		// A shift the day before that ends after midnight must not leak its
		// starts into this day's answer.
		e.Shift(t, s, m, day.AddDays(-1), 1, "20:00", "23:00")
		slots, err := e.Svc.Slots(ctx, booking.SlotQuery{SalonID: s.ID, ServiceID: sv.ID, From: day})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, sl := range slots {
			got = append(got, sl.Start.In(s.Location()).Format("15:04-07"))
			if sl.End.Sub(sl.Start) != time.Hour {
				t.Errorf("case %d: slot %v lasts %v", i, sl, sl.End.Sub(sl.Start))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("case %d %s %s: slots %v, want %v", i, c.zone, c.day, got, c.want)
		}
		// Every offered start books (the constraint agrees with the clock).
		for j, sl := range slots {
			_, err := e.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: s.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: sl.Start,
				Client: booking.ClientInput{Name: "C", Phone: bookingtest.Phone()}})
			if err != nil {
				t.Errorf("case %d: booking offered slot %d %v: %v", i, j, sl.Start, err)
			}
		}
	}
}

// The date of a slots query is the salon's, not the server's: for a salon
// far east of UTC, the day starts the previous evening in UTC.
func TestSlotsDateIsSalonLocal(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	s := e.Salon(t, booking.Salon{Timezone: "Asia/Vladivostok", SlotStepMin: 60}) // UTC+10
	sv := e.Service(t, s, booking.SalonService{})
	m := e.Master(t, s, sv)
	day := booking.Date{Year: 2026, Month: 3, Day: 5}
	e.Shift(t, s, m, day, 1, "08:00", "11:00")
	slots, err := e.Svc.Slots(web(), booking.SlotQuery{SalonID: s.ID, ServiceID: sv.ID, From: day})
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) != 3 || !slots[0].Start.Equal(utc("2026-03-04 22:00")) {
		t.Fatalf("slots %v, want 3 starting 2026-03-04 22:00 UTC", slots)
	}
}

// A wall-clock time is the instant the salon's clock shows it: one the
// clocks skip is moved forward by the gap (and AtClock refuses it), one
// they show twice is its first.
func TestDateAtOnDaysTheClocksMove(t *testing.T) {
	t.Parallel()
	cases := []struct {
		zone, day, clock string
		want             string // UTC
		exact            bool
	}{
		{"America/New_York", "2026-03-08", "01:30", "2026-03-08 06:30", true},
		{"America/New_York", "2026-03-08", "02:00", "2026-03-08 07:00", false}, // 03:00 EDT
		{"America/New_York", "2026-03-08", "02:30", "2026-03-08 07:30", false}, // 03:30 EDT, not 01:30 EST
		{"America/New_York", "2026-03-08", "03:00", "2026-03-08 07:00", true},
		{"America/New_York", "2026-11-01", "01:30", "2026-11-01 05:30", true}, // EDT, the first
		{"America/New_York", "2026-11-01", "02:00", "2026-11-01 07:00", true},
		{"Europe/Berlin", "2026-10-25", "02:30", "2026-10-25 00:30", true},        // CEST, the first (east of UTC too)
		{"Australia/Lord_Howe", "2026-04-05", "01:45", "2026-04-04 14:45", true},  // a 30-minute repeat: the first
		{"Pacific/Apia", "2011-12-30", "12:00", "2011-12-30 22:00", false},        // a day skipped: forward, not back
		{"America/Santiago", "2026-09-06", "00:00", "2026-09-06 04:00", false},    // midnight skipped: 01:00
		{"Europe/Berlin", "2026-03-29", "02:15", "2026-03-29 01:15", false},       // 03:15 CEST
		{"Australia/Lord_Howe", "2026-10-04", "02:15", "2026-10-03 15:45", false}, // a 30-minute gap: 02:45
		{"Europe/Moscow", "2026-03-29", "02:30", "2026-03-28 23:30", true},
	}
	for _, c := range cases {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := booking.ParseDate(c.day)
		clock, _ := booking.ParseClock(c.clock)
		got, exact := d.AtExact(loc, int(clock))
		if !got.Equal(utc(c.want)) || exact != c.exact || !d.At(loc, int(clock)).Equal(got) {
			t.Errorf("%s %s %s: %s UTC (exact %v), want %s (%v)", c.zone, c.day, c.clock, got.UTC().Format(time.DateTime), exact, c.want, c.exact)
		}
		if _, err := d.AtClock(loc, clock); (err == nil) != c.exact {
			t.Errorf("%s %s %s: AtClock says %v", c.zone, c.day, c.clock, err)
		}
	}
}

// A new salon's currency and language follow its time zone's country
// unless given (a salon in New York once priced in roubles, in Russian).
func TestANewSalonTakesItsCountrysCurrencyAndLanguage(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	for _, c := range []struct {
		in                      booking.Salon
		country, currency, lang string
	}{
		{booking.Salon{Timezone: "Europe/Moscow"}, "RU", "RUB", "ru"},
		{booking.Salon{Timezone: "Asia/Yekaterinburg"}, "RU", "RUB", "ru"},
		{booking.Salon{Timezone: "Asia/Almaty"}, "KZ", "KZT", "ru"},
		{booking.Salon{Timezone: "America/New_York"}, "US", "USD", "en"},
		{booking.Salon{Timezone: "Europe/Berlin"}, "DE", "EUR", "en"},
		{booking.Salon{Timezone: "Europe/Kyiv"}, "UA", "UAH", "en"},
		{booking.Salon{Timezone: "Asia/Kolkata"}, "IN", "INR", "en"},
		{booking.Salon{Timezone: "Europe/Berlin", Locale: "ru", Currency: "RUB"}, "DE", "RUB", "ru"},
		{booking.Salon{Timezone: "Asia/Dubai", Country: "RU"}, "RU", "RUB", "ru"},
	} {
		s := e.Salon(t, c.in)
		if s.Country != c.country || s.Currency != c.currency || s.Locale != c.lang {
			t.Errorf("%s (%q %q %q): %s %s %s, want %s %s %s", c.in.Timezone, c.in.Country, c.in.Currency, c.in.Locale,
				s.Country, s.Currency, s.Locale, c.country, c.currency, c.lang)
		}
	}
}

// A day whose midnight the clocks skip starts at the first instant after
// it (not at 23:00 the day before).
func TestADayStartsWhenItsClockDoes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ zone, day, want string }{
		{"Asia/Beirut", "2026-03-29", "2026-03-28 22:00"},      // 01:00 EEST
		{"America/Santiago", "2026-09-06", "2026-09-06 04:00"}, // 01:00 -03
		{"America/Havana", "2026-03-08", "2026-03-08 05:00"},   // 01:00 CDT
		{"Europe/Moscow", "2026-03-08", "2026-03-07 21:00"},
	} {
		loc, _ := time.LoadLocation(c.zone)
		d, _ := booking.ParseDate(c.day)
		if got := d.Start(loc); !got.Equal(utc(c.want)) {
			t.Errorf("%s %s starts %s (%s UTC), want %s UTC", c.zone, c.day, got.Format("2006-01-02 15:04 MST"), got.UTC().Format(time.DateTime), c.want)
		}
	}
}

// A break typed over the hour the clocks skip is refused naming its end,
// not written as a break of no length (the database's check refused it
// with a 500).
func TestABreakTheClocksSkipIsRefused(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	s := e.Salon(t, booking.Salon{Timezone: "America/New_York", Locale: "en"})
	sv := e.Service(t, s, booking.SalonService{})
	m := e.Master(t, s, sv)
	err := e.Svc.SetShifts(bookingtest.System(), s.ID, m.ID, booking.Date{Year: 2026, Month: 3, Day: 8},
		[]booking.ShiftInput{{Start: 0, End: 6 * 60, BreakStart: 2 * 60, BreakEnd: 3 * 60}})
	var ve *booking.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Fields["break_start"].String(), "there is no 02:00 on 8 Mar 2026") {
		t.Errorf("a break 02:00-03:00 on 8 Mar 2026 in New York: %v", err)
	}
	// So is one whose end the clocks skip (it once moved to 03:30 EDT, a
	// half hour of work the owner never took off).
	err = e.Svc.SetShifts(bookingtest.System(), s.ID, m.ID, booking.Date{Year: 2026, Month: 3, Day: 8},
		[]booking.ShiftInput{{Start: 60, End: 8 * 60, BreakStart: 90, BreakEnd: 150}})
	if !errors.As(err, &ve) || !strings.Contains(ve.Fields["break_end"].String(), "there is no 02:30 on 8 Mar 2026") {
		t.Errorf("a break 01:30-02:30 on 8 Mar 2026 in New York: %v", err)
	}
}

// A refused break names the time that is wrong: the end of one that ends
// before it starts or after the shift, the start of one before the shift.
func TestARefusedBreakNamesItsTime(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	s := e.Salon(t, booking.Salon{Locale: "en"})
	sv := e.Service(t, s, booking.SalonService{})
	m := e.Master(t, s, sv)
	day := s.Today(e.Clock.Now()).AddDays(3)
	clock := func(hhmm string) booking.Clock { c, _ := booking.ParseShiftEnd(hhmm); return c }
	for _, c := range []struct {
		start, end, bs, be string
		field, why         string
	}{
		{"10:00", "18:00", "14:00", "13:00", "break_end", "ends before it starts"},
		{"10:00", "18:00", "14:00", "19:00", "break_end", "is outside the shift"},
		{"10:00", "18:00", "08:00", "09:00", "break_start", "is outside the shift"},
		{"20:00", "+04:00", "03:00", "05:00", "break_end", "is outside the shift"},
	} {
		err := e.Svc.SetShifts(bookingtest.System(), s.ID, m.ID, day, []booking.ShiftInput{{Start: clock(c.start), End: clock(c.end),
			BreakStart: clock(c.bs), BreakEnd: clock(c.be)}})
		var ve *booking.ValidationError
		if !errors.As(err, &ve) || !strings.Contains(ve.Fields[c.field].String(), c.why) {
			t.Errorf("%s-%s, break %s-%s: %v, want %s: %s", c.start, c.end, c.bs, c.be, err, c.field, c.why)
		}
	}
	// A night shift's break across midnight is a break.
	if err := e.Svc.SetShifts(bookingtest.System(), s.ID, m.ID, day, []booking.ShiftInput{{Start: clock("20:00"), End: clock("+04:00"),
		BreakStart: clock("23:30"), BreakEnd: clock("00:30")}}); err != nil {
		t.Errorf("a night shift with a break 23:30-00:30: %v", err)
	}
}
