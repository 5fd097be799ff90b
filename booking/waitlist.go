package booking

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// The waitlist: a client waits for a time of a service (with a master, or
// any), within a range of days and, optionally, times of day. Time that
// frees (a cancellation, an expired hold) is written, in the same
// transaction, to waitlist_freed; OfferFreed, run by whichever replica
// claims it, offers it to the matching entries in the order they joined.
// In the salon's broadcast mode up to waitlist_broadcast_n entries get an
// open offer, the time not held: the first to accept books it under the
// master's lock, like any booking, and the others' offers are gone.

// Waitlist entry statuses.
const (
	WaitWaiting = "waiting"
	WaitBooked  = "booked"
	WaitLeft    = "left"
)

// Offer statuses.
const (
	OfferOpen    = "open"
	OfferHeld    = "held"
	OfferTaken   = "taken"
	OfferGone    = "gone"
	OfferExpired = "expired"
)

// TimeWindow is a salon-local part of the day, [From, To).
type TimeWindow struct{ From, To Clock }

// WaitRequest asks to join a salon's waitlist.
type WaitRequest struct {
	SalonID   int64
	ServiceID int64
	MasterID  int64 // 0: any master who does the service
	From, To  Date  // the days, salon-local, inclusive
	Times     []TimeWindow
	Client    ClientInput
}

// WaitEntry is a client's place on a waitlist, with the offers made to it.
type WaitEntry struct {
	ID        int64
	SalonID   int64
	ClientID  int64
	ServiceID int64
	MasterID  int64
	From, To  Date
	Times     []TimeWindow
	Status    string
	BookingID int64
	CreatedAt time.Time
	Offers    []WaitOffer
	// ManageToken is returned by JoinWaitlist only: it sees, leaves and
	// accepts offers.
	ManageToken string
}

// WaitOffer is a freed time offered to a waitlist entry.
type WaitOffer struct {
	ID        int64
	MasterID  int64
	Start     time.Time
	End       time.Time
	Status    string
	ExpiresAt time.Time
}

// MaxWaitDays is the longest range of days one entry waits for.
const MaxWaitDays = 62

