// Package demo seeds the demo salon that `salon dev` serves: a few masters and
// services (some with a deposit), two weeks of shifts from today, a few
// bookings so the calendar is not empty, and a panel login. Seeding is
// idempotent: a second run only tops the shifts up to two weeks ahead.
package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"salon/booking"
)

// Demo salon and login, printed by `salon dev`.
const (
	Slug     = "demo"
	Email    = "admin@demo.salon"
	Password = "demo-admin"
)

// Days is how far ahead the demo salon has shifts.
const Days = 14

type master struct {
	name     string
	services []string
	start    string // shift start and end, wall clock
	end      string
	offDays  []time.Weekday
}

var services = []booking.SalonService{
	{Name: "Женская стрижка", DurationMin: 60, Price: 250000},
	{Name: "Мужская стрижка", DurationMin: 45, Price: 150000, BufferMin: 15},
	{Name: "Окрашивание", DurationMin: 120, Price: 600000, Deposit: 100000, BufferMin: 15},
	{Name: "Маникюр", DurationMin: 60, Price: 180000},
	{Name: "Стрижка бороды", DurationMin: 30, Price: 90000},
}

var masters = []master{
	{"Анна", []string{"Женская стрижка", "Окрашивание"}, "10:00", "19:00", []time.Weekday{time.Sunday, time.Monday}},
	{"Борис", []string{"Мужская стрижка", "Стрижка бороды"}, "11:00", "20:00", []time.Weekday{time.Tuesday}},
	{"Вера", []string{"Маникюр"}, "09:00", "18:00", []time.Weekday{time.Saturday, time.Sunday}},
	{"Галина", []string{"Женская стрижка", "Окрашивание", "Маникюр"}, "12:00", "21:00", []time.Weekday{time.Wednesday}},
}

// Seed creates the demo salon when missing and tops its shifts up to Days
// ahead of now. It returns the salon.
func Seed(ctx context.Context, svc *booking.Service, now time.Time) (*booking.Salon, error) {
	salon, err := svc.SalonBySlug(ctx, Slug)
	fresh := false
	switch {
	case errors.Is(err, booking.ErrNotFound):
		salon, err = create(ctx, svc)
		if err != nil {
			return nil, err
		}
		fresh = true
	case err != nil:
		return nil, err
	}
	ms, err := svc.Masters(ctx, salon.ID, 0)
	if err != nil {
		return nil, err
	}
	today := salon.Today(now)
	for _, m := range ms {
		def, ok := definition(m.Name)
		if !ok {
			continue
		}
		existing, err := svc.Shifts(ctx, salon.ID, m.ID, today, Days)
		if err != nil {
			return nil, err
		}
		has := map[booking.Date]bool{}
		for _, sh := range existing {
			has[sh.Date] = true
		}
		start, _ := booking.ParseClock(def.start)
		end, _ := booking.ParseClock(def.end)
		for d := range Days {
			day := today.AddDays(d)
			wd := day.Start(salon.Location()).Weekday()
			if has[day] || slices.Contains(def.offDays, wd) {
				continue
			}
			lunch := booking.ShiftInput{Start: start, End: end, BreakStart: start + 4*60, BreakEnd: start + 4*60 + 30}
			if err := svc.SetShifts(ctx, salon.ID, m.ID, day, []booking.ShiftInput{lunch}); err != nil {
				return nil, fmt.Errorf("demo shifts: %w", err)
			}
		}
	}
	if fresh {
		if err := bookSome(ctx, svc, salon, now); err != nil {
			return nil, err
		}
	}
	if err := sellSome(ctx, svc, salon); err != nil {
		return nil, err
	}
	return salon, nil
}

// sellSome puts a certificate and a package on sale online (the widget's
// gift page, when payments are on), unless the salon has offers already.
func sellSome(ctx context.Context, svc *booking.Service, salon *booking.Salon) error {
	if have, err := svc.BalanceOffers(ctx, salon.ID, true); err != nil || len(have) > 0 {
		return err
	}
	list, err := svc.Services(ctx, salon.ID)
	if err != nil {
		return err
	}
	var manicure int64
	for _, sv := range list {
		if sv.Name == "Маникюр" {
			manicure = sv.ID
		}
	}
	offers := []booking.BalanceOffer{{Kind: booking.BalanceCertificate, Title: "Подарочный сертификат на 3 000 ₽", Amount: 300000,
		Price: 300000, ValidDays: 365}}
	if manicure != 0 {
		offers = append(offers, booking.BalanceOffer{Kind: booking.BalancePackage, Title: "Абонемент: 5 маникюров",
			ServiceIDs: []int64{manicure}, Visits: 5, Price: 800000, ValidDays: 180})
	}
	for _, o := range offers {
		o.SalonID = salon.ID
		if _, err := svc.AddBalanceOffer(ctx, o); err != nil {
			return fmt.Errorf("demo offer %s: %w", o.Title, err)
		}
	}
	return nil
}

