package booking

import (
	"errors"
	"testing"
	"time"

	"salon/booking/psp"
)

// TestUnaccountedRefund: among a payment's refunds at the provider, the
// one a refund whose answers were lost made is the one refund pending or
// made after those our records refunded (the oldest, adding up to what
// they refunded), when it is of its amount; nothing after them is none;
// anything else is a person's.
func TestUnaccountedRefund(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 3, 2, 10, m, 0, 0, time.UTC) }
	r := func(id, status string, amount int64, m int) psp.Refund {
		return psp.Refund{ID: id, Status: status, Amount: amount, CreatedAt: at(m)}
	}
	for _, c := range []struct {
		name              string
		refunds           []psp.Refund
		accounted, amount int64
		want              string // the refund's id, "none", or "person"
	}{
		{"nothing at all", nil, 0, 300, "none"},
		{"a canceled one only", []psp.Refund{r("a", "canceled", 300, 1)}, 0, 300, "none"},
		{"ours, pending", []psp.Refund{r("a", "pending", 300, 1)}, 0, 300, "a"},
		{"ours, made", []psp.Refund{r("a", "succeeded", 300, 1)}, 0, 300, "a"},
		{"the earlier ones only", []psp.Refund{r("b", "succeeded", 200, 2), r("a", "succeeded", 300, 1)}, 500, 300, "none"},
		{"ours beyond the earlier ones", []psp.Refund{r("c", "pending", 300, 3), r("b", "succeeded", 300, 2), r("a", "canceled", 300, 1)},
			300, 300, "c"},
		{"the newest of two at one time: the first listed", []psp.Refund{r("c", "pending", 300, 3), r("b", "succeeded", 300, 3)}, 300, 300, "c"},
		{"another amount", []psp.Refund{r("a", "pending", 200, 1)}, 0, 300, "person"},
		{"ours twice", []psp.Refund{r("b", "pending", 300, 2), r("a", "succeeded", 300, 1)}, 0, 300, "person"},
		{"less than our records", []psp.Refund{r("a", "succeeded", 200, 1)}, 500, 300, "person"},
		{"refunds by hand beyond ours, adding up to this one", []psp.Refund{r("m2", "pending", 200, 3), r("m1", "pending", 100, 2), r("a", "succeeded", 300, 1)},
			300, 300, "person"},
		{"a refund by hand before ours", []psp.Refund{r("c", "pending", 300, 3), r("a", "succeeded", 300, 2), r("m", "succeeded", 100, 1)},
			300, 300, "person"},
	} {
		got, none, err := unaccountedRefund(c.refunds, c.accounted, c.amount)
		var is string
		switch {
		case errors.Is(err, errRefundUnaccounted):
			is = "person"
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
			continue
		case none && got == nil:
			is = "none"
		case !none && got != nil:
			is = got.ID
		default:
			is = "neither"
		}
		if is != c.want {
			t.Errorf("%s: %s, want %s", c.name, is, c.want)
		}
	}
}
