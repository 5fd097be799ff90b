package booking

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"salon/i18n"
)

// The waitlist: a client waits for a time of a service or a visit (with a
// master, or any), within a range of days and, optionally, times of day.
// Time that frees (a cancellation, an expired hold, a move, a longer
// shift) is written, in the transaction that frees it, to waitlist_freed;
// OfferFreed, run by whichever replica claims each row (the one that freed
// it, at once; the others' senders as a sweep), offers it to the matching
// entries in the order they joined, as the calendar is then, by the
// salon's mode:
//
//   - broadcast: up to waitlist_broadcast_n entries get an open offer, the
//     time not held: the first to accept books it under the master's lock,
//     like any booking, and the others' offers are gone;
//   - hold: the first in line gets the time held for them (a pending
//     booking, inside the exclusion constraint like every booking, for the
//     salon's waitlist_offer_min); if they do not take it, ExpireHolds
//     releases it, which frees it again, for the next in line.
//
// Each offer is told to its client on their channels (a waitlist_offer
// message, made from the offer as it is when it goes: dropped when the
// time is gone), with a link or a button that takes it.

// Waitlist entry statuses.
const (
	WaitWaiting = "waiting"
	WaitBooked  = "booked"
	WaitLeft    = "left"
	WaitEnded   = "ended" // its days are over
)

// Waitlist modes (a salon's waitlist_mode).
const (
	WaitlistBroadcast = "broadcast"
	WaitlistHold      = "hold"
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
	// Items, instead of ServiceID and MasterID, waits for a visit of
	// several services (in visit order).
	Items    []VisitItem
	From, To Date // the days, salon-local, inclusive
	Times    []TimeWindow
	Client   ClientInput
	Source   Source // zero: the caller's own front end
}

// WaitEntry is a client's place on a waitlist, with the offers made to it.
type WaitEntry struct {
	ID        int64
	SalonID   int64
	ClientID  int64
	ServiceID int64 // the first service's (Items[0])
	MasterID  int64 // the first service's master (0: any)
	Items     []VisitItem
	From, To  Date
	Times     []TimeWindow
	Status    string
	Source    Source
	BookingID int64
	CreatedAt time.Time
	Offers    []WaitOffer
	// ManageToken is returned by JoinWaitlist only: it sees, leaves and
	// accepts offers.
	ManageToken string
	origin      Identity
	contact     ClientInput // name, e-mail and language given when joining, the client's phone
}

// WaitOffer is a freed time offered to a waitlist entry.
type WaitOffer struct {
	ID        int64
	EntryID   int64
	MasterID  int64
	Start     time.Time
	End       time.Time
	Status    string
	BookingID int64 // a held offer's hold; a taken one's booking
	ExpiresAt time.Time
}

// Waitlist bounds.
const (
	MaxWaitDays    = 62 // the longest range of days one entry waits for
	MaxWaitEntries = 10 // waiting entries of one client at one salon
	maxWaitTimes   = 8  // windows of the day of one entry
)

// JoinWaitlist puts the client on the salon's waitlist. Clients (a widget
// visitor, a chat identity) and staff may; the client is found or created
// by phone. Errors: ErrForbidden, ErrNotFound (salon), ErrInvalid.
func (s *Service) JoinWaitlist(ctx context.Context, r WaitRequest) (*WaitEntry, error) {
	caller := callerOf(ctx)
	if err := caller.check(); err != nil {
		return nil, err
	}
	implied := map[callerKind]Source{callerVisitor: SourceWidget, callerIdentity: SourceBot, callerStaff: SourcePanel,
		callerSystem: SourcePanel}[caller.kind]
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
		fe.add("to_date", "this date has passed")
	case caller.client() && !r.From.Before(c.salon.Today(s.now()).AddDays(c.salon.HorizonDays)):
		// Nothing could be offered to it for months: clients wait for
		// days they could book (staff may note a caller's wish further on).
		fe.add("from_date", "too far ahead: book within %d days", c.salon.HorizonDays)
	}
	if len(r.Times) > maxWaitTimes {
		fe.add("times", "at most %d windows", maxWaitTimes)
	}
	for i, w := range r.Times {
		if w.From >= w.To || w.To > 24*60 {
			fe.add(fmt.Sprintf("times[%d].to", i), "must be after from")
		}
	}
	items := r.Items
	switch {
	case len(items) > 0 && (r.ServiceID != 0 || r.MasterID != 0):
		fe.add("items", "give either service_id and master_id or items")
	case len(items) == 0:
		items = []VisitItem{{ServiceID: r.ServiceID, MasterID: r.MasterID}}
	}
	switch {
	case r.Source == "":
		r.Source = implied
	case r.Source != implied && caller.client():
		fe.add("source", "not a source for this caller")
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	if err := checkItems(c, items); err != nil {
		if len(r.Items) == 0 {
			// A single service's fields are named as they were given.
			var ve *ValidationError
			if errors.As(err, &ve) {
				for f, why := range ve.Fields {
					if short := strings.TrimPrefix(f, "items[0]."); short != f {
						delete(ve.Fields, f)
						ve.Fields[short] = why
					}
				}
			}
		}
		return nil, err
	}
	times, _ := json.Marshal(r.Times)
	itemsJSON, _ := json.Marshal(waitItems(items))
	token := newToken()
	e := &WaitEntry{SalonID: r.SalonID, ServiceID: items[0].ServiceID, MasterID: items[0].MasterID, Items: items, From: r.From, To: r.To,
		Times: r.Times, Status: WaitWaiting, Source: r.Source, ManageToken: token}
	var master *int64
	if items[0].MasterID != 0 {
		master = &items[0].MasterID
	}
	var dbFrom, dbTo time.Time
	var originCh, originRef *string
	if caller.kind == callerIdentity {
		ch, ref := string(caller.identity.Channel), caller.identity.ExternalID
		originCh, originRef = &ch, &ref
		e.origin = caller.identity
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		if e.ClientID, err = clientByPhone(ctx, tx, r.SalonID, r.Client); err != nil {
			return err
		}
		// The same client waiting for the same already (a second tap, the
		// form sent again, another device): one place on the list, its days
		// joined, the latest hours and contact, and a new manage token.
		err = tx.QueryRow(ctx, `UPDATE waitlist_entries SET from_date = least(from_date, $5), to_date = greatest(to_date, $6),
			    times = $7, manage_token_hash = $8, contact_name = $9, contact_email = $10, lang = $11, updated_at = now()
			WHERE id = (SELECT id FROM waitlist_entries WHERE salon_id = $1 AND client_id = $2 AND status = 'waiting'
			            AND service_id = $3 AND master_id IS NOT DISTINCT FROM $4 AND items = $12
			            AND from_date <= $6 AND to_date >= $5 ORDER BY id LIMIT 1 FOR UPDATE)
			RETURNING id, created_at, from_date, to_date`, r.SalonID, e.ClientID, items[0].ServiceID, master, r.From.dbDate(), r.To.dbDate(),
			times, tokenHash(token), r.Client.Name, r.Client.Email, r.Client.Lang, itemsJSON).Scan(&e.ID, &e.CreatedAt, &dbFrom, &dbTo)
		if !isNoRows(err) {
			return err
		}
		return tx.QueryRow(ctx, `
			INSERT INTO waitlist_entries (salon_id, client_id, service_id, master_id, from_date, to_date, times, manage_token_hash,
			                              contact_name, contact_email, lang, source, items, origin_channel, origin_ref)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15
			WHERE (SELECT count(*) FROM waitlist_entries w WHERE w.salon_id = $1 AND w.client_id = $2 AND w.status = 'waiting') < $16
			RETURNING id, created_at, from_date, to_date`, r.SalonID, e.ClientID, items[0].ServiceID, master, r.From.dbDate(), r.To.dbDate(),
			times, tokenHash(token), r.Client.Name, r.Client.Email, r.Client.Lang, r.Source, itemsJSON, originCh, originRef,
			MaxWaitEntries).Scan(&e.ID, &e.CreatedAt, &dbFrom, &dbTo)
	})
	if isNoRows(err) {
		return nil, Invalid("client.phone", "already waits on %d lists here: leave one first", MaxWaitEntries)
	}
	if err != nil {
		return nil, fmt.Errorf("join waitlist: %w", dbErr(err))
	}
	e.From, e.To = DateOf(dbFrom), DateOf(dbTo)
	return e, nil
}

