package booking

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"salon/i18n"
)

// Spending a balance on a booking. A booking that pays with a package or a
// certificate reserves what it uses in its own transaction: the reserve
// entry is inserted by the statement that inserts the booking, so a
// booking that fails leaves nothing reserved, and an idempotent replay,
// which inserts nothing, spends nothing. The entry's trigger takes the
// balance row's lock (waiting at most the lock wait) and the database
// refuses an entry that would overdraw it; the booking then reads the
// balance again and refuses cleanly when nothing is left.
//
// What was reserved is settled when the booking ends, by a trigger on its
// status (every path that ends a booking): completed or no-show spends it;
// cancelled releases it, unless the salon's refund policy keeps a client's
// late cancellation (Cancel says so), which spends it.

// ErrExhausted: nothing is left of the balance (or it expired) for this
// booking. It unwraps to ErrConflict.
var ErrExhausted = fmt.Errorf("the balance is spent: %w", ErrConflict)

// exhausted is ErrExhausted because of why (an i18n key, with args).
func exhausted(why string, args ...any) error {
	return &reasonError{why: i18n.New(why, args...), kind: ErrExhausted}
}

// PayWith names the balance a booking is paid with: by its code (whoever
// holds it), or, for a package, by its id, when the caller is staff of the
// salon or a chat identity the salon knows to be the package's client.
// A typed phone is never enough. With a code, Kind may be left empty: the
// code says it (the desk's form asks none).
type PayWith struct {
	Kind      BalanceKind
	Code      string
	BalanceID int64
}

// PaidWith is what a booking reserved of a balance.
type PaidWith struct {
	BalanceID int64
	Kind      BalanceKind
	Hint      string // the code's last characters
	Amount    Money  // of a certificate
	Visits    int    // of a package
	// Remaining is what the balance has left now (visits or minor units).
	Remaining int64
	// ValidUntil is the balance's last day (zero: no end).
	ValidUntil Date
	// Keeps is what a client's cancellation the salon's policy keeps
	// keeps of it (units); Kept and Returned, once the booking was
	// cancelled, what that kept of it and what went back to the balance.
	Keeps, Kept, Returned int64
	// Settled: the booking ended (completed, missed or cancelled), and
	// what it reserved was spent or given back.
	Settled bool
	// Covers is what of the visit's price it pays: a certificate's
	// amount, read with a booking at most what its deposit online leaves
	// of its price (capCovers: moved to a cheaper master, it spends no
	// more); a package's visits, the prices of the visit's services it
	// pays (the first it is for, in visit order, one a visit).
	Covers Money
}

// DueAtSalon is what is left to pay at the salon of visit b paid with a
// package or certificate: its price, less what the balance pays of it
// and what the deposit pays online (owed, while b is pending; else
// b.Held, what its payments hold). ok is false when there is nothing to
// say: b is paid with no balance, or is neither on nor made.
func DueAtSalon(b *Booking) (due Money, ok bool) {
	if b.PaidWith == nil || !(b.Status.Active() || b.Status == StatusCompleted) {
		return 0, false
	}
	return max(VisitPrice(b)-b.PaidWith.Covers-online(b), 0), true
}

// online is what the deposit of b pays online: owed, while b is pending;
// else held, what its payments hold.
func online(b *Booking) Money {
	if b.Status == StatusPending {
		return max(b.Held, b.Deposit)
	}
	return b.Held
}

// readPaidWith reads what visit b is paid with (PaidWith), and, when it
// is a balance, what its deposit's payments hold (Held), capping what a
// certificate covers at what the deposit online leaves of the visit's
// price: a booking moved to a cheaper master spends no more (the trigger
// that settles it releases the rest).
func readPaidWith(ctx context.Context, q querier, b *Booking) error {
	var err error
	if b.PaidWith, err = paidWith(ctx, q, b.visit()); err != nil || b.PaidWith == nil {
		return err
	}
	if err := q.QueryRow(ctx, `SELECT `+heldSQL+` FROM payment_sessions WHERE booking_id = $1`, b.visit()).Scan(&b.Held); err != nil {
		return fmt.Errorf("held: %w", err)
	}
	if p := b.PaidWith; p.Kind == BalanceCertificate {
		p.Covers = min(p.Covers, max(VisitPrice(b)-online(b), 0))
	}
	return nil
}

