package psp_test

import (
	"context"
	"errors"
	"testing"

	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/booking/psp/psptest"
)

// TestARefundCountsOnThePaymentOnceItSucceeds: as YooKassa, the fake's
// payment counts in refunded_amount only the refunds that succeeded (a
// pending one from when it settles, a canceled one never), while the list
// of the payment's refunds shows each, newest first, page by page, through
// the retrying and measured wrappers.
func TestARefundCountsOnThePaymentOnceItSucceeds(t *testing.T) {
	fake := psptest.New(t)
	yk := &psp.YooKassa{BaseURL: fake.URL, ShopID: fake.ShopID, Secret: fake.Secret}
	p := psp.Retrying(psp.Measured(yk), 4)
	ctx := context.Background()
	pay, err := p.Create(ctx, "pay-1", psp.CreateRequest{Amount: 100000, Currency: "RUB", Description: "Deposit", ReturnURL: "https://salon.test/back"})
	if err != nil {
		t.Fatal(err)
	}
	fake.Pay(pay.ID)
	if _, err := p.Capture(ctx, "capture-1", pay.ID, 100000, "RUB"); err != nil {
		t.Fatal(err)
	}
	refunded := func() int64 {
		t.Helper()
		got, err := p.Get(ctx, pay.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Refunded
	}

	fake.RefundsPending = true
	pending, err := p.Refund(ctx, "refund-1", pay.ID, 30000, "RUB", nil)
	if err != nil || pending.Status != "pending" || refunded() != 0 {
		t.Fatalf("a pending refund: %+v, %v; the payment's refunded %d, want 0", pending, err, refunded())
	}
	fake.RefundsPending, fake.RefundsCanceled = false, true
	if r, err := p.Refund(ctx, "refund-2", pay.ID, 20000, "RUB", nil); err != nil || r.Status != "canceled" || refunded() != 0 {
		t.Fatalf("a canceled refund: %+v, %v; the payment's refunded %d, want 0", r, err, refunded())
	}
	fake.RefundsCanceled = false
	fake.SettleRefunds()
	if refunded() != 30000 || fake.Refunds() != 2 {
		t.Fatalf("settled: the payment's refunded %d, want 300; %d refunds, want 2", refunded(), fake.Refunds())
	}
	for i := range 110 {
		if _, err := p.Refund(ctx, "small-"+string(rune('a'+i/26))+string(rune('a'+i%26)), pay.ID, 1, "RUB", nil); err != nil {
			t.Fatal(err)
		}
	}
	if refunded() != 30110 {
		t.Fatalf("the payment's refunded %d, want 301.10", refunded())
	}

	var all []psp.Refund
	cursor, pages := "", 0
	for {
		page, next, err := psp.ListRefunds(ctx, p, pay.ID, cursor)
		if err != nil {
			t.Fatal(err)
		}
		all, pages = append(all, page...), pages+1
		if next == "" {
			break
		}
		cursor = next
	}
	if len(all) != 112 || pages != 2 {
		t.Fatalf("listed %d refunds in %d pages, want 112 in 2", len(all), pages)
	}
	canceled, oldest := all[len(all)-2], all[len(all)-1]
	if oldest.ID != pending.ID || oldest.Status != "succeeded" || oldest.Amount != 30000 || oldest.CreatedAt.IsZero() ||
		canceled.Status != "canceled" || all[0].Amount != 1 {
		t.Errorf("newest first, oldest last: %+v ... %+v, %+v", all[0], canceled, oldest)
	}
	if page, _, err := psp.ListRefunds(ctx, p, "pay-none", ""); err != nil || len(page) != 0 {
		t.Errorf("another payment's refunds: %+v, %v", page, err)
	}
	if _, _, err := psp.ListRefunds(ctx, psp.Retrying(bare{yk}, 4), pay.ID, ""); !errors.Is(err, psp.ErrCannotListRefunds) {
		t.Errorf("a provider that lists no refunds: %v", err)
	}
}

// bare is a provider with the interface's methods only.
type bare struct{ psp.Provider }

// TestCallBoundCountsEveryAttempt: the longest a call takes is each
// attempt of the retrying wrapper at its bound, and the pauses between
// them, through any other wrapper.
func TestCallBoundCountsEveryAttempt(t *testing.T) {
	yk := &psp.YooKassa{}
	for _, c := range []struct {
		p    psp.Provider
		want string
	}{
		{yk, "8s"},
		{psp.Retrying(yk, 1), "8s"},
		{psp.Retrying(psp.Measured(yk), 4), "32.35s"},
		{psp.Measured(psp.Retrying(yk, 2)), "16.05s"},
	} {
		if got := psp.CallBound(c.p, 8e9).String(); got != c.want {
			t.Errorf("%T: %s, want %s", c.p, got, c.want)
		}
	}
}

// TestTheSandboxListsAPaymentsRefunds: the sandbox's refunds of a payment
// (made at once) are listed newest first, another payment's not.
func TestTheSandboxListsAPaymentsRefunds(t *testing.T) {
	sb := &psp.Sandbox{Pool: bookingtest.Pool(t)}
	ctx := context.Background()
	var ids []string
	for i, key := range []string{"pay-1", "pay-2"} {
		pay, err := sb.Create(ctx, key, psp.CreateRequest{Amount: 100000, Currency: "RUB", Description: "Deposit"})
		if err != nil {
			t.Fatal(err)
		}
		if err := sb.Pay(ctx, pay.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := sb.Capture(ctx, "capture-"+key, pay.ID, 100000, "RUB"); err != nil {
			t.Fatal(err)
		}
		for j := range i + 2 {
			if _, err := sb.Refund(ctx, key+"-refund-"+string(rune('a'+j)), pay.ID, int64(10000*(j+1)), "RUB", nil); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, pay.ID)
	}
	page, next, err := psp.ListRefunds(ctx, psp.Retrying(psp.Measured(sb), 2), ids[0], "")
	if err != nil || next != "" || len(page) != 2 || page[0].Amount != 20000 || page[1].Amount != 10000 || page[0].Status != "succeeded" {
		t.Fatalf("the first payment's refunds: %+v, %q, %v", page, next, err)
	}
}
