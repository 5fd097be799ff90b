package psp_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"salon/booking/psp"
	"salon/booking/psp/psptest"
)

// TestRetryingKeepsTheKey: a create whose answers are lost twice is made
// again with the same idempotence key and finds the one payment; a refusal
// is not tried again; an outcome unknown every time ends after the
// attempts.
func TestRetryingKeepsTheKey(t *testing.T) {
	fake := psptest.New(t)
	var lose, reject atomic.Int32
	fake.Fault = func(method, path string) psptest.Fault {
		switch {
		case reject.Load() > 0:
			reject.Add(-1)
			return psptest.Reject
		case lose.Load() > 0:
			lose.Add(-1)
			return psptest.Lost
		}
		return psptest.None
	}
	p := psp.Retrying(&psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}, 4)
	ctx := context.Background()
	req := psp.CreateRequest{Amount: 50000, Currency: "RUB", Description: "Deposit", ReturnURL: "https://salon.test/back/r"}

	lose.Store(2)
	got, err := p.Create(ctx, "pay-1", req)
	if err != nil || fake.Payments() != 1 || fake.Calls("POST /payments") != 3 {
		t.Fatalf("two lost answers: %+v %v; %d payments after %d calls", got, err, fake.Payments(), fake.Calls("POST /payments"))
	}
	reject.Store(1)
	if _, err := p.Create(ctx, "pay-2", req); !psp.IsRejected(err) || fake.Calls("POST /payments") != 4 {
		t.Errorf("a refusal: %v after %d calls (want 1 more)", err, fake.Calls("POST /payments"))
	}
	lose.Store(10)
	if _, err := p.Get(ctx, got.ID); !errors.Is(err, psp.ErrUnknown) || fake.Calls("GET /payments/{id}") != 4 {
		t.Errorf("unknown every time: %v after %d calls (want 4)", err, fake.Calls("GET /payments/{id}"))
	}
}
