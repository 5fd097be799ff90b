package widget

import (
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/time/rate"
)

// limiter is a token bucket per client IP (per /64 for IPv6, the least a
// network hands one subscriber): perMinute bookings a minute, with a burst
// of as many. Buckets idle for ten minutes are forgotten. Each replica
// limits on its own.
type limiter struct {
	perMinute int
	mu        sync.Mutex
	buckets   map[netip.Addr]*bucket
	swept     time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(perMinute int) *limiter {
	return &limiter{perMinute: perMinute, buckets: map[netip.Addr]*bucket{}, swept: time.Now()}
}

// allow takes a token for ip, or reports how long until one is free.
func (l *limiter) allow(ip netip.Addr, now time.Time) (bool, time.Duration) {
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			ip = p.Addr()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		for k, b := range l.buckets {
			if now.Sub(b.seen) > 10*time.Minute {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	b := l.buckets[ip]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(rate.Every(time.Minute/time.Duration(l.perMinute)), l.perMinute)}
		l.buckets[ip] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// rateLimited refuses a request beyond the client IP's budget in l (nil:
// no limit).
func (h *Handler) rateLimited(l *limiter) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if l == nil {
			return c.Next()
		}
		ok, wait := l.allow(clientIP(c, h.cfg.TrustedProxies), time.Now())
		if !ok {
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(wait.Seconds())+1))
			return errRateLimited
		}
		return c.Next()
	}
}

// ClientIP returns a function that finds the client's address behind the
// trusted proxies, for other front ends (the panel's login throttling).
func ClientIP(trusted []netip.Prefix) func(c *fiber.Ctx) netip.Addr {
	return func(c *fiber.Ctx) netip.Addr { return clientIP(c, trusted) }
}

// clientIP is the address of the client: the peer, unless the peer is a
// trusted proxy, in which case X-Forwarded-For is read from the right and
// the first address that is not a trusted proxy is the client's.
func clientIP(c *fiber.Ctx, trusted []netip.Prefix) netip.Addr {
	peer, _ := netip.ParseAddr(c.Context().RemoteIP().String())
	peer = peer.Unmap()
	if !isTrusted(peer, trusted) {
		return peer
	}
	hops := strings.Split(c.Get(fiber.HeaderXForwardedFor), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		ip, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		ip = ip.Unmap()
		if !isTrusted(ip, trusted) {
			return ip
		}
	}
	return peer
}

func isTrusted(ip netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// ParseProxies reads SALON_TRUSTED_PROXIES: comma-separated CIDRs or addresses.
func ParseProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "/") {
			ip, err := netip.ParseAddr(part)
			if err != nil {
				return nil, err
			}
			out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