// waitItem is a visit item as an entry stores it.
type waitItem struct {
	Service int64 `json:"service_id"`
	Master  int64 `json:"master_id,omitempty"`
}

func waitItems(items []VisitItem) []waitItem {
	out := make([]waitItem, len(items))
	for i, it := range items {
		out[i] = waitItem{it.ServiceID, it.MasterID}
	}
	return out
}

// WaitlistEntry returns an entry with its offers, for the holder of its
// manage token (ByToken), the chat identity that joined (or one proven to
// be its client's), staff of its salon or the system.
// Errors: ErrNotFound (no such entry, or not the caller's), ErrForbidden.
func (s *Service) WaitlistEntry(ctx context.Context, id int64) (*WaitEntry, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	return s.entry(ctx, s.pool, caller, id, "")
}

const entryColumns = `w.id, w.salon_id, w.client_id, w.service_id, w.master_id, w.from_date, w.to_date, w.times, w.status, w.booking_id,
	w.created_at, w.manage_token_hash, w.source, w.items, COALESCE(w.origin_channel, ''), COALESCE(w.origin_ref, ''),
	w.contact_name, w.contact_email, w.lang, COALESCE(c.phone, '')`

// scanEntry reads entryColumns (and, after them, extra), without offers.
func scanEntry(row pgx.Row, extra ...any) (*WaitEntry, []byte, error) {
	var e WaitEntry
	var master, booking *int64
	var hash, times, items []byte
	var from, to time.Time
	var ch string
	err := row.Scan(append([]any{&e.ID, &e.SalonID, &e.ClientID, &e.ServiceID, &master, &from, &to, &times, &e.Status, &booking,
		&e.CreatedAt, &hash, &e.Source, &items, &ch, &e.origin.ExternalID, &e.contact.Name, &e.contact.Email, &e.contact.Lang,
		&e.contact.Phone}, extra...)...)
	if err != nil {
		return nil, nil, err
	}
	e.origin.Channel = Channel(ch)
	if master != nil {
		e.MasterID = *master
	}
	if booking != nil {
		e.BookingID = *booking
	}
	e.From, e.To = DateOf(from), DateOf(to)
	_ = json.Unmarshal(times, &e.Times)
	var wi []waitItem
	_ = json.Unmarshal(items, &wi)
	for _, it := range wi {
		e.Items = append(e.Items, VisitItem{ServiceID: it.Service, MasterID: it.Master})
	}
	if len(e.Items) == 0 {
		e.Items = []VisitItem{{ServiceID: e.ServiceID, MasterID: e.MasterID}}
	}
	return &e, hash, nil
}

// entry reads an entry the caller may see (lock: "" or a locking clause).
func (s *Service) entry(ctx context.Context, q querier, caller Caller, id int64, lock string) (*WaitEntry, error) {
	var proven bool
	e, hash, err := scanEntry(q.QueryRow(ctx, `SELECT `+entryColumns+`,
		EXISTS (SELECT 1 FROM client_identities ci WHERE ci.salon_id = w.salon_id AND ci.client_id = w.client_id
		        AND ci.channel = $2 AND ci.external_id = $3)
		FROM waitlist_entries w JOIN clients c ON c.id = w.client_id WHERE w.id = $1 `+lock, id,
		string(caller.identity.Channel), caller.identity.ExternalID), &proven)
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
	case callerIdentity:
		ok = (!e.origin.IsZero() && e.origin == caller.identity) || proven
	}
	if !ok {
		return nil, fmt.Errorf("waitlist entry %d: %w", id, ErrNotFound)
	}
	if e.Offers, err = readOffers(ctx, q, `entry_id = $1`, id); err != nil {
		return nil, fmt.Errorf("waitlist entry %d: %w", id, dbErr(err))
	}
	return e, nil
}

