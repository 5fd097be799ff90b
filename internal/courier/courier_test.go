package courier_test

import (
	"context"
	"strings"
	"testing"

	"salon/booking"
	"salon/internal/courier"
)

// TestTheOutboxKeepsEveryMailOfASale: the development outbox keeps a
// sale's code e-mail under the sale, and each refund's e-mail as one of
// its own; none takes another's place.
func TestTheOutboxKeepsEveryMailOfASale(t *testing.T) {
	x := &courier.Outbox{Base: "https://salon.test", Channel: booking.ChannelEmail}
	salon := booking.Salon{ID: 7, Name: "Studio", Locale: "en", Currency: "RUB", Timezone: "Europe/Moscow"}
	ctx := context.Background()
	sale := booking.SaleMail{SaleID: 3, BalanceID: 9, To: "maria@example.com", Lang: "en", Salon: salon, Kind: booking.BalanceCertificate,
		Code: "ZK8Z-KWNQ-D78E", Units: 300000, Title: "Gift certificate"}
	if _, err := x.DeliverSale(ctx, &sale); err != nil {
		t.Fatal(err)
	}
	for _, amount := range []booking.Money{210000, 90000} {
		refund := sale
		refund.Code, refund.Refund, refund.Refunded, refund.Price = "", amount, amount, 300000
		if _, err := x.DeliverSale(ctx, &refund); err != nil {
			t.Fatal(err)
		}
	}
	if code, ok := x.Text(-3); !ok || !strings.Contains(code, "ZK8Z-KWNQ-D78E") {
		t.Fatalf("the sale's code e-mail is gone: %q", code)
	}
	refunds := x.Extra()
	if len(refunds) != 2 || refunds[0].ID == refunds[1].ID || refunds[0].ID >= -3 || refunds[1].ID >= -3 {
		t.Fatalf("refunds kept: %+v", refunds)
	}
	for i, want := range []string{"2,100", "900"} {
		r := refunds[i]
		if r.Kind != booking.KindBalanceRefunded || r.Recipient != "maria@example.com" || r.SalonID != 7 || !strings.Contains(r.Body, want) ||
			strings.Contains(r.Body, "ZK8Z") {
			t.Errorf("refund %d: %+v", i, r)
		}
	}
	// Past what it keeps: the oldest go, and every one kept has an id of
	// its own (the page's anchors).
	refund := sale
	refund.Code, refund.Refund, refund.Refunded, refund.Price = "", 100, 100, 300000
	for range 250 {
		if _, err := x.DeliverSale(ctx, &refund); err != nil {
			t.Fatal(err)
		}
	}
	ids := map[int64]bool{}
	for _, r := range x.Extra() {
		ids[r.ID] = true
	}
	if n := len(x.Extra()); n != 200 || len(ids) != n {
		t.Fatalf("%d refunds kept, %d ids", n, len(ids))
	}
}
