package booking_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
)

// dying is a provider whose process dies at a chosen call: the call never
// returns, and the request's context ends (as the process does), so
// nothing after the call is written.
type dying struct {
	psp.Provider
	mu     sync.Mutex
	at     string // "create", "get" or "capture"
	reach  chan struct{}
	killed bool
}

func (d *dying) die(ctx context.Context, what string) bool {
	d.mu.Lock()
	if d.at != what || d.killed {
		d.mu.Unlock()
		return false
	}
	d.killed = true
	d.mu.Unlock()
	close(d.reach)
	<-ctx.Done()
	return true
}

func (d *dying) Create(ctx context.Context, key string, r psp.CreateRequest) (*psp.Payment, error) {
	if d.die(ctx, "create") {
		return nil, ctx.Err()
	}
	return d.Provider.Create(ctx, key, r)
}

func (d *dying) Get(ctx context.Context, id string) (*psp.Payment, error) {
	if d.die(ctx, "get") {
		return nil, ctx.Err()
	}
	return d.Provider.Get(ctx, id)
}

func (d *dying) Capture(ctx context.Context, key, id string, amount int64, currency string) (*psp.Payment, error) {
	if d.die(ctx, "capture") {
		return nil, ctx.Err()
	}
	return d.Provider.Capture(ctx, key, id, amount, currency)
}

// TestSagaSurvivesAProcessKilledMidway: a process dies between Claim and
// Register, between the payment and the confirmation, and between the
// confirmation and the capture; a new process's sweep takes every saga to
// its end, each deposit captured once and entered in the ledger once.
func TestSagaSurvivesAProcessKilledMidway(t *testing.T) {
	t.Parallel()
	for _, at := range []string{"create", "get", "capture"} {
		t.Run(at, func(t *testing.T) {
			t.Parallel()
			w := newPayWorld(t, booking.RefundAlways)
			d := &dying{Provider: w.yk, at: at, reach: make(chan struct{})}
			first := booking.New(w.Pool, booking.WithClock(w.Clock.Now), booking.WithPayments(d), booking.WithProviderAttempts(1))
			b := w.book("11:00")
			ctx, kill := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				switch at {
				case "create":
					_, _ = first.StartPayment(booking.As(ctx, booking.ByToken(b.ManageToken)), b.ID, nil)
				default:
					s, err := first.StartPayment(booking.As(context.Background(), booking.ByToken(b.ManageToken)), b.ID, nil)
					if err != nil {
						t.Error(err)
						return
					}
					w.fake.Pay(s.ExternalID)
					_, _ = first.PaymentNotified(booking.As(ctx, booking.BySystem()), "yookassa", s.ExternalID)
				}
			}()
			select {
			case <-d.reach:
			case <-time.After(10 * time.Second):
				t.Fatal("the process never reached the call")
			}
			kill() // the process dies at the call
			<-done
			bs, ps := w.status(b.ID)
			t.Logf("killed at %s: booking %s, payment %s", at, bs, ps)
			if at == "create" && w.fake.Payments() == 0 {
				// The client comes back to the page and pays once the
				// payment exists (the new process registers it).
				w.Clock.Advance(time.Minute)
				if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
					t.Fatal(err)
				}
				s, err := w.Svc.PaymentOf(booking.As(context.Background(), booking.ByToken(b.ManageToken)), 0, b.ID, true)
				if err != nil || s.ExternalID == "" {
					t.Fatalf("after restart: %+v %v", s, err)
				}
				w.fake.Pay(s.ExternalID)
			}
			// The new process (w.Svc) sweeps.
			for range 5 {
				w.Clock.Advance(time.Minute)
				if _, err := w.Svc.SweepPayments(bookingtest.System()); err != nil {
					t.Fatal(err)
				}
			}
			if bs, ps := w.status(b.ID); bs != booking.StatusConfirmed || ps != booking.PayCompleted {
				t.Errorf("after restart: booking %s, payment %s", bs, ps)
			}
			if captured, _ := w.fake.Totals(); captured != 100000 || w.fake.Payments() != 1 {
				t.Errorf("captured %d over %d payments", captured, w.fake.Payments())
			}
			if n := w.count(`SELECT count(*) FROM ledger_entries`); n != 1 {
				t.Errorf("%d ledger entries", n)
			}
		})
	}
}

// TestPaymentJobFollowsUp: a capture whose answer was lost is finished by
// the job written with the authorization, by whichever process runs jobs,
// without waiting for the sweep.
func TestPaymentJobFollowsUp(t *testing.T) {
	t.Parallel()
	w := newPayWorld(t, booking.RefundAlways)
	lost := true
	var mu sync.Mutex
	w.fake.Fault = func(method, path string) psptest.Fault {
		mu.Lock()
		defer mu.Unlock()
		if path == "POST /payments/{id}/capture" && lost {
			lost = false
			return psptest.Lost
		}
		return psptest.None
	}
	b := w.book("11:00")
	s := w.start(b)
	w.fake.Pay(s.ExternalID)
	if _, err := w.Svc.CheckPayment(bookingtest.System(), s.ID); err == nil {
		t.Fatal("the capture's answer was not lost")
	}
	workers := river.NewWorkers()
	booking.AddWorkers(workers, w.Svc)
	jobs, err := river.NewClient(riverpgxv5.New(w.Pool), &river.Config{
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}, Workers: workers,
		FetchPollInterval: 50 * time.Millisecond, FetchCooldown: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = jobs.Stop(sctx)
	})
	if err := jobs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	bookingtest.WaitFor(t, 15*time.Second, "the job to finish the capture", func() bool {
		_, ps := w.status(b.ID)
		return ps == booking.PayCompleted
	})
	if n := w.count(`SELECT count(*) FROM ledger_entries`); n != 1 {
		t.Errorf("%d ledger entries", n)
	}
}
