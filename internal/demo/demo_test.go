package demo_test

import (
	"context"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/internal/demo"
)

func TestMain(m *testing.M) { bookingtest.Main(m) }

func counts(t *testing.T, e *bookingtest.Env) [4]int {
	t.Helper()
	var c [4]int
	if err := e.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM masters), (SELECT count(*) FROM services),
		(SELECT count(*) FROM bookings), (SELECT count(*) FROM users)`).Scan(&c[0], &c[1], &c[2], &c[3]); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSeedIsIdempotentAndTopsUpShifts(t *testing.T) {
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	now := time.Date(2026, 3, 2, 7, 0, 0, 0, time.UTC)
	salon, err := demo.Seed(ctx, e.Svc, now)
	if err != nil {
		t.Fatal(err)
	}
	first := counts(t, e)
	if first[0] < 3 || first[1] < 4 || first[2] < 5 || first[3] != 1 {
		t.Fatalf("demo has masters, services, bookings, users = %v", first)
	}
	deposit := false
	svcs, _ := e.Svc.Services(ctx, salon.ID)
	for _, s := range svcs {
		deposit = deposit || s.Deposit > 0
	}
	if !deposit {
		t.Fatal("no demo service takes a deposit")
	}
	if _, err := demo.Seed(ctx, e.Svc, now); err != nil {
		t.Fatal(err)
	}
	if again := counts(t, e); again != first {
		t.Fatalf("second seed changed counts: %v -> %v", first, again)
	}
	// A week later the shifts reach two weeks ahead again.
	later := now.AddDate(0, 0, 7)
	if _, err := demo.Seed(ctx, e.Svc, later); err != nil {
		t.Fatal(err)
	}
	slots, err := e.Svc.Slots(ctx, booking.SlotQuery{SalonID: salon.ID, ServiceID: svcs[0].ID, From: salon.Today(later).AddDays(demo.Days - 3), Days: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) == 0 {
		t.Fatal("no slots near the end of the topped-up fortnight")
	}
	if _, _, err := e.Svc.Login(booking.As(ctx, booking.Visitor()), demo.Email, demo.Password, "192.0.2.1"); err != nil {
		t.Fatalf("demo login: %v", err)
	}
}
