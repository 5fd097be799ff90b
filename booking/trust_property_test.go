package booking_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"salon/booking"
	"salon/booking/bookingtest"
)

// The trust model, tested as a property: chat users (typing phones, some
// proving theirs), web visitors (holding the tokens of what they booked)
// and panel staff (of this salon and of another) act at random on bookings
// made with a few shared phones. A model says who holds a credential for
// each booking; nobody ever reads, lists, cancels or moves a booking they
// hold none for, and everyone may act on the ones they hold.

// trustModel is who holds a credential for what.
type trustModel struct {
	bookings map[int64]*modelTrust
	linked   map[string]string // chat user -> phone they proved
}

type modelTrust struct {
	phone  string
	origin string // the chat user who made it, or ""
	token  string // held by the visitor who made it
	active bool
}

// may reports whether caller (a chat user, "token:<id>", "staff" or
// "foreign") holds a credential for booking id.
func (m *trustModel) may(who string, tokenOf int64, id int64) bool {
	b := m.bookings[id]
	switch who {
	case "staff":
		return true
	case "foreign":
		return false
	case "visitor":
		return tokenOf == id && b.token != ""
	}
	return b.origin == who || m.linked[who] == b.phone
}

func (m *trustModel) list(who string) []int64 {
	var out []int64
	for id, b := range m.bookings {
		if b.active && m.may(who, 0, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func TestNobodyActsWithoutACredential(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	other := f.Salon(t, booking.Salon{})
	staff := f.admin(1)
	foreign := booking.ByStaff(booking.User{ID: 2, SalonID: other.ID, Role: booking.RoleOwner})
	phones := []string{"+79990001001", "+79990001002", "+79990001003"}
	users := []string{"101", "102", "103", "104"}
	slots := []string{"10:00", "11:00", "12:00", "13:00", "14:00", "15:00", "16:00", "17:00", "18:00"}

	rapid.Check(t, func(rt *rapid.T) {
		if _, err := f.Pool.Exec(ctx, `TRUNCATE booking_events, booking_reminders, bookings, client_identities, clients CASCADE`); err != nil {
			rt.Fatal(err)
		}
		m := &trustModel{bookings: map[int64]*modelTrust{}, linked: map[string]string{}}
		tokens := map[int64]string{}
		callerOf := func(who string, id int64) booking.Caller {
			switch who {
			case "staff":
				return staff
			case "foreign":
				return foreign
			case "visitor":
				return booking.ByToken(tokens[id])
			}
			return booking.ByIdentity(booking.Identity{Channel: booking.ChannelTelegram, ExternalID: who})
		}
		whoGen := rapid.SampledFrom(append([]string{"staff", "foreign", "visitor"}, users...))
		for step := range rapid.IntRange(5, 25).Draw(rt, "steps") {
			master := f.masters[rapid.IntRange(0, len(f.masters)-1).Draw(rt, "master")]
			at := f.at(rapid.SampledFrom(slots).Draw(rt, "at"))
			phone := rapid.SampledFrom(phones).Draw(rt, "phone")
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0: // a visitor books on the web
				r := booking.BookRequest{SalonID: f.salon.ID, ServiceID: f.svc.ID, MasterID: master.ID, StartsAt: at,
					Client: booking.ClientInput{Name: "Web", Phone: phone}}
				b, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), r)
				if errors.Is(err, booking.ErrSlotTaken) {
					continue
				}
				if err != nil {
					rt.Fatalf("step %d: web booking: %v", step, err)
				}
				tokens[b.ID] = b.ManageToken
				m.bookings[b.ID] = &modelTrust{phone: phone, token: b.ManageToken, active: true}
			case 1: // a chat user books, typing a phone or proving theirs
				user := rapid.SampledFrom(users).Draw(rt, "user")
				proven := rapid.Bool().Draw(rt, "proven")
				r := booking.BookRequest{SalonID: f.salon.ID, ServiceID: f.svc.ID, MasterID: master.ID, StartsAt: at,
					Client: booking.ClientInput{Name: "Chat " + user, Phone: phone, Verified: proven}}
				b, err := f.Svc.Book(booking.As(ctx, booking.ByIdentity(booking.Identity{Channel: booking.ChannelTelegram, ExternalID: user})), r)
				if errors.Is(err, booking.ErrSlotTaken) {
					continue
				}
				if err != nil {
					rt.Fatalf("step %d: chat booking: %v", step, err)
				}
				m.bookings[b.ID] = &modelTrust{phone: phone, origin: user, active: true}
				if proven {
					m.linked[user] = phone
				}
			default: // someone reads, lists, cancels or moves a booking
				if len(m.bookings) == 0 {
					continue
				}
				var all []int64
				for id := range m.bookings {
					all = append(all, id)
				}
				slices.Sort(all)
				id := rapid.SampledFrom(all).Draw(rt, "booking")
				who := whoGen.Draw(rt, "who")
				tokenOf := int64(0)
				if who == "visitor" {
					tokenOf = rapid.SampledFrom(all).Draw(rt, "token of") // a visitor holding some token
				}
				c := callerOf(who, tokenOf)
				allowed := m.may(who, tokenOf, id)
				var err error
				switch rapid.IntRange(0, 2).Draw(rt, "action") {
				case 0:
					_, err = f.Svc.BookingView(booking.As(ctx, c), 0, id)
				case 1:
					_, err = f.Svc.Cancel(booking.As(ctx, c), booking.CancelRequest{BookingID: id})
					if err == nil {
						m.bookings[id].active = false
					}
				case 2:
					_, err = f.Svc.Reschedule(booking.As(ctx, c), booking.RescheduleRequest{BookingID: id, StartsAt: at, MasterID: master.ID})
				}
				switch {
				case !allowed && !errors.Is(err, booking.ErrNotFound):
					rt.Fatalf("step %d: %s acted on booking %d without a credential: %v", step, who, id, err)
				case allowed && err != nil && !errors.Is(err, booking.ErrSlotTaken) && !errors.Is(err, booking.ErrConflict):
					rt.Fatalf("step %d: %s may act on booking %d but got %v", step, who, id, err)
				}
			}
			// Every chat user's list is exactly what they hold a credential for.
			for _, u := range users {
				got, err := f.Svc.UpcomingBookings(booking.As(ctx, booking.ByIdentity(booking.Identity{Channel: booking.ChannelTelegram, ExternalID: u})), f.Clock.Now())
				if err != nil {
					rt.Fatal(err)
				}
				have := ids(got)
				slices.Sort(have)
				if want := m.list(u); !slices.Equal(have, want) {
					rt.Fatalf("step %d: %s lists %v, holds credentials for %v", step, u, have, want)
				}
			}
		}
	})
}