func create(ctx context.Context, svc *booking.Service) (*booking.Salon, error) {
	salon, err := svc.CreateSalon(ctx, booking.Salon{
		Slug: Slug, Name: "Салон «Демо»", Timezone: "Europe/Moscow", Currency: "RUB", Locale: "ru",
		MinNoticeMin: booking.DefaultMinNoticeMin, CutoffHours: booking.DefaultCutoffHours,
		Address: "Москва, Тверская ул., 1", Phone: "+74951234567",
	})
	if err != nil {
		return nil, fmt.Errorf("demo salon: %w", err)
	}
	// The demo sends SMS too (confirmations and reminders), so a newcomer
	// sees one on the development outbox page.
	if _, err := svc.UpdateMessageSettings(ctx, salon.ID, booking.MessageSettings{QuietFrom: "21:00", QuietTo: "09:00",
		ReminderOffsets: []time.Duration{24 * time.Hour, 2 * time.Hour}, EmailKinds: booking.ClientKinds,
		SMSKinds: []booking.MessageKind{booking.KindConfirmation, booking.KindChanged, booking.KindCancelled, booking.KindReminder}}); err != nil {
		return nil, fmt.Errorf("demo messages: %w", err)
	}
	ids := map[string]int64{}
	for _, s := range services {
		created, err := svc.CreateService(ctx, salon.ID, s)
		if err != nil {
			return nil, fmt.Errorf("demo service %s: %w", s.Name, err)
		}
		ids[s.Name] = created.ID
	}
	for _, m := range masters {
		var offers []booking.Offer
		for _, name := range m.services {
			offers = append(offers, booking.Offer{ServiceID: ids[name]})
		}
		if _, err := svc.CreateMaster(ctx, salon.ID, booking.Master{Name: m.name}, offers...); err != nil {
			return nil, fmt.Errorf("demo master %s: %w", m.name, err)
		}
	}
	if _, err := svc.CreateUser(ctx, salon.ID, Email, Password, booking.RoleOwner); err != nil {
		return nil, fmt.Errorf("demo user: %w", err)
	}
	return salon, nil
}

// bookSome books a few of the free slots of the coming three days: two a
// day for each master, so the calendar has something in it and plenty free.
func bookSome(ctx context.Context, svc *booking.Service, salon *booking.Salon, now time.Time) error {
	ms, err := svc.Masters(ctx, salon.ID, 0)
	if err != nil {
		return err
	}
	clients := []booking.ClientInput{
		{Name: "Мария", Phone: "+79990000101"}, {Name: "Иван", Phone: "+79990000102"},
		{Name: "Ольга", Phone: "+79990000103"}, {Name: "Пётр", Phone: "+79990000104"},
	}
	n := 0
	for d := range 3 {
		for _, m := range ms {
			if len(m.ServiceIDs) == 0 {
				continue
			}
			sv := m.ServiceIDs[(d+n)%len(m.ServiceIDs)]
			slots, err := svc.Slots(ctx, booking.SlotQuery{SalonID: salon.ID, ServiceID: sv, MasterID: m.ID, From: salon.Today(now).AddDays(d)})
			if err != nil {
				return err
			}
			for _, j := range []int{2, 14} {
				if j >= len(slots) {
					continue
				}
				_, err := svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{
					SalonID: salon.ID, ServiceID: sv, MasterID: m.ID, StartsAt: slots[j].Start,
					Client: clients[n%len(clients)],
				})
				if err != nil && !errors.Is(err, booking.ErrSlotTaken) {
					return fmt.Errorf("demo booking: %w", err)
				}
				n++
			}
		}
	}
	return nil
}

func definition(name string) (master, bool) {
	for _, m := range masters {
		if m.name == name {
			return m, true
		}
	}
	return master{}, false
}