// JoinWaitlist puts the client on the salon's waitlist. Clients (a widget
// visitor, a chat identity) and staff may; the client is found or created
// by phone. Errors: ErrForbidden, ErrNotFound (salon), ErrInvalid.
func (s *Service) JoinWaitlist(ctx context.Context, r WaitRequest) (*WaitEntry, error) {
	caller := callerOf(ctx)
	if err := caller.check(); err != nil {
		return nil, err
	}
	switch caller.kind {
	case callerVisitor, callerIdentity, callerSystem:
	case callerStaff:
		if caller.user.SalonID != r.SalonID {
			return nil, fmt.Errorf("salon %d: %w", r.SalonID, ErrNotFound)
		}
	default:
		return nil, fmt.Errorf("this caller cannot join a waitlist: %w", ErrForbidden)
	}
	c, err := s.currentCatalog(ctx, r.SalonID)
	if err != nil {
		return nil, err
	}
	fe := fieldErrors{}
	r.Client.normalize(fe, "client.", c.salon.Country)
	switch {
	case r.From.IsZero():
		fe.add("from_date", "required")
	case r.To.IsZero():
		fe.add("to_date", "required")
	case r.To.Before(r.From):
		fe.add("to_date", "must not be before from_date")
	case r.From.AddDays(MaxWaitDays).Before(r.To):
		fe.add("to_date", "at most %d days after from_date", MaxWaitDays)
	case r.To.Before(c.salon.Today(s.now())):
		fe.add("to_date", "is in the past")
	}
	for i, w := range r.Times {
		if w.From >= w.To {
			fe.add(fmt.Sprintf("times[%d].to", i), "must be after from")
		}
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	if err := checkItems(c, []VisitItem{{ServiceID: r.ServiceID, MasterID: r.MasterID}}); err != nil {
		return nil, err
	}
	times, _ := json.Marshal(r.Times)
	token := newToken()
	e := &WaitEntry{SalonID: r.SalonID, ServiceID: r.ServiceID, MasterID: r.MasterID, From: r.From, To: r.To, Times: r.Times,
		Status: WaitWaiting, ManageToken: token}
	var master *int64
	if r.MasterID != 0 {
		master = &r.MasterID
	}
	err = s.pool.QueryRow(ctx, `
		WITH c AS (
		    INSERT INTO clients (salon_id, name, phone) VALUES ($1, $2, $3)
		    ON CONFLICT (salon_id, phone) WHERE phone IS NOT NULL DO UPDATE SET
		        name = CASE WHEN clients.name = '' THEN EXCLUDED.name ELSE clients.name END
		    RETURNING id
		)
		INSERT INTO waitlist_entries (salon_id, client_id, service_id, master_id, from_date, to_date, times, manage_token_hash,
		                              contact_name, contact_email, lang)
		SELECT $1, c.id, $4, $5, $6, $7, $8, $9, $2, $10, $11 FROM c
		RETURNING id, client_id, created_at`, r.SalonID, r.Client.Name, r.Client.Phone, r.ServiceID, master, r.From.dbDate(), r.To.dbDate(),
		times, tokenHash(token), r.Client.Email, r.Client.Lang).Scan(&e.ID, &e.ClientID, &e.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("join waitlist: %w", dbErr(err))
	}
	return e, nil
}

// WaitlistEntry returns an entry with its offers, for the holder of its
// manage token (ByToken), staff of its salon or the system.
// Errors: ErrNotFound (no such entry, or not the caller's), ErrForbidden.
func (s *Service) WaitlistEntry(ctx context.Context, id int64) (*WaitEntry, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	return s.entry(ctx, s.pool, caller, id, "")
}

// entry reads an entry the caller may see (lock: "" or a locking clause).
func (s *Service) entry(ctx context.Context, q querier, caller Caller, id int64, lock string) (*WaitEntry, error) {
	var e WaitEntry
	var master, booking *int64
	var hash, times []byte
	var from, to time.Time
	err := q.QueryRow(ctx, `SELECT id, salon_id, client_id, service_id, master_id, from_date, to_date, times, status, booking_id,
		created_at, manage_token_hash FROM waitlist_entries WHERE id = $1 `+lock, id).
		Scan(&e.ID, &e.SalonID, &e.ClientID, &e.ServiceID, &master, &from, &to, &times, &e.Status, &booking, &e.CreatedAt, &hash)
	if isNoRows(err) {
		return nil, fmt.Errorf("waitlist entry %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("waitlist entry %d: %w", id, dbErr(err))
	}
	ok := false
	switch caller.kind {
	case callerSystem:
		ok = true
	case callerStaff:
		ok = caller.user.SalonID == e.SalonID
	case callerToken:
		ok = subtle.ConstantTimeCompare(hash, tokenHash(caller.token)) == 1
	}
	if !ok {
		return nil, fmt.Errorf("waitlist entry %d: %w", id, ErrNotFound)
	}
	if master != nil {
		e.MasterID = *master
	}
	if booking != nil {
		e.BookingID = *booking
	}
	e.From, e.To = DateOf(from), DateOf(to)
	_ = json.Unmarshal(times, &e.Times)
	rows, err := q.Query(ctx, `SELECT id, master_id, starts_at, ends_at, status, COALESCE(expires_at, 'epoch')
		FROM waitlist_offers WHERE entry_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("waitlist entry %d: %w", id, dbErr(err))
	}
	e.Offers, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (WaitOffer, error) {
		var o WaitOffer
		err := r.Scan(&o.ID, &o.MasterID, &o.Start, &o.End, &o.Status, &o.ExpiresAt)
		if o.ExpiresAt.Unix() == 0 {
			o.ExpiresAt = time.Time{}
		}
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("waitlist entry %d: %w", id, dbErr(err))
	}
	return &e, nil
}

// LeaveWaitlist takes an entry off its waitlist: it is offered nothing
// more, and its open offers are gone. Leaving again changes nothing.
// Errors: ErrNotFound, ErrForbidden.
func (s *Service) LeaveWaitlist(ctx context.Context, id int64) (*WaitEntry, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		e, err := s.entry(ctx, tx, caller, id, "FOR UPDATE")
		if err != nil {
			return err
		}
		if e.Status != WaitWaiting {
			return nil
		}
		_, err = tx.Exec(ctx, `WITH e AS (UPDATE waitlist_entries SET status = 'left', updated_at = now() WHERE id = $1)
			UPDATE waitlist_offers SET status = 'gone' WHERE entry_id = $1 AND status = 'open'`, id)
		return err
	})
	if err != nil {
		return nil, dbErr(err)
	}
	return s.entry(ctx, s.pool, caller, id, "")
}

// OfferFreed offers the time freed since the last run to the waitlists,
// and returns how many offers it made. Replicas may run it at once: each
// freed time is claimed by one of them (SKIP LOCKED), and an entry is
// offered a time once (a unique key). Only the platform asks.
func (s *Service) OfferFreed(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	n := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		n = 0
		type freed struct {
			salon, master int64
			start, end    time.Time
		}
		rows, err := tx.Query(ctx, `DELETE FROM waitlist_freed WHERE id IN (
			SELECT id FROM waitlist_freed ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED)
			RETURNING salon_id, master_id, starts_at, ends_at`)
		if err != nil {
			return fmt.Errorf("offer freed: %w", err)
		}
		list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (freed, error) {
			var f freed
			err := r.Scan(&f.salon, &f.master, &f.start, &f.end)
			return f, err
		})
		if err != nil {
			return fmt.Errorf("offer freed: %w", err)
		}
		now := s.now()
		for _, f := range list {
			made, err := s.offer(ctx, tx, f.salon, f.master, f.start, now)
			if err != nil {
				return err
			}
			n += made
		}
		return nil
	})
	return n, err
}

// offer offers the time of master from start, as the calendar is now, to
// the salon's waiting entries that want it, in the order they joined:
// those whose service the master does and fits there, whose days and
// times hold it, up to the salon's broadcast number.
func (s *Service) offer(ctx context.Context, tx pgx.Tx, salonID, master int64, start, now time.Time) (int, error) {
	c, err := s.currentCatalog(ctx, salonID)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return 0, nil
		}
		return 0, err
	}
	var limit int
	if err := tx.QueryRow(ctx, `SELECT waitlist_broadcast_n FROM salons WHERE id = $1`, salonID).Scan(&limit); err != nil {
		return 0, fmt.Errorf("offer: %w", err)
	}
	loc := c.salon.Location()
	local := start.In(loc)
	day := DateOf(local)
	rows, err := tx.Query(ctx, `SELECT id, service_id, times FROM waitlist_entries
		WHERE salon_id = $1 AND status = 'waiting' AND (master_id IS NULL OR master_id = $2)
		  AND from_date <= $3 AND to_date >= $3
		ORDER BY id`, salonID, master, day.dbDate())
	if err != nil {
		return 0, fmt.Errorf("offer: %w", err)
	}
	type want struct {
		id, service int64
		times       []TimeWindow
	}
	wants, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (want, error) {
		var w want
		var times []byte
		err := r.Scan(&w.id, &w.service, &times)
		_ = json.Unmarshal(times, &w.times)
		return w, err
	})
	if err != nil {
		return 0, fmt.Errorf("offer: %w", err)
	}
	if len(wants) == 0 {
		return 0, nil
	}
	rl := rules(&c.salon, &SalonService{}, offerTerms{}, now)
	if start.Before(rl.earliest) || !start.Before(rl.latest) {
		return 0, nil // too soon (the salon's notice) or past the horizon
	}
	p, err := readPlanner(ctx, tx, c, []int64{master}, window{start, start.Add(time.Minute)}, 0, false)
	if err != nil {
		return 0, err
	}
	minute := Clock(local.Hour()*60 + local.Minute())
	made := 0
	for _, w := range wants {
		if made >= limit {
			break
		}
		if len(w.times) > 0 && !slices.ContainsFunc(w.times, func(t TimeWindow) bool { return minute >= t.From && minute < t.To }) {
			continue
		}
		plan := p.place([]VisitItem{{ServiceID: w.service, MasterID: master}}, start)
		if plan == nil {
			continue // the service does not fit there (or the time is taken again)
		}
		tag, err := tx.Exec(ctx, `INSERT INTO waitlist_offers (salon_id, entry_id, master_id, starts_at, ends_at, status)
			VALUES ($1, $2, $3, $4, $5, 'open') ON CONFLICT DO NOTHING`, salonID, w.id, master, start, plan[0].t.end(start))
		if err != nil {
			return 0, fmt.Errorf("offer: %w", err)
		}
		made += int(tag.RowsAffected())
	}
	return made, nil
}

// AcceptOffer books an offer for its entry's client, for the holder of the
// entry's manage token: under the master's lock, like any booking. The
// first to accept a time gets it; the others' offers of it are gone, and
// they stay on the list. Errors: ErrNotFound, ErrConflict (the offer or
// the entry is no longer open), *SlotTakenError (the time is taken: the
// nearest free times), and Book's.
func (s *Service) AcceptOffer(ctx context.Context, entryID, offerID int64) (*Booking, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	e, err := s.entry(ctx, s.pool, caller, entryID, "")
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(e.Offers, func(o WaitOffer) bool { return o.ID == offerID })
	if i < 0 {
		return nil, fmt.Errorf("offer %d: %w", offerID, ErrNotFound)
	}
	o := e.Offers[i]
	if e.Status != WaitWaiting || o.Status != OfferOpen {
		return nil, conflict("this offer is no longer open")
	}
	var name, phone, email, lang string
	if err := s.pool.QueryRow(ctx, `SELECT c.name, COALESCE(c.phone, ''), w.contact_email, w.lang FROM waitlist_entries w
		JOIN clients c ON c.id = w.client_id WHERE w.id = $1`, entryID).Scan(&name, &phone, &email, &lang); err != nil {
		return nil, fmt.Errorf("accept offer: %w", dbErr(err))
	}
	b, err := s.Book(As(ctx, Visitor()), BookRequest{SalonID: e.SalonID, ServiceID: e.ServiceID, MasterID: o.MasterID, StartsAt: o.Start,
		Client: ClientInput{Name: name, Phone: phone, Email: email, Lang: lang}, IdempotencyKey: fmt.Sprintf("waitlist-offer-%d", offerID)})
	if errors.Is(err, ErrSlotTaken) {
		if _, gerr := s.pool.Exec(ctx, `UPDATE waitlist_offers SET status = 'gone' WHERE id = $1 AND status = 'open'`, offerID); gerr != nil {
			return nil, fmt.Errorf("accept offer: %w", dbErr(gerr))
		}
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if _, err := s.pool.Exec(ctx, `
		WITH t AS (UPDATE waitlist_offers SET status = 'taken', booking_id = $3 WHERE id = $2),
		     e AS (UPDATE waitlist_entries SET status = 'booked', booking_id = $3, updated_at = now() WHERE id = $1),
		     g AS (UPDATE waitlist_offers SET status = 'gone' WHERE entry_id = $1 AND id <> $2 AND status = 'open')
		UPDATE waitlist_offers SET status = 'gone'
		WHERE salon_id = $4 AND master_id = $5 AND starts_at = $6 AND id <> $2 AND status = 'open'`,
		entryID, offerID, b.ID, e.SalonID, o.MasterID, o.Start); err != nil {
		return nil, fmt.Errorf("accept offer: %w", dbErr(err))
	}
	return b, nil
}