// Pays is what a certificate's reservation pays of a visit in status st,
// and what goes back to it when the visit is settled: once the visit was
// made or missed, what it spent; before, what it covers of the price
// (less than it reserved when the booking moved to a cheaper master: the
// rest goes back); a cancelled booking's, what it reserved (the
// cancellation's lines say what it kept). A package's: 0, 0.
func (p *PaidWith) Pays(st Status) (pays, back Money) {
	switch {
	case p.Kind != BalanceCertificate:
		return 0, 0
	case p.Settled && (st == StatusCompleted || st == StatusNoShow):
		return p.Amount - Money(p.Returned), 0
	case !p.Settled && p.Covers < p.Amount:
		return p.Covers, p.Amount - p.Covers
	}
	return p.Amount, 0
}

// UnitsIn is n of p's units in lang's words: visits of a package ("3
// визита"), money of a certificate (in currency).
func (p *PaidWith) UnitsIn(n int64, currency, lang string) string {
	if p.Kind == BalancePackage {
		return i18n.Visits(lang, n)
	}
	return Money(n).Format(currency, lang)
}

// normalize checks p's fields (p may be nil: nothing to pay with).
func (p *PayWith) normalize(fe fieldErrors) {
	if p == nil {
		return
	}
	p.Code = normalizeCode(p.Code)
	switch {
	case p.Kind != BalancePackage && p.Kind != BalanceCertificate && !(p.Kind == "" && p.Code != ""):
		fe.add("pay_with", "a package or a certificate")
	case p.Code == "" && p.BalanceID == 0:
		fe.add("pay_with", "give the code")
	case p.Code != "" && (len(p.Code) < 8 || len(p.Code) > 32):
		fe.add("pay_with", "no such package or certificate")
	case p.Code == "" && p.Kind == BalanceCertificate:
		fe.add("pay_with", "give the code")
	}
}

// fingerprint is p as an idempotent request's fingerprint has it.
func (p *PayWith) fingerprint() string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("\x00pay %s:%x:%d", p.Kind, tokenHash(p.Code), p.BalanceID)
}

// spendable is a balance as a booking reads it, before it reserves.
type spendable struct {
	found     bool
	id        int64
	kind      BalanceKind
	hint      string
	clientID  int64
	services  []int64
	remaining int64
	expires   *time.Time
	// vouched: the caller's chat identity belongs to the package's client.
	vouched bool
	// locked: its code was tried with too many phones today (errCodeLocked).
	locked  bool
	salonID int64
}

// queueSpendable queues the read of the balance p names at the salon;
// with lock, its row locked (the wait bounded by the transaction's
// lock_timeout), so what is left is current.
func queueSpendable(batch *pgx.Batch, salonID int64, p *PayWith, caller Caller, lock bool) *spendable {
	sp := &spendable{salonID: salonID}
	var hash []byte
	if p.Code != "" {
		hash = tokenHash(p.Code)
	}
	// By the code or by the id (one plan each, on its index); the chat
	// identity is looked up only for a chat that names a package by id.
	sql := `SELECT b.id, b.kind, b.code_hint, COALESCE(b.client_id, 0), b.service_ids, b.remaining, b.expires_on,
		COALESCE(b.code_locked_until > now(), false), `
	args := []any{salonID}
	if caller.kind == callerIdentity && hash == nil {
		sql += `EXISTS (SELECT 1 FROM client_identities i WHERE i.salon_id = b.salon_id AND i.client_id = b.client_id
		               AND i.channel = $3 AND i.external_id = $4)`
		args = append(args, string(caller.identity.Channel), caller.identity.ExternalID)
	} else {
		sql += `false`
	}
	if hash != nil {
		sql += ` FROM balances b WHERE b.salon_id = $1 AND b.code_hash = $2`
		args = slices.Insert(args, 1, any(hash))
	} else {
		sql += ` FROM balances b WHERE b.salon_id = $1 AND b.id = $2`
		args = slices.Insert(args, 1, any(p.BalanceID))
	}
	if lock {
		sql += ` FOR UPDATE OF b`
	}
	batch.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		// (Into pgx's own types: a booking pays for planning how each
		// column is scanned, and a named or a slice type is planned by
		// reflection.)
		var kind string
		var services pgtype.FlatArray[int64]
		var expires pgtype.Date
		for rows.Next() {
			sp.found = true
			if err := rows.Scan(&sp.id, &kind, &sp.hint, &sp.clientID, &services, &sp.remaining, &expires, &sp.locked, &sp.vouched); err != nil {
				return err
			}
			sp.kind, sp.services = BalanceKind(kind), services
			if expires.Valid {
				sp.expires = &expires.Time
			}
		}
		return rows.Err()
	})
	return sp
}

