package booking_test

import (
	"context"
	"errors"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
)

func TestIdempotentReplay(t *testing.T) {
	f := setup(t)
	ctx := bookingtest.System()
	r := f.req(f.masters[0], "11:00")
	r.IdempotencyKey = "key-1"
	first := f.mustBook(t, r)
	again := f.mustBook(t, r)
	if again.ID != first.ID || again.ManageToken != first.ManageToken || !again.StartsAt.Equal(first.StartsAt) {
		t.Fatalf("replay returned %+v, want %+v", again, first)
	}
	if n := activeBookings(t, f.Pool, f.masters[0].ID); n != 1 {
		t.Fatalf("%d bookings after a replay", n)
	}
	// The same key with another body is refused, and writes nothing.
	other := r
	other.StartsAt = f.at("12:00")
	if _, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), other); !errors.Is(err, booking.ErrKeyReused) || !errors.Is(err, booking.ErrConflict) {
		t.Fatalf("reused key: %v", err)
	}
	other = r
	other.Client.Name = "Someone else"
	if _, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), other); !errors.Is(err, booking.ErrKeyReused) {
		t.Fatalf("reused key, other client: %v", err)
	}
	if n := activeBookings(t, f.Pool, f.masters[0].ID); n != 1 {
		t.Fatalf("%d bookings after a refused reuse", n)
	}
	// The phone in another spelling is the same request.
	same := r
	same.Client.Phone = "8" + r.Client.Phone[2:]
	if b, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), same); err != nil || b.ID != first.ID {
		t.Fatalf("replay with the phone respelled: %v %v", b, err)
	}
	// Keys are per salon.
	s2 := f.Salon(t, booking.Salon{})
	sv2 := f.Service(t, s2, booking.SalonService{})
	m2 := f.Master(t, s2, sv2)
	f.Shift(t, s2, m2, f.day, 1, "10:00", "20:00")
	r2 := booking.BookRequest{SalonID: s2.ID, ServiceID: sv2.ID, MasterID: m2.ID, StartsAt: f.at("11:00"),
		Client: r.Client, IdempotencyKey: "key-1"}
	if b, err := f.Svc.Book(booking.As(ctx, booking.Visitor()), r2); err != nil || b.ID == first.ID {
		t.Fatalf("same key in another salon: %v %v", b, err)
	}
}

func TestIdempotencyAfterFailure(t *testing.T) {
	f := setup(t)
	f.mustBook(t, f.req(f.masters[0], "11:00"))
	r := f.req(f.masters[0], "11:00")
	r.IdempotencyKey = "retry-me"
	if _, err := f.Svc.Book(web(), r); !errors.Is(err, booking.ErrSlotTaken) {
		t.Fatalf("first attempt: %v", err)
	}
	// The refusal left no record: a retry of the key for a free time books.
	r.StartsAt = f.at("12:00")
	if _, err := f.Svc.Book(web(), r); err != nil {
		t.Fatalf("retry after a refusal: %v", err)
	}
}

func TestIdempotencyConcurrentReplays(t *testing.T) {
	f := setup(t)
	r := f.req(f.masters[0], "11:00")
	r.IdempotencyKey = "concurrent"
	const n = 30
	ids := make([]int64, n)
	tokens := make([]string, n)
	errs := race(n, func(i int) error {
		b, err := f.Svc.Book(web(), r)
		if err == nil {
			ids[i], tokens[i] = b.ID, b.ManageToken
		}
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
		if ids[i] != ids[0] || tokens[i] != tokens[0] {
			t.Fatalf("replay %d got booking %d, replay 0 got %d", i, ids[i], ids[0])
		}
	}
	var bookings, keys int
	if err := f.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM bookings), (SELECT count(*) FROM idempotency_keys)`).
		Scan(&bookings, &keys); err != nil {
		t.Fatal(err)
	}
	if bookings != 1 || keys != 1 {
		t.Fatalf("%d bookings and %d keys, want 1 and 1", bookings, keys)
	}
}
