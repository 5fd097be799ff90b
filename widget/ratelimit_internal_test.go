package widget

import (
	"net/netip"
	"testing"
	"time"
)

// TestLimiterCountsANetworkOnce: an IPv6 subscriber's addresses (a /64)
// share one budget, so rotating addresses inside it buys nothing; another
// /64, and IPv4 addresses, have their own.
func TestLimiterCountsANetworkOnce(t *testing.T) {
	l := newLimiter(3)
	now := time.Now()
	addr := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	for i, ip := range []string{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff:ffff:ffff:ffff"} {
		if ok, _ := l.allow(addr(ip), now); !ok {
			t.Fatalf("request %d refused", i+1)
		}
	}
	if ok, wait := l.allow(addr("2001:db8:1:2:abcd::9"), now); ok || wait <= 0 {
		t.Fatalf("a fourth address of the same /64: allowed %v, wait %v", ok, wait)
	}
	for _, ip := range []string{"2001:db8:1:3::1", "192.0.2.1", "192.0.2.2"} {
		if ok, _ := l.allow(addr(ip), now); !ok {
			t.Fatalf("%s refused: its budget is its own", ip)
		}
	}
}