// payment is what a booking asks of a balance: its client, the services of
// its segments with their prices and deposits (what of the deposit a
// balance covers), whether each asks a deposit (asks: what a cancellation
// the policy keeps keeps of a package; nil: those with deposits), and its
// salon-local day.
type payment struct {
	clientID int64
	// proven: the caller's chat channel vouched that the booking's phone
	// (clientID's) is the caller's own: the chat is that client.
	proven   bool
	services []int64
	prices   []Money
	deposits []Money
	asks     []bool
	day      Date
}

// asking reports whether the service of segment i asks a deposit.
func (p *payment) asking(i int) bool {
	if p.asks != nil {
		return p.asks[i]
	}
	return p.deposits[i] > 0
}

// reservation is what a booking reserves of a balance: units (visits, or
// minor units), and how much of the booking's deposit that covers.
type reservation struct {
	balanceID int64
	kind      BalanceKind
	hint      string
	units     int64
	covers    Money // of the deposit
	pays      Money // of the price (PaidWith.Covers)
	// keeps is what a cancellation the salon's policy keeps spends of the
	// reservation (the rest is released): what a card would lose, the
	// deposit (of a certificate, the part paying it; of a package, the
	// visits of the services that ask one).
	keeps     int64
	actor     string
	remaining int64 // what the balance has left after the reservation
	until     Date  // the balance's last day (zero: no end)
}

// reserve decides what the booking reserves of sp, for the caller who
// names it with p: ErrInvalid (naming pay_with) when the balance is not
// found, is not the kind named, is another client's or is not the
// caller's to spend, or does not cover the services; ErrExhausted when
// nothing is left or it expired before the day.
func (sp *spendable) reserve(p *PayWith, caller Caller, pay payment) (*reservation, error) {
	switch {
	case !sp.found, sp.kind != p.Kind && p.Kind != "":
		return nil, Invalid("pay_with", "no such package or certificate")
	case p.Code == "" && !(caller.kind == callerStaff || caller.kind == callerSystem ||
		(caller.kind == callerIdentity && (sp.vouched || (pay.proven && pay.clientID != 0 && sp.clientID == pay.clientID)))):
		return nil, Invalid("pay_with", "give the code")
	case sp.kind == BalancePackage && p.Code != "" && caller.client() && sp.locked:
		return nil, errCodeLocked() // (whoever's phone it is)
	case sp.kind == BalancePackage && sp.clientID != pay.clientID && p.Code != "" && caller.client():
		return nil, &phoneMiss{balanceID: sp.id, salonID: sp.salonID} // (counted by the booking, under the code's lock)
	case sp.kind == BalancePackage && sp.clientID != pay.clientID:
		return nil, Invalid("pay_with", "this package is another client's")
	}
	if sp.expires != nil && DateOf(*sp.expires).Before(pay.day) {
		return nil, exhausted("valid until %s", DateOf(*sp.expires))
	}
	r := &reservation{balanceID: sp.id, kind: sp.kind, hint: sp.hint, actor: caller.auditName()}
	if sp.expires != nil {
		r.until = DateOf(*sp.expires)
	}
	if sp.kind == BalancePackage {
		// A visit of it for each service of the booking it is for, in
		// visit order, as many as it has left (the rest paid at the
		// salon).
		for i, id := range pay.services {
			if !slices.Contains(sp.services, id) || r.units >= sp.remaining {
				continue
			}
			r.units++
			r.covers += pay.deposits[i]
			r.pays += pay.prices[i]
			if pay.asking(i) {
				r.keeps++
			}
		}
		if r.units == 0 && !slices.ContainsFunc(pay.services, func(id int64) bool { return slices.Contains(sp.services, id) }) {
			return nil, Invalid("pay_with", "the package is not for this service")
		}
	} else {
		var price Money
		for _, p := range pay.prices {
			price += p
		}
		if price <= 0 {
			return nil, Invalid("pay_with", "there is nothing to pay")
		}
		r.units = min(sp.remaining, int64(price))
		r.pays = Money(r.units)
		var deposit Money
		for _, d := range pay.deposits {
			deposit += d
		}
		r.covers = min(Money(r.units), deposit)
		r.keep(r.covers)
	}
	if sp.remaining < r.units || r.units <= 0 {
		return nil, exhausted("nothing is left on it")
	}
	return r, nil
}

