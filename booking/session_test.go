package booking_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// loginOutcomes counts a burst's answers: passwords checked (and wrong),
// attempts throttled, attempts refused as too many at once, and the rest.
type loginOutcomes struct {
	checked, throttled, busy int
	other                    []error
}

func outcomes(errs []error) loginOutcomes {
	var o loginOutcomes
	for _, err := range errs {
		var th *booking.ThrottledError
		switch {
		case errors.As(err, &th):
			o.throttled++
		case errors.Is(err, booking.ErrUnavailable):
			o.busy++
		case errors.Is(err, booking.ErrForbidden):
			o.checked++
		default:
			o.other = append(o.other, err)
		}
	}
	return o
}

// TestLoginBurstGetsExactlyTenGuesses: 40 wrong passwords for one e-mail
// released at once had 24 checked, and then the right one got a session
// (the lockout was read before the failures in flight were written).
// Every attempt is now counted before its password is hashed: exactly ten
// are checked, the other thirty refused without hashing, and then the
// right password is refused too. The same holds per address for forty
// unknown e-mails.
func TestLoginBurstGetsExactlyTenGuesses(t *testing.T) {
	t.Parallel()
	// Time enough in the queue for ten hashes on a busy machine: this test
	// counts guesses; TestLoginsBeyondTheQueueAreRefusedAtOnce the queue.
	e := bookingtest.New(t, booking.WithPasswordChecks(2, 64, time.Minute))
	s := e.Salon(t, booking.Salon{})
	if _, err := e.Svc.CreateUser(bookingtest.System(), s.ID, "owner@burst.test", "the right password", booking.RoleOwner); err != nil {
		t.Fatal(err)
	}
	anon := booking.As(context.Background(), booking.Visitor())
	errs := race(40, func(i int) error {
		_, _, err := e.Svc.Login(anon, "owner@burst.test", fmt.Sprintf("guess %d", i), fmt.Sprintf("198.51.100.%d", i))
		return err
	})
	if o := outcomes(errs); o.checked != booking.LoginMaxFailures || o.throttled != 40-booking.LoginMaxFailures || o.other != nil {
		t.Fatalf("a burst of 40 guesses for one e-mail: %+v, want %d checked and the rest throttled", o, booking.LoginMaxFailures)
	}
	var th *booking.ThrottledError
	if _, _, err := e.Svc.Login(anon, "owner@burst.test", "the right password", "203.0.113.1"); !errors.As(err, &th) {
		t.Fatalf("the right password after the burst: %v, want throttled", err)
	}

	// Forty unknown e-mails from one address.
	errs = race(40, func(i int) error {
		_, _, err := e.Svc.Login(anon, fmt.Sprintf("nobody%d@burst.test", i), "whatever", "192.0.2.77")
		return err
	})
	if o := outcomes(errs); o.checked != booking.LoginMaxFailures || o.throttled != 40-booking.LoginMaxFailures || o.other != nil {
		t.Fatalf("a burst of 40 unknown e-mails from one address: %+v", o)
	}
}

// TestLoginsBeyondTheQueueAreRefusedAtOnce: with one hash at a time and
// room for three, logins from twenty addresses at once are checked three
// or so at a time and the rest refused (ErrUnavailable) without hashing;
// a refused attempt is not counted as a guess.
func TestLoginsBeyondTheQueueAreRefusedAtOnce(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t, booking.WithPasswordChecks(1, 3, 0))
	anon := booking.As(context.Background(), booking.Visitor())
	errs := race(20, func(i int) error {
		_, _, err := e.Svc.Login(anon, fmt.Sprintf("queue%d@burst.test", i), "whatever", fmt.Sprintf("198.51.100.%d", i))
		return err
	})
	o := outcomes(errs)
	if o.busy == 0 || o.checked == 0 || o.checked+o.busy != 20 || o.other != nil {
		t.Fatalf("20 logins at once with room for 3: %+v", o)
	}
	var rows int
	if err := e.Pool.QueryRow(context.Background(), `SELECT count(*) FROM login_failures`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 2*o.checked { // one row per key (the e-mail's, the address's) of each checked attempt
		t.Fatalf("%d failure rows for %d checked attempts: refused ones were counted", rows, o.checked)
	}
}
