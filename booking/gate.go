package booking

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// A request that must wait for a lock in the database (a busy master's,
// a login throttle key's) holds a pool connection while it waits; sixty
// bookings for one busy master held every connection of a process, and
// every other salon waited behind them. Gates keep that wait out of the
// database: per key, one request of the process waits there, and the
// others wait here, without a connection, in a queue of bounded length;
// past it they are refused at once (ErrUnavailable, a 503 with
// Retry-After). Only requests that find the lock taken pass a gate: the
// common case, a free master, costs nothing. (Imports, which lock a batch's
// masters together and are an owner's deliberate act, wait in the
// database.)

// MaxGateWaiters is how many requests of a process may wait for one key's
// lock (the one in the database included); more are refused at once. A
// waiter costs a goroutine, not a connection: the queue is long enough
// for a crowd racing for one popular time (each is answered in turn, most
// that the time is taken), and it is bounded in time by the lock wait.
const MaxGateWaiters = 256

// gates are the gates of one kind of key.
type gates[K cmp.Ordered] struct {
	what string // what the key is, for the refusals: "master", "login"
	mu   sync.Mutex
	m    map[K]*gate
}

// gate is one key's: held by the request that may wait in the database.
type gate struct {
	held    chan struct{} // capacity 1
	waiting int           // the holder and those waiting for it
}

// enter passes the gates of keys, in ascending order, waiting at most
// until deadline; it returns the function that leaves them. A full queue
// or the deadline is ErrUnavailable, with no gate held.
func (g *gates[K]) enter(ctx context.Context, deadline time.Time, keys ...K) (leave func(), err error) {
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var held []K
	leave = func() {
		for _, k := range held {
			g.leave(k)
		}
	}
	for _, k := range keys {
		gt, ok := g.join(k)
		if !ok {
			leave()
			return nil, fmt.Errorf("%d requests are already waiting for the same %s: %w", MaxGateWaiters, g.what, ErrUnavailable)
		}
		select {
		case gt.held <- struct{}{}:
			held = append(held, k)
		case <-ctx.Done():
			g.quit(k)
			leave()
			return nil, fmt.Errorf("the %s stayed busy: %w", g.what, ErrUnavailable)
		}
	}
	return leave, nil
}

// join queues for k's gate; false when its queue is full.
func (g *gates[K]) join(k K) (*gate, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[K]*gate{}
	}
	gt := g.m[k]
	if gt == nil {
		gt = &gate{held: make(chan struct{}, 1)}
		g.m[k] = gt
	}
	if gt.waiting >= MaxGateWaiters {
		return nil, false
	}
	gt.waiting++
	return gt, true
}

// leave releases k's gate held by the caller.
func (g *gates[K]) leave(k K) {
	g.mu.Lock()
	gt := g.m[k]
	g.mu.Unlock()
	<-gt.held
	g.quit(k)
}

// quit leaves k's queue; the last one out forgets the gate.
func (g *gates[K]) quit(k K) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gt := g.m[k]
	if gt.waiting--; gt.waiting == 0 {
		delete(g.m, k)
	}
}

// busyError says masters' locks are taken: the transaction ends, and runs
// again once their gates are passed (inTx).
type busyError struct{ masters []int64 }

func (e *busyError) Error() string { return fmt.Sprintf("masters %v are busy", e.masters) }

// passedKey is the context key of the gates a transaction passed.
type passedKey struct{}

// passed is what a transaction that passed gates may wait for in the
// database, and until when.
type passed struct {
	masters  []int64
	deadline time.Time
}

// passedOf returns the gates ctx says were passed (nil for none).
func passedOf(ctx context.Context) *passed {
	p, _ := ctx.Value(passedKey{}).(*passed)
	return p
}

// covers reports whether the gates of every master were passed.
func (p *passed) covers(masters []int64) bool {
	if p == nil {
		return false
	}
	for _, m := range masters {
		if !slices.Contains(p.masters, m) {
			return false
		}
	}
	return true
}

// lockTimeout is how long a lock wait in the database may take until the
// deadline: at least a millisecond (0 would mean forever).
func lockTimeout(deadline time.Time) int64 {
	return max(time.Until(deadline).Milliseconds(), 1)
}