// offerColumns read an offer; a held offer whose hold is no longer pending
// (cancelled at the desk, say) reads as expired, and an open one whose
// time is no longer free (booked from elsewhere, in part too; a visit's:
// its start) or whose master no longer works then (a day taken off, a
// break put in) as gone.
const offerColumns = `id, entry_id, master_id, starts_at, ends_at,
	CASE WHEN status = 'held' AND NOT EXISTS (SELECT 1 FROM bookings hb WHERE hb.id = waitlist_offers.booking_id AND hb.status = 'pending')
	     THEN 'expired'
	     WHEN status = 'open' AND (
	          EXISTS (SELECT 1 FROM master_busy mb WHERE mb.salon_id = waitlist_offers.salon_id AND mb.master_id = waitlist_offers.master_id
	                  AND tstzrange(mb.starts_at, booking_slot_end(mb.starts_at, mb.duration_min)) && tstzrange(waitlist_offers.starts_at,
	                      CASE WHEN (SELECT jsonb_array_length(we.items) > 1 FROM waitlist_entries we WHERE we.id = waitlist_offers.entry_id)
	                           THEN waitlist_offers.starts_at + interval '1 minute' -- (a visit: its first master's start)
	                           ELSE waitlist_offers.ends_at END))
	          OR NOT ` + worksAtSQL + `)
	     THEN 'gone' ELSE status END,
	COALESCE(booking_id, 0), COALESCE(expires_at, 'epoch')`

// worksAtSQL says a shift of the offer's master holds its start, out of
// the shift's break (shifts last at most a day).
const worksAtSQL = `EXISTS (SELECT 1 FROM shifts sh WHERE sh.salon_id = waitlist_offers.salon_id AND sh.master_id = waitlist_offers.master_id
	AND sh.starts_at <= waitlist_offers.starts_at AND sh.ends_at > waitlist_offers.starts_at
	AND sh.starts_at > waitlist_offers.starts_at - interval '1 day'
	AND NOT (sh.break_starts_at IS NOT NULL AND sh.break_starts_at <= waitlist_offers.starts_at AND sh.break_ends_at > waitlist_offers.starts_at))`

func scanOffer(r pgx.Row) (WaitOffer, error) {
	var o WaitOffer
	err := r.Scan(&o.ID, &o.EntryID, &o.MasterID, &o.Start, &o.End, &o.Status, &o.BookingID, &o.ExpiresAt)
	if o.ExpiresAt.Unix() == 0 {
		o.ExpiresAt = time.Time{}
	}
	return o, err
}

// readOffers reads the offers where holds (the latest maxOffersShown), in
// the order they were made.
func readOffers(ctx context.Context, q querier, where string, args ...any) ([]WaitOffer, error) {
	rows, err := q.Query(ctx, `SELECT `+offerColumns+` FROM waitlist_offers WHERE `+where+` ORDER BY id DESC LIMIT $`+
		fmt.Sprint(len(args)+1), append(args, maxOffersShown)...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (WaitOffer, error) { return scanOffer(r) })
	slices.Reverse(out)
	return out, err
}

// maxOffersShown bounds the offers read with entries: the latest.
const maxOffersShown = 200

