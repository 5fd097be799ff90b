package booking

import "testing"

// TestReceiptVat: a prepayment (an advance, a prepayment in full or in
// part, and so their refunds, which repeat the line) carries the
// calculated rate of the salon's nominal one; a settlement, the nominal
// (of a salon that set a calculated code too).
func TestReceiptVat(t *testing.T) {
	calculated := map[int]int{1: 1, 2: 2, 3: 5, 4: 6, 5: 5, 6: 6, 7: 9, 8: 10, 9: 9, 10: 10, 11: 12, 12: 12}
	nominalOf := map[int]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 3, 6: 4, 7: 7, 8: 8, 9: 7, 10: 8, 11: 11, 12: 11}
	for nominal := 1; nominal <= 12; nominal++ {
		for _, mode := range []string{"advance", "full_prepayment", "partial_prepayment"} {
			if got := receiptVat(nominal, mode); got != calculated[nominal] {
				t.Errorf("%s of code %d: %d, want %d", mode, nominal, got, calculated[nominal])
			}
		}
		if got, want := receiptVat(nominal, "full_payment"), nominalOf[nominal]; got != want {
			t.Errorf("full_payment of code %d: %d, want %d", nominal, got, want)
		}
	}
}

// TestSettlementShare: what each spend of a sale settles, spends and
// refunds in the order given; the parts never pass what was paid.
func TestSettlementShare(t *testing.T) {
	type step struct {
		spend, refund int64 // units spent (settled) or refunded
		want          int64 // what the spend settles
	}
	cases := []struct {
		name         string
		price, units int64
		steps        []step
	}{
		{"a package of 3 for 10000.00", 1000000, 3, []step{{spend: 1, want: 333333}, {spend: 1, want: 333333}, {spend: 1, want: 333334}}},
		{"a package of 7 for 1.00", 100, 7, []step{{spend: 1, want: 14}, {spend: 1, want: 14}, {spend: 1, want: 14}, {spend: 1, want: 14},
			{spend: 1, want: 14}, {spend: 1, want: 14}, {spend: 1, want: 16}}},
		{"a package of 3, one refunded first", 1000000, 3, []step{{refund: 1}, {spend: 1, want: 333333}, {spend: 1, want: 333334}}},
		{"a package of 3, two refunded after one visit", 1000000, 3, []step{{spend: 1, want: 333333}, {refund: 2}}},
		{"a package of 3, one refunded between two visits", 1000000, 3, []step{{spend: 1, want: 333333}, {refund: 1}, {spend: 1, want: 333334}}},
		{"a package of 7 for 1.00, refunded in two parts after a visit", 100, 7, []step{{spend: 1, want: 14}, {refund: 2}, {refund: 4}}},
		{"a certificate of 5000.00 sold for 4500.00, the rest refunded", 450000, 500000, []step{{spend: 333333, want: 299999}, {refund: 166667}}},
		{"a certificate at its amount", 300000, 300000, []step{{spend: 120000, want: 120000}, {spend: 500, want: 500}, {refund: 179500}}},
		{"a certificate used up", 300000, 300000, []step{{spend: 120000, want: 120000}, {spend: 180000, want: 180000}}},
		{"a certificate of 5000.00 sold for 4500.00", 450000, 500000, []step{{spend: 333333, want: 299999}, {spend: 166667, want: 150001}}},
	}
	for _, c := range cases {
		var spent, gone, refunded, settled int64
		for i, s := range c.steps {
			if s.refund > 0 {
				gone += s.refund
				refunded += saleRefundShare(c.price, c.units, refunded, gone, saleUse{spent: spent, settled: settled, priced: true})
				continue
			}
			got := settlementShare(c.price, c.units, s.spend, spent, gone, refunded, settled)
			if got != s.want {
				t.Errorf("%s, step %d: settles %d, want %d", c.name, i, got, s.want)
			}
			spent, settled = spent+s.spend, settled+got
		}
		if settled+refunded > c.price || (spent+gone >= c.units && settled+refunded != c.price) {
			t.Errorf("%s: settled %d and refunded %d of %d", c.name, settled, refunded, c.price)
		}
	}
	// A sale paid back whole (recorded so by staff) has nothing to settle.
	if got := settlementShare(1000000, 3, 1, 0, 0, 1000000, 0); got != 0 {
		t.Errorf("paid back whole: settles %d", got)
	}
}

// TestDeskRefund: what the desk pays back of a balance sold for a price;
// what was kept and what went back add up to the price once nothing is
// left unused.
func TestDeskRefund(t *testing.T) {
	for _, c := range []struct {
		name                           string
		price, total, left, gone, held int64
		want                           int64
	}{
		{"3 for 10000.00, one used, two refunded", 1000000, 3, 2, 0, 0, 666667},
		{"3 for 10000.00, one held, two refunded", 1000000, 3, 2, 0, 1, 666666},
		{"then the held one, back, refunded", 1000000, 3, 1, 2, 0, 333334},
		{"3 for 10000.00, none used, all refunded", 1000000, 3, 3, 0, 0, 1000000},
		{"7 for 1.00, one used, six refunded", 100, 7, 6, 0, 0, 86},
		{"a certificate of 5000.00 sold for 4500.00, 1000.00 used", 450000, 500000, 400000, 0, 0, 360000},
	} {
		if got := deskRefund(c.price, c.total, c.left, c.gone, c.held); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
