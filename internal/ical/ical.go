// Package ical writes bookings as iCalendar (RFC 5545): a master's feed,
// which calendar apps subscribe to, and one booking for a client's
// "add to calendar" (github.com/arran4/golang-ical does the format).
package ical

import (
	"fmt"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"

	"salon/booking"
)

// MasterFeed is the master's bookings as a calendar.
func MasterFeed(f *booking.Feed, now time.Time) string {
	cal := newCalendar(f.Salon.Name + " — " + f.Master.Name)
	cal.SetRefreshInterval("PT15M")
	cal.SetXPublishedTTL("PT15M")
	for _, l := range f.Bookings {
		who := l.ContactName
		if who == "" {
			who = l.ClientName
		}
		e := event(cal, &l.Booking, &f.Salon, now)
		if l.Status == booking.StatusCancelled {
			e.SetSummary(l.ServiceName) // off: nothing of its client
			continue
		}
		e.SetSummary(l.ServiceName + " — " + who)
		e.SetDescription(strings.TrimSpace(fmt.Sprintf("%s %s\n%s", who, l.ClientPhone, l.Notes)))
	}
	return cal.Serialize(ics.WithNewLineWindows)
}

// Booking is one booking for its client's calendar: where the salon is,
// its phone, a link to its booking page (base is the server's public URL;
// never the manage link, whose token would live on in calendar servers),
// and a reminder two hours before. A visit of several services is one
// event, from its first service to the end of its last.
func Booking(v *booking.View, base string, now time.Time) string {
	cal := newCalendar(v.Salon.Name)
	e := event(cal, &v.Booking, &v.Salon, now)
	if len(v.Segments) > 1 {
		e.SetStartAt(v.Segments[0].StartsAt)
		e.SetEndAt(booking.VisitEnd(&v.Booking))
	}
	e.SetSummary(v.ServiceName + " — " + v.Salon.Name)
	desc := v.MasterName
	if v.Salon.Phone != "" {
		desc += "\n" + booking.DisplayPhone(v.Salon.Phone)
	}
	e.SetDescription(desc)
	if base != "" {
		e.SetURL(strings.TrimRight(base, "/") + "/w/" + v.Salon.Slug)
	}
	if v.Status == booking.StatusConfirmed || v.Status == booking.StatusPending {
		a := e.AddAlarm()
		a.SetAction(ics.ActionDisplay)
		a.SetTrigger("-PT2H")
		a.SetProperty(ics.ComponentPropertyDescription, v.ServiceName+" — "+v.Salon.Name)
	}
	return cal.Serialize(ics.WithNewLineWindows)
}

func newCalendar(name string) *ics.Calendar {
	cal := ics.NewCalendar()
	cal.SetMethod(ics.MethodPublish)
	cal.SetProductId("-//salon//booking//EN")
	cal.SetXWRCalName(name)
	return cal
}

func event(cal *ics.Calendar, b *booking.Booking, s *booking.Salon, now time.Time) *ics.VEvent {
	e := cal.AddEvent(fmt.Sprintf("booking-%d@%s", b.ID, s.Slug))
	e.SetDtStampTime(now)
	e.SetStartAt(b.StartsAt)
	e.SetEndAt(b.EndsAt())
	e.SetLastModifiedAt(b.UpdatedAt)
	switch b.Status {
	case booking.StatusCancelled:
		e.SetStatus(ics.ObjectStatusCancelled)
	case booking.StatusPending:
		e.SetStatus(ics.ObjectStatusTentative)
	default:
		e.SetStatus(ics.ObjectStatusConfirmed)
	}
	where := s.Name
	if s.Address != "" {
		where += ", " + s.Address
	}
	e.SetLocation(where)
	return e
}