// LeaveWaitlist takes an entry off its waitlist: it is offered nothing
// more, its open offers are gone and a time held for it is released, in
// one transaction. Leaving again changes nothing. Errors: ErrNotFound,
// ErrForbidden.
func (s *Service) LeaveWaitlist(ctx context.Context, id int64) (*WaitEntry, error) {
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		e, err := s.entry(ctx, tx, caller, id, "")
		if err != nil {
			return err
		}
		// A hold's booking first (its masters' locks, then its row, as
		// accepting and expiring it take them), then the entry.
		for _, o := range e.Offers {
			if o.Status != OfferHeld {
				continue
			}
			b, _, err := lockBooking(ctx, tx, BySystem(), e.SalonID, o.BookingID)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE waitlist_offers SET status = 'expired' WHERE id = $1 AND status = 'held'`, o.ID); err != nil {
				return err
			}
			if b.Status == StatusPending {
				if _, err := setStatus(ctx, tx, b, StatusCancelled, waitlistHoldReason, System, "waitlist_hold_released",
					map[string]any{"why": "the client left the waitlist"}); err != nil {
					return err
				}
			}
		}
		_, err = tx.Exec(ctx, `WITH e AS (UPDATE waitlist_entries SET status = 'left', updated_at = now() WHERE id = $1 AND status = 'waiting')
			UPDATE waitlist_offers SET status = 'gone' WHERE entry_id = $1 AND status = 'open'`, id)
		return err
	})
	if err != nil {
		return nil, dbErr(err)
	}
	return s.entry(ctx, s.pool, caller, id, "")
}

// waitlistHoldReason is the cancel reason of a waitlist hold that was not
// taken: nobody cancelled a booking.
const waitlistHoldReason = "waitlist offer not taken"

// OfferFreed offers the time freed since the last run to the waitlists,
// each freed time in a transaction of its own, and ends the entries whose
// days are over; it returns how many offers it made. Replicas may run it
// at once: each freed time is claimed by one of them (SKIP LOCKED), and an
// entry is offered a time once. Only the platform asks.
func (s *Service) OfferFreed(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	if now := s.now().Unix(); now-s.waitSwept.Load() >= 60 {
		s.waitSwept.Store(now)
		if err := s.sweepWaitlist(ctx); err != nil {
			return 0, err
		}
	}
	n := 0
	var msgs []int64
	defer func() { s.sendNow(ctx, msgs) }()
	for range 100 {
		var freed int64
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var salon, master int64
			var by *int64
			var from, to time.Time
			err := tx.QueryRow(ctx, `UPDATE waitlist_freed SET offered_at = $1 WHERE id = (
				SELECT id FROM waitlist_freed WHERE offered_at IS NULL ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
				RETURNING id, salon_id, master_id, starts_at, ends_at, client_id`, s.now()).Scan(&freed, &salon, &master, &from, &to, &by)
			if isNoRows(err) {
				return nil
			}
			if err != nil {
				return err
			}
			f := freedTime{id: freed}
			if by != nil {
				f.by = *by
			}
			made, ids, err := s.offer(ctx, tx, salon, master, from, to, s.now(), 0, f)
			if err == nil {
				n += made
				msgs = append(msgs, ids...)
			}
			return err
		})
		switch {
		case err != nil && freed != 0 && ctx.Err() == nil:
			// This freed time cannot be offered (logged with why): it is set
			// aside, so the others behind it still go.
			s.log.Error("waitlist: a freed time could not be offered; it is set aside", "freed", freed, "err", err)
			if _, err := s.pool.Exec(ctx, `UPDATE waitlist_freed SET offered_at = $2 WHERE id = $1`, freed, s.now()); err != nil {
				return n, fmt.Errorf("offer freed: %w", dbErr(err))
			}
		case err != nil:
			return n, fmt.Errorf("offer freed: %w", dbErr(err))
		case freed == 0:
			return n, nil
		}
	}
	return n, nil
}

// sweepWaitlist ends the entries whose days are over, and forgets freed
// time older than the fill rate's window (a transaction's removed shifts
// after an hour) and offer links a week after they expired.
func (s *Service) sweepWaitlist(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `
		WITH e AS (
		    UPDATE waitlist_entries w SET status = 'ended', updated_at = now() FROM salons s
		    WHERE s.id = w.salon_id AND w.status = 'waiting' AND w.to_date < ($1::timestamptz AT TIME ZONE s.timezone)::date
		)
		DELETE FROM waitlist_freed WHERE offered_at < $1::timestamptz - make_interval(days => $2)
		    OR (cause = 'shift_gone' AND created_at < now() - interval '1 hour')`, s.now(), fillDays+1)
	if err == nil {
		_, err = s.pool.Exec(ctx, `DELETE FROM waitlist_links WHERE expires_at < $1::timestamptz - interval '7 days'`, s.now())
	}
	if err != nil {
		return fmt.Errorf("waitlist sweep: %w", dbErr(err))
	}
	return nil
}

// wanting is a waiting entry as offer reads it.
type wanting struct {
	*WaitEntry
	// offeredFrom, offeredTo: the times of this master it was offered
	// already (by index): nothing overlapping them is offered to it again
	// (a hold it let go is not held for it again a quarter later).
	offeredFrom, offeredTo []time.Time
	holds                  bool // it holds a time now
}

// offeredBefore reports whether [from, to) overlaps a time the entry was
// offered.
func (w *wanting) offeredBefore(from, to time.Time) bool {
	for i := range w.offeredFrom {
		if w.offeredFrom[i].Before(to) && from.Before(w.offeredTo[i]) {
			return true
		}
	}
	return false
}

// freedTime is a row of freed time as offer reads it.
type freedTime struct {
	id int64
	by int64 // the client whose booking freed it (0: none)
}

// maxFreedStarts bounds the starts one freed stretch is offered at: a
// day, every 5 minutes (the planner keeps those on the master's grid).
const maxFreedStarts = 288

// offer offers the time of master in [from, to), as the calendar is now,
// to the salon's waiting entries that want it, in the order they joined
// (only entry, when not 0): each entry whose first service the master
// does gets the first start on the salon's grid where its visit fits,
// that its days and times hold and that it was not offered before. In
// broadcast mode up to the salon's number of entries get an open offer;
// in hold mode each gets the time held for it (none while it holds
// another). freed is the freed time's row (zero: offered by hand); the
// client whose booking freed it is not offered it. It returns how many
// offers it made and their messages' ids.
func (s *Service) offer(ctx context.Context, tx pgx.Tx, salonID, master int64, from, to, now time.Time, only int64, freed freedTime) (int, []int64, error) {
	c, err := s.currentCatalog(ctx, salonID)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return 0, nil, nil
		}
		return 0, nil, err
	}
	// (The catalogue's salon is current: any change of the salon moves
	// its version.)
	mode, limit, holdMin := c.salon.WaitlistMode, c.salon.WaitlistBroadcastN, c.salon.WaitlistOfferMin
	loc := c.salon.Location()
	// Starts every 5 minutes from the first whole five: the planner keeps
	// those a client may book (on the master's grid).
	var starts []time.Time
	for t := from.Truncate(5 * time.Minute); t.Before(to) && len(starts) < maxFreedStarts; t = t.Add(5 * time.Minute) {
		if t.Before(from) {
			continue
		}
		if checkStart(c, t, now, true) == nil { // not too soon (the salon's notice), nor past the horizon
			starts = append(starts, t)
		}
	}
	if len(starts) == 0 {
		return 0, nil, nil
	}
	first, last := DateOf(starts[0].In(loc)), DateOf(starts[len(starts)-1].In(loc))
	type want = wanting
	var services []int64 // the services the master does: the entries' first
	for k := range c.offers {
		if k[0] == master {
			services = append(services, k[1])
		}
	}
	rows, err := tx.Query(ctx, `SELECT `+entryColumns+`,
		    ARRAY(SELECT o.starts_at FROM waitlist_offers o WHERE o.entry_id = w.id AND o.master_id = $2
		          AND o.ends_at > $5 AND o.starts_at < $6 ORDER BY o.id),
		    ARRAY(SELECT o.ends_at FROM waitlist_offers o WHERE o.entry_id = w.id AND o.master_id = $2
		          AND o.ends_at > $5 AND o.starts_at < $6 ORDER BY o.id),
		    EXISTS (SELECT 1 FROM waitlist_offers o JOIN bookings hb ON hb.id = o.booking_id
		            WHERE o.entry_id = w.id AND o.status = 'held' AND hb.status = 'pending')
		FROM waitlist_entries w JOIN clients c ON c.id = w.client_id
		WHERE w.salon_id = $1 AND w.status = 'waiting' AND (w.master_id IS NULL OR w.master_id = $2) AND w.service_id = ANY($8)
		  AND w.from_date <= $4 AND w.to_date >= $3 AND ($7 = 0 OR w.id = $7) AND w.client_id <> $9
		ORDER BY w.id LIMIT 500`, salonID, master, first.dbDate(), last.dbDate(), starts[0], starts[len(starts)-1].Add(24*time.Hour),
		only, services, freed.by)
	if err != nil {
		return 0, nil, fmt.Errorf("offer: %w", err)
	}
	wants, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (want, error) {
		var w want
		var err error
		w.WaitEntry, _, err = scanEntry(r, &w.offeredFrom, &w.offeredTo, &w.holds)
		return w, err
	})
	if err != nil {
		return 0, nil, fmt.Errorf("offer: %w", err)
	}
	if len(wants) == 0 {
		return 0, nil, nil
	}
	masters := []int64{master}
	for _, w := range wants {
		if len(w.Items) > 1 {
			masters = append(masters, visitMasters(c, w.Items[1:])...)
		}
	}
	masters = slices.Compact(slices.Sorted(slices.Values(masters)))
	p, err := readPlanner(ctx, tx, c, masters, window{starts[0], starts[len(starts)-1].Add(time.Minute)}, 0, true)
	if err != nil {
		return 0, nil, err
	}
	set, err := readMessageSettings(ctx, tx, salonID)
	if err != nil {
		return 0, nil, err
	}
	made := 0
	var msgs []int64
	for _, w := range wants {
		if mode == WaitlistBroadcast && made >= limit {
			break
		}
		if mode == WaitlistHold && w.holds {
			continue // one held time at a time
		}
		items := slices.Clone(w.Items)
		items[0].MasterID = master
		var plan []placed
		var start time.Time
		for _, t := range starts {
			local := t.In(loc)
			day, minute := DateOf(local), Clock(local.Hour()*60+local.Minute())
			switch {
			case day.Before(w.From) || w.To.Before(day):
				continue
			case len(w.Times) > 0 && !slices.ContainsFunc(w.Times, func(tw TimeWindow) bool { return minute >= tw.From && minute < tw.To }):
				continue
			}
			if plan = p.place(items, t); plan != nil && !w.offeredBefore(t, planEnd(plan)) {
				start = t
				break
			}
			plan = nil
		}
		if plan == nil {
			continue // nowhere in the stretch for this visit
		}
		end := planEnd(plan)
		o := WaitOffer{EntryID: w.ID, MasterID: master, Start: start, End: end, Status: OfferOpen}
		if mode == WaitlistHold {
			// Held from now, or, in the salon's night, from the morning
			// (when the client hears of it), never past its start.
			o.Status = OfferHeld
			o.ExpiresAt = set.morning(now, loc).Add(time.Duration(holdMin) * time.Minute)
			if o.ExpiresAt.After(start) {
				o.ExpiresAt = start
			}
			held, err := s.hold(ctx, tx, c, w.WaitEntry, plan, o.ExpiresAt)
			if err != nil {
				return 0, nil, err
			}
			if held == 0 {
				continue // taken meanwhile (or the client's record changed)
			}
			o.BookingID = held
			// The held time is busy for the entries after this one.
			for _, pl := range plan {
				p.busy[pl.master] = append(p.busy[pl.master], pl.t.busy(pl.start)...)
				slices.SortFunc(p.busy[pl.master], func(a, b interval) int { return a.start.Compare(b.start) })
			}
		}
		var hold *int64
		var expires *time.Time
		if o.BookingID != 0 {
			hold, expires = &o.BookingID, &o.ExpiresAt
		}
		var freedRef *int64
		if freed.id != 0 {
			freedRef = &freed.id
		}
		err := tx.QueryRow(ctx, `INSERT INTO waitlist_offers (salon_id, entry_id, master_id, starts_at, ends_at, status, booking_id, expires_at,
			freed_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`, salonID, w.ID, master, start, end, o.Status, hold, expires,
			freedRef).Scan(&o.ID)
		if err != nil {
			return 0, nil, fmt.Errorf("offer: %w", err)
		}
		made++
		ids, err := s.tellOffer(ctx, tx, &c.salon, set, w.WaitEntry, &o, now)
		if err != nil {
			return 0, nil, err
		}
		msgs = append(msgs, ids...)
	}
	return made, msgs, nil
}

// planEnd is when a planned visit ends for its client.
func planEnd(plan []placed) time.Time {
	end := plan[0].start
	for _, pl := range plan {
		end = later(end, pl.t.end(pl.start))
	}
	return end
}

// hold books the time of plan for the entry's client, pending until
// expires (a waitlist hold: no deposit asked yet, nobody told but the
// client, through the offer). It returns the hold's booking, or 0 when the
// time was taken meanwhile (the exclusion constraint refused it).
func (s *Service) hold(ctx context.Context, tx pgx.Tx, c *catalog, e *WaitEntry, plan []placed, expires time.Time) (int64, error) {
	r := &BookRequest{SalonID: e.SalonID, Source: e.Source, Client: e.contact, caller: Visitor()}
	if !e.origin.IsZero() {
		r.caller = ByIdentity(e.origin)
	}
	head, rest := s.visitRows(r, c, plan)
	head.Status, head.HoldExpiresAt, head.ClientID = StatusPending, expires, e.ClientID
	for i := range rest {
		rest[i].Status, rest[i].HoldExpiresAt = StatusPending, expires
	}
	batch := &pgx.Batch{}
	queueInsertBooking(batch, head, e.contact, clientRecord{read: true, id: e.ClientID}, Identity{}, "", System, nil, nil, nil, false, rest, nil)
	sp, err := tx.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("hold: %w", err)
	}
	err = sp.SendBatch(ctx, batch).Close()
	switch {
	case pgCode(err) == pgExclusionViolation || isNoRows(err):
		// Taken, or the client's record lost its phone (erased): no hold.
		if err := sp.Rollback(ctx); err != nil {
			return 0, fmt.Errorf("hold: %w", err)
		}
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("hold: %w", err)
	}
	if err := sp.Commit(ctx); err != nil {
		return 0, fmt.Errorf("hold: %w", err)
	}
	return head.ID, nil
}

// tellOffer writes the messages that tell the entry's client of offer o,
// on every channel they are reachable on (and the salon sends offers on),
// and returns their ids: out of the salon's night (but e-mail).
func (s *Service) tellOffer(ctx context.Context, tx pgx.Tx, salon *Salon, set *MessageSettings, e *WaitEntry, o *WaitOffer,
	now time.Time) ([]int64, error) {
	v := &View{Booking: Booking{SalonID: e.SalonID, ClientID: e.ClientID, ContactEmail: e.contact.Email, Origin: e.origin}}
	chat := set.morning(now, salon.Location()) // (a hold made in the night lasts until the morning's)
	plans, err := s.clientPlans(ctx, tx, v, set, KindWaitlistOffer, "", now, chat, Identity{}, true)
	if err != nil {
		return nil, err
	}
	if len(plans) == 0 {
		return nil, nil
	}
	batch := &pgx.Batch{}
	var ids []int64
	for _, p := range plans {
		batch.Queue(`INSERT INTO messages (salon_id, offer_id, kind, channel, recipient, not_before)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (offer_id, channel, recipient) WHERE offer_id IS NOT NULL DO NOTHING RETURNING id`,
			e.SalonID, o.ID, p.kind, p.channel, p.recipient, p.notBefore).QueryRow(newID(&ids))
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return nil, fmt.Errorf("messages of offer %d: %w", o.ID, err)
	}
	return ids, nil
}

// offerView is the offer a message tells of, as a view (its Booking the
// time offered, ID 0, pending while held), and why the message no longer
// applies ("" when it does).
func (s *Service) offerView(ctx context.Context, tx pgx.Tx, offerID int64, now time.Time) (*View, string, error) {
	o, err := scanOffer(tx.QueryRow(ctx, `SELECT `+offerColumns+` FROM waitlist_offers WHERE id = $1`, offerID))
	if err != nil {
		return nil, "", fmt.Errorf("offer %d: %w", offerID, err)
	}
	e, _, err := scanEntry(tx.QueryRow(ctx, `SELECT `+entryColumns+` FROM waitlist_entries w JOIN clients c ON c.id = w.client_id
		WHERE w.id = $1`, o.EntryID))
	if err != nil {
		return nil, "", fmt.Errorf("offer %d: %w", offerID, err)
	}
	v, err := s.offerAsView(ctx, tx, e, &o)
	if err != nil {
		return nil, "", err
	}
	why := ""
	switch {
	case e.Status != WaitWaiting:
		why = "the client no longer waits"
	case o.Status != OfferOpen && o.Status != OfferHeld:
		why = "the offer is " + o.Status
	case o.Status == OfferHeld && !now.Before(o.ExpiresAt):
		why = "the hold has ended"
	case !now.Before(o.Start.Add(-time.Duration(v.Salon.MinNoticeMin) * time.Minute)):
		why = "its time is too near to book online"
	case o.Status == OfferOpen:
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM master_busy WHERE salon_id = $1 AND master_id = $2
			AND tstzrange(starts_at, booking_slot_end(starts_at, duration_min)) && tstzrange($3, $4))`,
			e.SalonID, o.MasterID, o.Start, o.End).Scan(&taken); err != nil {
			return nil, "", fmt.Errorf("offer %d: %w", offerID, err)
		}
		if taken {
			why = "the time is taken"
		}
	}
	return v, why, nil
}

// offerAsView shows offer o of entry e as a view: the salon, the
// services and the master, the time offered.
func (s *Service) offerAsView(ctx context.Context, q querier, e *WaitEntry, o *WaitOffer) (*View, error) {
	salon, err := getSalon(ctx, q, e.SalonID)
	if err != nil {
		return nil, err
	}
	var services []string
	var master string
	var price, deposit Money
	ids, masters := make([]int64, len(e.Items)), make([]int64, len(e.Items))
	for i, it := range e.Items {
		ids[i], masters[i] = it.ServiceID, it.MasterID
	}
	masters[0] = o.MasterID
	// What the visit costs (each service at its master's price, when the
	// master is known), and the deposit it asks: told before it is taken.
	if err := q.QueryRow(ctx, `SELECT ARRAY(SELECT s.name FROM unnest($1::bigint[]) WITH ORDINALITY x (id, n)
		JOIN services s ON s.id = x.id ORDER BY x.n), COALESCE((SELECT name FROM masters WHERE id = $2), ''),
		COALESCE((SELECT sum(COALESCE(ms.price, s.price)) FROM unnest($1::bigint[], $3::bigint[]) x (id, m)
		          JOIN services s ON s.id = x.id LEFT JOIN master_services ms ON ms.service_id = x.id AND ms.master_id = x.m), 0),
		COALESCE((SELECT sum(s.deposit) FROM unnest($1::bigint[]) x (id) JOIN services s ON s.id = x.id), 0)`, ids, o.MasterID, masters).
		Scan(&services, &master, &price, &deposit); err != nil {
		return nil, fmt.Errorf("offer %d: %w", o.ID, err)
	}
	if o.BookingID != 0 {
		// A held time is a booking already (its visit's masters chosen):
		// what it costs and asks is its own.
		if err := q.QueryRow(ctx, `SELECT COALESCE(sum(price), 0), COALESCE(sum(deposit), 0) FROM bookings
			WHERE salon_id = $1 AND (id = $2 OR visit_id = (SELECT visit_id FROM bookings WHERE id = $2 AND salon_id = $1))`,
			e.SalonID, o.BookingID).Scan(&price, &deposit); err != nil {
			return nil, fmt.Errorf("offer %d: %w", o.ID, err)
		}
	}
	st := Status("")
	if o.Status == OfferHeld {
		st = StatusPending
	}
	v := &View{Booking: Booking{SalonID: e.SalonID, ClientID: e.ClientID, MasterID: o.MasterID, ServiceID: e.ServiceID, StartsAt: o.Start,
		DurationMin: int(o.End.Sub(o.Start).Minutes()), Price: price, Deposit: deposit, Status: st, HoldExpiresAt: o.ExpiresAt, ContactName: e.contact.Name,
		ContactEmail: e.contact.Email, Lang: e.contact.Lang, Origin: e.origin},
		Salon: *salon, ServiceName: strings.Join(services, " + "), MasterName: master, offer: o}
	return v, nil
}

// makeOfferLinks makes the link an offer's e-mail or SMS carries: it takes
// the offer, until the hold ends (a held offer) or the time starts.
func makeOfferLinks(ctx context.Context, tx pgx.Tx, m *Message, v *View, now time.Time) (Links, error) {
	o := v.offer
	// Until the time can no longer be booked online (the salon's notice),
	// or the hold ends.
	until := o.Start.Add(-time.Duration(v.Salon.MinNoticeMin) * time.Minute)
	if o.Status == OfferHeld && o.ExpiresAt.Before(until) {
		until = o.ExpiresAt
	}
	if !until.After(now) {
		return Links{}, nil // (the sender drops it: its time is too near)
	}
	var l Links
	if m.Channel == ChannelEmail {
		// Every e-mail can be stopped (List-Unsubscribe).
		l.Unsubscribe = newLinkToken()
		if _, err := tx.Exec(ctx, `INSERT INTO booking_links (token_hash, salon_id, action, channel, address, message_id, expires_at)
			VALUES ($1, $2, 'unsubscribe', 'email', $3, $4, $5)`, tokenHash(l.Unsubscribe), v.SalonID, m.Recipient, m.ID,
			now.Add(unsubscribeLife)); err != nil {
			return Links{}, fmt.Errorf("links of message %d: %w", m.ID, err)
		}
	}
	l.Offer = newLinkToken()
	if _, err := tx.Exec(ctx, `INSERT INTO waitlist_links (token_hash, offer_id, message_id, expires_at) VALUES ($1, $2, $3, $4)`,
		tokenHash(l.Offer), o.ID, m.ID, until); err != nil {
		return Links{}, fmt.Errorf("links of message %d: %w", m.ID, err)
	}
	return l, nil
}

// OfferLink is a waitlist offer as its link's page shows it.
type OfferLink struct {
	Entry *WaitEntry
	Offer WaitOffer
	// View shows the offer: the salon, the services, the master, the time.
	View *View
	// Expired: the link has run out (the hold ended, or the time began).
	Expired bool
}

// OpenOfferLink returns the offer a link of an offer's message takes; it
// changes nothing. Any caller may ask: the token is the credential.
// Errors: ErrNotFound (no such link), ErrForbidden (no caller).
func (s *Service) OpenOfferLink(ctx context.Context, token string) (*OfferLink, error) {
	if err := callerOf(ctx).check(); err != nil {
		return nil, err
	}
	return s.offerLink(ctx, s.pool, token)
}

func (s *Service) offerLink(ctx context.Context, q querier, token string) (*OfferLink, error) {
	var offerID int64
	var expires time.Time
	err := q.QueryRow(ctx, `SELECT offer_id, expires_at FROM waitlist_links WHERE token_hash = $1`, tokenHash(token)).Scan(&offerID, &expires)
	if isNoRows(err) || token == "" {
		return nil, fmt.Errorf("offer link: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("offer link: %w", dbErr(err))
	}
	o, err := scanOffer(q.QueryRow(ctx, `SELECT `+offerColumns+` FROM waitlist_offers WHERE id = $1`, offerID))
	if err != nil {
		return nil, fmt.Errorf("offer link: %w", dbErr(err))
	}
	e, err := s.entry(ctx, q, BySystem(), o.EntryID, "")
	if err != nil {
		return nil, err
	}
	v, err := s.offerAsView(ctx, q, e, &o)
	if err != nil {
		return nil, err
	}
	return &OfferLink{Entry: e, Offer: o, View: v, Expired: !s.now().Before(expires)}, nil
}

// AcceptOfferLink takes the offer of a link, as a visitor of the widget
// (who gets the booking's manage token). Errors: ErrNotFound,
// ErrLinkExpired, and AcceptOffer's.
func (s *Service) AcceptOfferLink(ctx context.Context, token string) (*Booking, error) {
	if err := callerOf(ctx).check(); err != nil {
		return nil, err
	}
	l, err := s.offerLink(ctx, s.pool, token)
	if err != nil {
		return nil, err
	}
	if l.Expired {
		return nil, ErrLinkExpired
	}
	return s.accept(ctx, Visitor(), l.Entry, l.Offer)
}

// AcceptOffer books an offer for its entry's client, for whoever may see
// the entry (WaitlistEntry). An open offer is booked under the master's
// lock, like any booking: the first to accept a time gets it, and the
// others' offers of it are gone (they stay on the list). A held offer's
// hold becomes the booking (confirmed, or, with a deposit to pay online,
// pending for the salon's hold minutes). Errors: ErrNotFound, ErrConflict
// (the offer or the entry is no longer open), *SlotTakenError (the time
// is taken: the nearest free times), and Book's.
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
	by := Visitor()
	switch caller.kind {
	case callerIdentity, callerStaff, callerSystem:
		by = caller
	}
	return s.accept(ctx, by, e, e.Offers[i])
}

// accept books offer o of entry e, as by.
func (s *Service) accept(ctx context.Context, by Caller, e *WaitEntry, o WaitOffer) (*Booking, error) {
	if e.Status == WaitBooked && o.Status == OfferTaken && o.BookingID != 0 {
		// Taken already (a second tap): the booking it became.
		return s.acceptedBooking(ctx, by, e, o)
	}
	if e.Status != WaitWaiting {
		return nil, conflict("this waitlist entry is %s", i18n.New(e.Status))
	}
	switch o.Status {
	case OfferOpen:
		return s.acceptOpen(ctx, by, e, o)
	case OfferHeld:
		return s.acceptHeld(ctx, by, e, o)
	case OfferGone:
		// Taken by another (unless the entry was booked meanwhile, by
		// another of its offers): answered as a taken time, with the
		// nearest free ones.
		var status string
		var accepting bool // (another tap of the entry's is booking it: its time reads taken meanwhile)
		now := s.now()
		if err := s.pool.QueryRow(ctx, `SELECT status, accepting_at IS NOT NULL AND accepting_at >= $2 FROM waitlist_entries WHERE id = $1`,
			e.ID, now.Add(-acceptLease)).Scan(&status, &accepting); err != nil {
			return nil, fmt.Errorf("accept offer: %w", dbErr(err))
		}
		switch {
		case status != WaitWaiting:
			return nil, conflict("this waitlist entry is %s", i18n.New(status))
		case accepting:
			return nil, conflict("another tap is booking this place on the waiting list: look again in a moment")
		}
		var works bool
		if err := s.pool.QueryRow(ctx, `SELECT `+worksAtSQL+` FROM waitlist_offers WHERE id = $1`, o.ID).Scan(&works); err != nil {
			return nil, fmt.Errorf("accept offer: %w", dbErr(err))
		}
		if !works {
			return nil, conflict("the master no longer works at this time")
		}
		alts, err := s.alternatives(ctx, e.SalonID, e.ServiceID, o.MasterID, o.Start, s.now(), 0, false)
		if err != nil {
			return nil, err
		}
		return nil, &SlotTakenError{Alternatives: alts}
	}
	return nil, conflict("this offer is %s", i18n.New(o.Status))
}

// acceptLease is how long an accept in progress keeps its entry to itself
// (a request that died lets go after it).
const acceptLease = time.Minute

// acceptOpen books an open offer, under the master's lock. The entry is
// claimed first (a lease), so one entry becomes one booking however many
// of its offers are tapped at once; the claim goes with the outcome.
func (s *Service) acceptOpen(ctx context.Context, by Caller, e *WaitEntry, o WaitOffer) (*Booking, error) {
	now := s.now()
	var claimed bool
	err := s.pool.QueryRow(ctx, `UPDATE waitlist_entries SET accepting_at = $2 WHERE id = $1 AND status = 'waiting'
		AND (accepting_at IS NULL OR accepting_at < $3) RETURNING true`, e.ID, now, now.Add(-acceptLease)).Scan(&claimed)
	if isNoRows(err) {
		return nil, conflict("another tap is booking this place on the waiting list: look again in a moment")
	}
	if err != nil {
		return nil, fmt.Errorf("accept offer: %w", dbErr(err))
	}
	release := func() {
		if _, err := s.pool.Exec(context.WithoutCancel(ctx), `UPDATE waitlist_entries SET accepting_at = NULL WHERE id = $1`, e.ID); err != nil {
			s.log.Error("waitlist: an accept's claim was not released; it lapses", "entry", e.ID, "err", err)
		}
	}
	r := BookRequest{SalonID: e.SalonID, StartsAt: o.Start, Client: e.contact}
	if len(e.Items) > 1 {
		r.Items = slices.Clone(e.Items)
		r.Items[0].MasterID = o.MasterID
	} else {
		r.ServiceID, r.MasterID = e.ServiceID, o.MasterID
	}
	b, err := s.Book(As(ctx, by), r)
	if errors.Is(err, ErrSlotTaken) {
		release()
		if _, gerr := s.pool.Exec(ctx, `UPDATE waitlist_offers SET status = 'gone' WHERE id = $1 AND status = 'open'`, o.ID); gerr != nil {
			return nil, fmt.Errorf("accept offer: %w", dbErr(gerr))
		}
		return nil, err
	}
	if err != nil {
		release()
		return nil, err
	}
	// The entry is booked, its other offers are gone, and so are the
	// others' offers of this time (they stay on the list).
	if _, err := s.pool.Exec(ctx, `
		WITH t AS (UPDATE waitlist_offers SET status = 'taken', booking_id = $3 WHERE id = $2),
		     e AS (UPDATE waitlist_entries SET status = 'booked', booking_id = $3, accepting_at = NULL, updated_at = now()
		           WHERE id = $1 AND status = 'waiting'),
		     g AS (UPDATE waitlist_offers SET status = 'gone' WHERE entry_id = $1 AND id <> $2 AND status = 'open')
		UPDATE waitlist_offers SET status = 'gone'
		WHERE salon_id = $4 AND master_id = $5 AND tstzrange(starts_at, ends_at) && tstzrange($6, $7) AND id <> $2 AND status = 'open'`,
		e.ID, o.ID, b.ID, e.SalonID, o.MasterID, o.Start, o.End); err != nil {
		release()
		return nil, fmt.Errorf("accept offer: %w", dbErr(err))
	}
	return b, nil
}

// acceptHeld makes a held offer's hold the client's booking, under its
// masters' locks and its row's: a hold that expired meanwhile (ExpireHolds
// takes the same locks) is not taken.
func (s *Service) acceptHeld(ctx context.Context, by Caller, e *WaitEntry, o WaitOffer) (*Booking, error) {
	var out *Booking
	token := ""
	if by.kind == callerVisitor {
		token = newToken()
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		b, salon, err := lockBooking(ctx, tx, BySystem(), e.SalonID, o.BookingID)
		if err != nil {
			return err
		}
		var status string
		if err := tx.QueryRow(ctx, `SELECT status FROM waitlist_offers WHERE id = $1 FOR UPDATE`, o.ID).Scan(&status); err != nil {
			return err
		}
		now := s.now()
		if status != OfferHeld || b.Status != StatusPending || !now.Before(b.HoldExpiresAt) {
			return conflict("the time held for you was released")
		}
		actor := by.actor(b)
		if by.kind == callerVisitor {
			actor = Actor{Kind: ActorClient, ID: b.ClientID, Channel: ChannelWeb}
		}
		event := EventCreated
		if s.deposits && b.Deposit > 0 && s.PaymentsDown() && salon.DepositFallback != FallbackInSalon {
			return fmt.Errorf("%w: %w", ErrPaymentsDown, ErrUnavailable)
		}
		if s.deposits && b.Deposit > 0 && !s.PaymentsDown() {
			// The deposit is paid online, as for any booking: held for
			// the salon's hold minutes from now.
			if _, err := tx.Exec(ctx, `UPDATE bookings SET hold_expires_at = $2, updated_at = now() WHERE id = $1 OR visit_of = $1`,
				b.ID, now.Add(time.Duration(salon.HoldMin)*time.Minute)); err != nil {
				return err
			}
			out, err = getBooking(ctx, tx, e.SalonID, b.ID)
		} else {
			out, err = setStatus(ctx, tx, b, StatusConfirmed, "", actor, "waitlist_taken", nil)
		}
		if err != nil {
			return err
		}
		if token != "" {
			if _, err := tx.Exec(ctx, `UPDATE bookings SET manage_token_hash = $2 WHERE id = $1`, b.ID, tokenHash(token)); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `
			WITH t AS (UPDATE waitlist_offers SET status = 'taken' WHERE id = $2)
			UPDATE waitlist_entries SET status = 'booked', booking_id = $3, updated_at = now() WHERE id = $1`, e.ID, o.ID, b.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO booking_outbox (booking_id) VALUES ($1) ON CONFLICT DO NOTHING`, b.ID); err != nil {
			return err
		}
		return s.enqueueChange(ctx, tx, out, event, actor, nil)
	})
	if err != nil {
		return nil, dbErr(err)
	}
	out.ManageToken = token
	s.wakeMessages()
	return out, nil
}

// acceptedBooking is the booking a taken offer became, for a second tap
// (a visitor's without its manage token: the first answer had it).
func (s *Service) acceptedBooking(ctx context.Context, by Caller, e *WaitEntry, o WaitOffer) (*Booking, error) {
	if by.kind == callerVisitor {
		return nil, conflict("this offer was taken: the booking is on its page")
	}
	b, err := getBooking(ctx, s.pool, e.SalonID, o.BookingID)
	if err != nil {
		return nil, err
	}
	if !b.Status.Active() {
		return nil, conflict("this offer was taken, and its booking is %s", i18n.New(string(b.Status)))
	}
	return b, nil
}

// listenFreed wakes this replica's sender whenever a transaction that
// freed time commits (NOTIFY waitlist_freed, from the triggers that write
// waitlist_freed, whichever process wrote it), on a connection of its own
// (outside the pool: it is held as long as the replica runs), until ctx
// ends. A lost connection is made again; meanwhile the sender's ticker
// finds the freed time.
func (s *Service) listenFreed(ctx context.Context) {
	for ctx.Err() == nil {
		err := func() error {
			conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
			if err != nil {
				return err
			}
			defer conn.Close(context.WithoutCancel(ctx))
			if _, err := conn.Exec(ctx, `LISTEN waitlist_freed`); err != nil {
				return err
			}
			s.wakeMessages() // what was freed while nobody listened
			for {
				if _, err := conn.WaitForNotification(ctx); err != nil {
					return err
				}
				s.wakeMessages()
			}
		}()
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("waitlist: listening for freed time", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