// keep sets what a cancellation the policy keeps keeps of certificate r
// when the booking asks deposit: as much of it as r holds (nothing when
// no deposit is asked). (A package's is counted as it is reserved.)
func (r *reservation) keep(deposit Money) {
	r.keeps = max(min(r.units, int64(deposit)), 0)
}

// paid is the reservation as the booking shows it.
func (r *reservation) paid() *PaidWith {
	if r == nil {
		return nil
	}
	out := &PaidWith{BalanceID: r.balanceID, Kind: r.kind, Hint: r.hint, Remaining: r.remaining, Keeps: r.keeps, ValidUntil: r.until,
		Covers: r.pays}
	if r.kind == BalancePackage {
		out.Visits = int(r.units)
	} else {
		out.Amount = Money(r.units)
	}
	return out
}

// errBalanceMoved says the balance read for a booking changed before its
// reservation (another booking reserved of it first): the booking, run
// again, reads it anew.
var errBalanceMoved = errors.New("the balance changed meanwhile")

// overdrawn reports the database refusing a reservation larger than what
// is left.
func overdrawn(err error) bool { return violated(err, "balances_remaining_check") }

// reserveSQL extends the statement of queueInsertBooking (the CTE b is
// the booking inserted) with the reservation's entry.
func reserveSQL(r *reservation, args map[string]any) string {
	args["bal"], args["units"], args["bal_keeps"], args["bal_actor"] = r.balanceID, r.units, r.keeps, r.actor
	return `, rsv AS (INSERT INTO balance_entries (balance_id, salon_id, type, delta, keeps, booking_id, actor)
		    SELECT @bal, @salon, 'reserve', -@units::bigint, @bal_keeps::bigint, id, @bal_actor FROM b RETURNING balance_after)`
}

// validOn refuses moving a booking paid with p (nil: none) to day, past
// the balance's last day.
func (p *PaidWith) validOn(day Date) error {
	if p != nil && !p.ValidUntil.IsZero() && p.ValidUntil.Before(day) {
		return Invalid("starts_at", "it is paid with a package or certificate valid until %s", p.ValidUntil)
	}
	return nil
}

// paidUntil refuses moving booking b (paid with a balance, or not) to day,
// past the balance's last day.
func paidUntil(ctx context.Context, q querier, b *Booking, day Date) error {
	p, err := paidWith(ctx, q, b.visit())
	if err != nil {
		return err
	}
	return p.live().validOn(day)
}

// paidWith reads what booking id reserved of a balance (nil for
// nothing), and, once settled, what was kept of it and given back.
func paidWith(ctx context.Context, q querier, id int64) (*PaidWith, error) {
	var p PaidWith
	var delta int64
	var expires *time.Time
	err := q.QueryRow(ctx, `SELECT b.id, b.kind, b.code_hint, e.delta, b.remaining, b.expires_on, e.keeps,
		    COALESCE(x.returned, 0), x.settled,
		    CASE WHEN b.kind = 'package' THEN COALESCE((SELECT sum(p.price) FROM (SELECT v.price FROM bookings v
		                                                 WHERE (v.id = e.booking_id OR v.visit_of = e.booking_id) AND v.service_id = ANY(b.service_ids)
		                                                 ORDER BY v.id LIMIT -e.delta) p), 0)
		         ELSE -e.delta / 100.0 END -- (numeric, as prices are: in major units; a certificate's capped by the view)
		FROM balance_entries e JOIN balances b ON b.id = e.balance_id
		LEFT JOIN LATERAL (SELECT sum(y.delta) FILTER (WHERE y.type = 'release') AS returned, count(*) > 0 AS settled FROM balance_entries y
		                   WHERE y.balance_id = e.balance_id AND y.booking_id = e.booking_id AND y.type IN ('spend', 'release')) x ON true
		WHERE e.booking_id = $1 AND e.type = 'reserve'
		ORDER BY e.id LIMIT 1`, id).Scan(&p.BalanceID, &p.Kind, &p.Hint, &delta, &p.Remaining, &expires, &p.Keeps, &p.Returned, &p.Settled, &p.Covers)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("paid with: %w", err)
	}
	if p.Kind == BalancePackage {
		p.Visits = int(-delta)
	} else {
		p.Amount = Money(-delta)
	}
	if expires != nil {
		p.ValidUntil = DateOf(*expires)
	}
	if p.Settled {
		p.Kept = -delta - p.Returned
	}
	return &p, nil
}