// The same, at once: chat users, visitors and staff released together from
// a barrier act on the same bookings; every change the database records
// was made by someone who held a credential, and every refusal of someone
// without one was "not found".
func TestRaceNobodyActsWithoutACredential(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	const phone = "+79990002001"
	owner := booking.Identity{Channel: booking.ChannelTelegram, ExternalID: "201"}
	typist := booking.Identity{Channel: booking.ChannelTelegram, ExternalID: "202"}
	var web []*booking.Booking
	for i, m := range f.masters {
		r := f.req(m, "10:00")
		r.Client.Phone = phone
		web = append(web, f.mustBook(t, r))
		r = f.req(m, "12:00")
		r.Client = booking.ClientInput{Name: "T", Phone: phone}
		if i == 0 {
			web = append(web, f.mustBookAs(t, booking.ByIdentity(typist), r)) // the typist's own
		}
	}
	r := f.req(f.masters[0], "14:00")
	r.Client = booking.ClientInput{Name: "O", Phone: phone, Verified: true}
	web = append(web, f.mustBookAs(t, booking.ByIdentity(owner), r))
	// Who holds what: the owner proved the phone (every booking); the
	// typist only made web[1]; each token opens its own booking.
	holds := func(c string, b *booking.Booking) bool {
		switch c {
		case "owner", "staff":
			return true
		case "typist":
			return b.Origin == typist
		case "foreign":
			return false
		}
		return false
	}
	callers := map[string]booking.Caller{"owner": booking.ByIdentity(owner), "typist": booking.ByIdentity(typist),
		"staff": f.admin(9), "foreign": booking.ByStaff(booking.User{ID: 8, SalonID: f.salon.ID + 1000, Role: booking.RoleOwner})}
	names := []string{"owner", "typist", "staff", "foreign"}
	var mu sync.Mutex
	var bad []string
	bookingtest.Race(64, func(i int) {
		b := web[i%len(web)]
		who := names[(i/len(web))%len(names)]
		var err error
		if i%2 == 0 {
			_, err = f.Svc.Cancel(booking.As(ctx, callers[who]), booking.CancelRequest{BookingID: b.ID})
		} else {
			_, err = f.Svc.Reschedule(booking.As(ctx, callers[who]), booking.RescheduleRequest{BookingID: b.ID, StartsAt: f.at(fmt.Sprintf("%d:00", 15+i%4))})
		}
		ok := holds(who, b)
		if !ok && !errors.Is(err, booking.ErrNotFound) || ok && err != nil && !errors.Is(err, booking.ErrSlotTaken) && !errors.Is(err, booking.ErrConflict) {
			mu.Lock()
			bad = append(bad, fmt.Sprintf("%s on %d: %v", who, b.ID, err))
			mu.Unlock()
		}
	})
	if len(bad) > 0 {
		t.Fatalf("%d wrong answers: %v", len(bad), bad)
	}
	// Every recorded change came from a credential holder.
	rows, err := f.Pool.Query(ctx, `SELECT booking_id, actor_kind, COALESCE(actor_id, 0), channel, details->>'by' FROM booking_events`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, actorID int64
		var kind, channel string
		var by *string
		if err := rows.Scan(&id, &kind, &actorID, &channel, &by); err != nil {
			t.Fatal(err)
		}
		n++
		switch {
		case kind == "admin" && actorID == 9:
		case by != nil && *by == owner.String():
		case by != nil && *by == typist.String() && id == web[1].ID:
		default:
			t.Errorf("booking %d changed by %s %d via %s (%v), who holds no credential for it", id, kind, actorID, channel, by)
		}
	}
	if n == 0 {
		t.Fatal("no change was recorded at all")
	}
	assertNoOverlap(t, f.Pool)
}