// live is p while the booking still holds it (nil: paid with nothing, or
// given back).
func (p *PaidWith) live() *PaidWith {
	if p == nil || p.Settled {
		return nil
	}
	return p
}

// ApplyBalance pays an active booking with a balance at the desk: staff of
// the salon reserve of it what the booking uses (a package's visit of one
// of its services, or a certificate's amount up to the booking's price
// less what was paid online); completing the visit spends it. A booking
// pays with one balance. Errors: ErrForbidden, ErrNotFound, ErrInvalid
// (pay_with), ErrExhausted, ErrConflict (not active, or paid with a
// balance already), ErrUnavailable.
func (s *Service) ApplyBalance(ctx context.Context, salonID, bookingID int64, p PayWith) (*Booking, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	fe := fieldErrors{}
	p.normalize(fe)
	if err := fe.err(); err != nil {
		return nil, err
	}
	var out *Booking
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		b, salon, err := lockBooking(ctx, tx, caller, salonID, bookingID)
		if err != nil {
			return err
		}
		if !b.Status.Active() {
			return conflict("booking %d is %s", b.ID, i18n.New(string(b.Status)))
		}
		if prior, err := paidWith(ctx, tx, b.ID); err != nil {
			return err
		} else if prior.live() != nil {
			return conflict("the booking is paid with a balance already")
		}
		if b.Status == StatusPending {
			// Its deposit is asked online: paying it in part here would
			// leave the client to pay the whole deposit there too.
			return conflict("the booking waits for its deposit online")
		}
		ss, err := lockSessions(ctx, tx, b.ID)
		if err != nil {
			return err
		}
		held := heldOf(ss)
		batch := &pgx.Batch{}
		sp := queueSpendable(batch, salonID, &p, caller, true)
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return fmt.Errorf("balance: %w", err)
		}
		if held > 0 && (p.Kind == BalancePackage || sp.kind == BalancePackage) {
			// The visit is paid in part already: a package's visit would
			// pay it twice.
			return conflict("a deposit was paid online for it: refund the deposit first")
		}
		// What is left to pay of each service: its price less what was
		// paid online, counted off the services in visit order (the
		// deposit is paid: nothing of it is covered).
		pay := payment{clientID: b.ClientID, day: salon.Today(b.StartsAt)}
		paid, segs := held, b.Segments
		if len(segs) == 0 {
			segs = []Booking{*b}
		}
		for _, sg := range segs {
			off := min(sg.Price, paid)
			paid -= off
			pay.services = append(pay.services, sg.ServiceID)
			pay.prices = append(pay.prices, sg.Price-off)
			pay.deposits = append(pay.deposits, 0)
		}
		if b.Deposit > 0 {
			// (Which of its services ask a deposit: a package's visits
			// of those are what a cancellation the policy keeps keeps.
			// None does now, though the visit asked one when booked:
			// the salon's deposits changed since, and each is kept.)
			if pay.asks, err = askingDeposits(ctx, tx, salonID, pay.services); err != nil {
				return err
			}
			if !slices.Contains(pay.asks, true) {
				for i := range pay.asks {
					pay.asks[i] = true
				}
			}
		} else {
			pay.asks = make([]bool, len(pay.services))
		}
		rsv, err := sp.reserve(&p, caller, pay)
		if err != nil {
			return err
		}
		if rsv.kind == BalanceCertificate {
			// A cancellation the policy keeps keeps the deposit the
			// booking asks, less what was paid of it online (a package
			// is refused then, above).
			rsv.keep(max(b.Deposit-held, 0))
		}
		if err := tx.QueryRow(ctx, `INSERT INTO balance_entries (balance_id, salon_id, type, delta, keeps, booking_id, actor)
			VALUES ($1, $2, 'reserve', -$3::bigint, $4, $5, $6) RETURNING balance_after`, rsv.balanceID, salonID, rsv.units, rsv.keeps, b.ID, rsv.actor).
			Scan(&rsv.remaining); err != nil {
			return fmt.Errorf("balance: %w", err)
		}
		// The visit changed (it is paid): views that follow its rows (the
		// day's grid) see it.
		if _, err := tx.Exec(ctx, `UPDATE bookings SET updated_at = now() WHERE salon_id = $1 AND (id = $2 OR visit_id = $2)`,
			salonID, b.ID); err != nil {
			return fmt.Errorf("balance: %w", err)
		}
		b.PaidWith, out = rsv.paid(), b
		if err := recordDeskPayment(ctx, tx, b, caller, rsv); err != nil {
			return err
		}
		// The client hears what it paid and what is left to pay.
		return s.enqueueChange(ctx, tx, b, EventPaidWithBalance, caller.actor(b), nil)
	})
	if err != nil {
		return nil, dbErr(err)
	}
	return out, nil
}

// askingDeposits reports, for each of services, whether the salon's
// service asks a deposit.
func askingDeposits(ctx context.Context, q querier, salonID int64, services []int64) ([]bool, error) {
	rows, err := q.Query(ctx, `SELECT s.deposit > 0 FROM unnest($2::bigint[]) WITH ORDINALITY AS x(id, n)
		LEFT JOIN services s ON s.salon_id = $1 AND s.id = x.id ORDER BY x.n`, salonID, services)
	if err != nil {
		return nil, fmt.Errorf("deposits: %w", err)
	}
	asks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (bool, error) {
		var ok *bool
		err := r.Scan(&ok)
		return ok != nil && *ok, err
	})
	if err != nil {
		return nil, fmt.Errorf("deposits: %w", err)
	}
	return asks, nil
}

// recordDeskPayment writes, beside the entry of booking b paid with rsv at
// the desk, the booking's history event (paid_with_balance: the kind, the
// code's hint and the units it paid) and the audit row of the balance's change
// (what it had left before and after), both under the caller's name.
func recordDeskPayment(ctx context.Context, tx pgx.Tx, b *Booking, caller Caller, rsv *reservation) error {
	actor := caller.actor(b)
	paid := map[string]any{"kind": rsv.kind, "code_hint": rsv.hint, "units": rsv.units} // (visits, or minor units)
	details, err := json.Marshal(actor.details(paid))
	if err != nil {
		return fmt.Errorf("balance: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO booking_events (salon_id, booking_id, action, actor_kind, actor_id, channel, details)
		VALUES ($1, $2, 'paid_with_balance', $3, $4, $5, $6)`, b.SalonID, b.ID, actor.Kind, actor.dbID(), actor.Channel, details); err != nil {
		return fmt.Errorf("balance: %w", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO audit_log (salon_id, actor, action, entity, entity_id, old, new)
		VALUES ($1, $2, 'paid_booking', 'balance', $3, jsonb_build_object('kind', $4::text, 'code_hint', $5::text, 'remaining', $6::bigint),
		        jsonb_build_object('kind', $4::text, 'code_hint', $5::text, 'remaining', $7::bigint, 'booking', $8::bigint))`,
		b.SalonID, cmpOr(caller.auditName(), "system"), rsv.balanceID, rsv.kind, rsv.hint, rsv.remaining+rsv.units, rsv.remaining, b.ID)
	if err != nil {
		return fmt.Errorf("balance: audit: %w", err)
	}
	return nil
}

// RefundBalance pays back what is left of a balance (staff of the salon):
// a refund entry of everything not reserved by a booking, with the reason.
// What was paid in the salon is paid back there; what was sold online
// goes back through the provider (a part of its own when the sale was
// refunded before). Errors: ErrForbidden, ErrNotFound, ErrConflict
// (nothing left, or a refund of its sale still on its way),
// ErrUnavailable.
func (s *Service) RefundBalance(ctx context.Context, salonID, balanceID int64, reason string) (*Balance, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	fe := fieldErrors{}
	reason = cleanText(fe, "reason", reason, MaxReasonLen, multiLine, false)
	if err := fe.err(); err != nil {
		return nil, err
	}
	actor := callerOf(ctx).auditName()
	if reason != "" {
		actor += ": " + reason
	}
	var out *Balance
	var sale int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		b, err := scanBalance(tx.QueryRow(ctx, `SELECT `+balanceColumns+` FROM balances WHERE salon_id = $1 AND id = $2 FOR UPDATE`,
			salonID, balanceID))
		if isNoRows(err) {
			return fmt.Errorf("balance %d: %w", balanceID, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("balance %d: %w", balanceID, err)
		}
		if b.Remaining == 0 {
			return conflict("nothing is left on it")
		}
		// Sold in the salon for a price: what the desk pays back, as the
		// quote said, from what is current under the row's lock.
		var price, gone, held int64
		if err := tx.QueryRow(ctx, `SELECT COALESCE((SELECT price FROM balance_prices WHERE balance_id = $1), 0),
			    (SELECT COALESCE(-sum(delta), 0) FROM balance_entries WHERE balance_id = $1 AND type = 'refund'),
			    (SELECT COALESCE(sum(units), 0) FROM balance_holds WHERE balance_id = $1)`, b.ID).Scan(&price, &gone, &held); err != nil {
			return fmt.Errorf("balance %d: refund: %w", balanceID, err)
		}
		var paidBack int64
		if price > 0 {
			paidBack = deskRefund(price, b.Total, b.Remaining, gone, held)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO balance_entries (balance_id, salon_id, type, delta, actor, paid_back)
			VALUES ($1, $2, 'refund', $3, $4, NULLIF($5, 0))`, b.ID, salonID, -b.Remaining, actor, paidBack); err != nil {
			return fmt.Errorf("balance %d: refund: %w", balanceID, err)
		}
		// The audit log's row of the act (the ledger's entry is the money's).
		if who := callerOf(ctx).auditName(); who != "" {
			if _, err := tx.Exec(ctx, `INSERT INTO audit_log (salon_id, actor, action, entity, entity_id, old, new)
				VALUES ($1, $2, 'refund', 'balance', $3, jsonb_build_object('kind', $6::text, 'code_hint', $7::text, 'remaining', $4::bigint),
				        jsonb_build_object('kind', $6::text, 'code_hint', $7::text, 'remaining', 0)
				        || CASE WHEN $5 = '' THEN '{}' ELSE jsonb_build_object('reason', $5::text) END
				        || CASE WHEN $8 = 0 THEN '{}' ELSE jsonb_build_object('paid_back', $8::bigint) END)`,
				salonID, who, b.ID, b.Remaining, reason, b.Kind, b.Hint, paidBack); err != nil {
				return fmt.Errorf("balance %d: refund: audit: %w", balanceID, err)
			}
		}
		// Sold online: the money goes back through the provider.
		if sale, _, err = refundSaleOf(ctx, tx, b, s.now()); err != nil {
			return fmt.Errorf("balance %d: refund: %w", balanceID, err)
		}
		b.Remaining, out = 0, b
		return nil
	})
	if err != nil {
		return nil, dbErr(err)
	}
	if sale != 0 && s.psp != nil && providerCallsAllowed(ctx) {
		if _, err := s.checkSale(ctx, sale); err != nil {
			s.log.Warn("balance refund: the provider's refund is left to the sweep", "sale", sale, "err", err)
		}
	}
	return out, nil
}

// RefundQuote is what refunding what is left of a balance would do.
type RefundQuote struct {
	Left int64 // what is refunded (visits, or minor units)
	// Online: sold online, the money goes back to the buyer's card
	// through the provider: Money (0: the refunds before it paid it).
	// Sold in the salon for a price the desk gave, Money is what the desk
	// pays back (the share of the price of what is left; 0: no price).
	Online bool
	Money  Money
	// Waiting: a refund of it is on its way at the provider; no other is
	// made until it is (RefundBalance refuses), and Money is not known.
	Waiting bool
	// Held is what live bookings hold of it (not refunded now: given back
	// when they are cancelled, then refundable); HeldBy those bookings.
	Held   int64
	HeldBy []int64
}

// BalanceRefundQuote says what RefundBalance would do now (staff of the
// salon). Errors: ErrForbidden, ErrNotFound.
func (s *Service) BalanceRefundQuote(ctx context.Context, salonID, balanceID int64) (*RefundQuote, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	var q RefundQuote
	var price, units, refunded, gone *int64
	var status *PaymentStatus
	var used saleUse
	var deskPrice, total int64
	err := s.pool.QueryRow(ctx, `SELECT b.remaining, s.price, s.units, s.refunded, s.status,
		    (SELECT COALESCE(-sum(delta), 0) FROM balance_entries WHERE balance_id = b.id AND type = 'refund'),
		    COALESCE(h.ids, '{}'), COALESCE(h.units, 0), u.*,
		    COALESCE((SELECT p.price FROM balance_prices p WHERE p.balance_id = b.id), 0), b.total
		FROM balances b LEFT JOIN balance_sales s ON s.balance_id = b.id
		CROSS JOIN LATERAL (SELECT array_agg(h.booking_id ORDER BY h.booking_id) AS ids, sum(h.units) AS units
		                    FROM balance_holds h WHERE h.balance_id = b.id) h
		CROSS JOIN LATERAL (SELECT `+saleUseSQL("s.id")+`) u
		WHERE b.salon_id = $1 AND b.id = $2`, salonID, balanceID).Scan(&q.Left, &price, &units, &refunded, &status, &gone, &q.HeldBy, &q.Held,
		&used.spent, &used.settled, &used.priced, &deskPrice, &total)
	if isNoRows(err) {
		return nil, fmt.Errorf("balance %d: %w", balanceID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("balance %d: %w", balanceID, dbErr(err))
	}
	switch {
	case price == nil && deskPrice > 0:
		q.Money = Money(deskRefund(deskPrice, total, q.Left, *gone, q.Held))
	case price == nil:
	case *status == PayRefunding:
		// (Its refund entry is written, the money of it not yet made.)
		q.Online, q.Waiting = true, true
	default:
		q.Online = true
		q.Money = Money(max(saleRefundShare(*price, *units, *refunded, *gone+q.Left, used), 0))
	}
	return &q, nil
}

// deskShare is the share of price, paid in the salon for total units, of
// gone of them.
func deskShare(price, total, gone int64) int64 {
	if total <= 0 {
		return 0
	}
	return price * min(gone, total) / total
}

// deskRefund is what refunding left units of a balance sold in the salon
// for price (total units; gone refunded before, held by live bookings)
// pays back: the share of the price of every unit refunded, this
// refund's with those before, less what those paid back; or, when it
// leaves nothing unused (nothing held), the rest of the price less the
// share of what was spent, so that what was kept and what went back add
// up to the price (a package of 3 for 10000.00, one visit used: 6666.67).
func deskRefund(price, total, left, gone, held int64) int64 {
	if held == 0 {
		spent := max(total-left-gone, 0)
		return max(price-deskShare(price, total, spent)-deskShare(price, total, gone), 0)
	}
	return deskShare(price, total, gone+left) - deskShare(price, total, gone)
}

// ClientBalances returns the client's packages with visits left that can
// pay a visit on day of any of services (staff of the salon): good until
// at least that day, for one of those services, soonest to end first;
// what the desk may pay that visit with.
func (s *Service) ClientBalances(ctx context.Context, salonID, clientID int64, day Date, services []int64) ([]Balance, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+balanceColumns+` FROM balances
		WHERE salon_id = $1 AND client_id = $2 AND kind = 'package' AND remaining > 0 AND (expires_on IS NULL OR expires_on >= $3)
		  AND service_ids && $4::bigint[]
		ORDER BY expires_on NULLS LAST, id LIMIT 20`, salonID, clientID, day.dbDate(), services)
	if err != nil {
		return nil, fmt.Errorf("client balances: %w", dbErr(err))
	}
	return collectBalances(rows)
}

// OwnBalances returns the packages with visits left, good until at least
// today, of the client the asking chat identity is proven to be at the
// salon, and of the client whose phone the chat proved in this dialog
// (proven: a contact of its own it shared, "" none) though it never
// booked with it yet: what the chat may book with, by their ids (booking
// with that phone, proven). Only a chat identity asks (ErrForbidden).
func (s *Service) OwnBalances(ctx context.Context, salonID int64, proven string) ([]Balance, error) {
	id, err := chatIdentity(ctx)
	if err != nil {
		return nil, err
	}
	c, err := s.catalogAt(ctx, s.pool, salonID, 0)
	if err != nil {
		return nil, err
	}
	today := c.salon.Today(s.now()).dbDate()
	var phone *string // (none: NULL, which no phone equals)
	if proven != "" {
		phone = &proven
	}
	rows, err := s.pool.Query(ctx, `SELECT b.id, b.salon_id, b.kind, b.code_hint, COALESCE(b.client_id, 0), b.service_ids, b.total,
		    b.remaining, b.expires_on, b.created_at FROM balances b
		WHERE b.salon_id = $1 AND b.kind = 'package' AND b.remaining > 0 AND (b.expires_on IS NULL OR b.expires_on >= $4)
		  AND b.client_id IN (SELECT i.client_id FROM client_identities i WHERE i.salon_id = $1 AND i.channel = $2 AND i.external_id = $3
		                      UNION ALL SELECT c.id FROM clients c WHERE c.salon_id = $1 AND c.phone = $5)
		ORDER BY b.expires_on NULLS LAST, b.id LIMIT 10`, salonID, id.Channel, id.ExternalID, today, phone)
	if err != nil {
		return nil, fmt.Errorf("own balances: %w", dbErr(err))
	}
	return collectBalances(rows)
}

// collectBalances reads balances (their balanceColumns) from rows.
func collectBalances(rows pgx.Rows) ([]Balance, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Balance, error) {
		b, err := scanBalance(r)
		if err != nil {
			return Balance{}, err
		}
		return *b, nil
	})
}
