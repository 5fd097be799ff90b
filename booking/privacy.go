package booking

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A client's personal data: everything stored about them can be exported,
// and erased (the salon keeps its bookings for its counts, without who
// they were for). Owners only (see As).

// ClientRecord is everything stored about one client of a salon.
type ClientRecord struct {
	Salon      string          `json:"salon"`
	Client     Client          `json:"client"`
	Identities []Identity      `json:"identities"`
	Bookings   []ClientBooking `json:"bookings"`
	Exported   time.Time       `json:"exported_at"`
}

// ClientBooking is a booking of the client as exported, with its history.
type ClientBooking struct {
	ID           int64            `json:"id"`
	StartsAt     time.Time        `json:"starts_at"`
	DurationMin  int              `json:"duration_min"`
	Service      string           `json:"service"`
	Master       string           `json:"master"`
	Status       Status           `json:"status"`
	Source       Source           `json:"source"`
	Price        Money            `json:"price"`
	Deposit      Money            `json:"deposit"`
	ContactName  string           `json:"contact_name"`
	ContactEmail string           `json:"contact_email,omitempty"`
	Notes        string           `json:"notes"`
	CancelReason string           `json:"cancel_reason"`
	Origin       string           `json:"origin,omitempty"`
	Events       []map[string]any `json:"events"`
}

// findClient returns the id of the salon's client with a phone (read in the
// salon's country). Errors: ErrNotFound, ErrInvalid.
func (s *Service) findClient(ctx context.Context, q querier, salon *Salon, phone string) (int64, error) {
	p, err := NormalizePhone(phone, salon.Country)
	if err != nil {
		return 0, invalidBy("phone", err)
	}
	var id int64
	err = q.QueryRow(ctx, `SELECT id FROM clients WHERE salon_id = $1 AND phone = $2`, salon.ID, p).Scan(&id)
	if isNoRows(err) {
		return 0, fmt.Errorf("client with phone %s: %w", p, ErrNotFound)
	}
	return id, err
}

// ExportClient returns everything stored about the salon's client with
// that phone (or client id, when phone is empty). Errors: ErrNotFound,
// ErrInvalid, ErrForbidden.
func (s *Service) ExportClient(ctx context.Context, salonID int64, phone string, clientID int64) (*ClientRecord, error) {
	salon, err := s.salonAs(ctx, salonID, RoleOwner)
	if err != nil {
		return nil, err
	}
	if phone != "" {
		if clientID, err = s.findClient(ctx, s.pool, salon, phone); err != nil {
			return nil, err
		}
	}
	c, err := s.Client(ctx, salonID, clientID)
	if err != nil {
		return nil, err
	}
	rec := &ClientRecord{Salon: salon.Slug, Client: *c, Exported: s.now()}
	if rec.Identities, err = clientIdentities(ctx, s.pool, salonID, c.ID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT b.id, b.starts_at, b.duration_min, sv.name, m.name, b.status, b.source, b.price, b.deposit,
		b.contact_name, b.contact_email, b.notes, b.cancel_reason, COALESCE(b.origin_channel || ':' || b.origin_ref, ''),
		COALESCE((SELECT jsonb_agg(jsonb_build_object('action', e.action, 'by', e.actor_kind, 'channel', e.channel, 'at', e.at,
		    'details', e.details) ORDER BY e.id) FROM booking_events e WHERE e.booking_id = b.id), '[]')
		FROM bookings b JOIN services sv ON sv.id = b.service_id JOIN masters m ON m.id = b.master_id
		WHERE b.salon_id = $1 AND b.client_id = $2 ORDER BY b.starts_at, b.id`, salonID, c.ID)
	if err != nil {
		return nil, dbErr(err)
	}
	rec.Bookings, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ClientBooking, error) {
		var b ClientBooking
		var events []byte
		err := r.Scan(&b.ID, &b.StartsAt, &b.DurationMin, &b.Service, &b.Master, &b.Status, &b.Source, &b.Price, &b.Deposit,
			&b.ContactName, &b.ContactEmail, &b.Notes, &b.CancelReason, &b.Origin, &events)
		if err == nil {
			err = json.Unmarshal(events, &b.Events)
		}
		return b, err
	})
	if err != nil {
		return nil, dbErr(err)
	}
	return rec, nil
}

// erasureTraces is what finds a client's data outside their own rows.
type erasureTraces struct {
	phone string   // E.164
	names []string // the client's and those given with their bookings
	chats []int64  // the Telegram chats they booked from or are known by
}

// likeEscape escapes LIKE's wildcards.
var likeEscape = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// phonePatterns are LIKE patterns for texts that carry the client's phone
// (its digits, as Telegram writes a contact's, and so within any spelling
// with a +).
func (t erasureTraces) phonePatterns() []string {
	if digits := strings.TrimPrefix(t.phone, "+"); len(digits) >= 6 {
		return []string{"%" + likeEscape.Replace(digits) + "%"}
	}
	return []string{""} // LIKE ANY of nothing would match nothing too
}

// namePatterns are LIKE patterns for texts that name the client.
func (t erasureTraces) namePatterns() []string {
	out := []string{""}
	for _, n := range t.names {
		out = append(out, "%"+likeEscape.Replace(n)+"%")
	}
	return out
}

// EraseClient erases the personal data of the salon's client with that
// phone (or client id): the name becomes "Erased client", the phone,
// notes, chat identities, the names, notes and cancellation reasons given
// with its bookings and who made them are removed, also from the audit log,
// the salon's uploaded files, and the chat channels' dialogs, inboxes and
// outboxes; the bookings stay, for the salon's counts. The erasure itself is an audit row (without the
// data). It returns how many bookings were kept. Errors: ErrNotFound,
// ErrInvalid, ErrForbidden.
func (s *Service) EraseClient(ctx context.Context, salonID int64, phone string, clientID int64) (int, error) {
	salon, err := s.salonAs(ctx, salonID, RoleOwner)
	if err != nil {
		return 0, err
	}
	who := callerOf(ctx).auditName()
	if who == "" {
		who = "system"
	}
	var kept int
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if phone != "" {
			if clientID, err = s.findClient(ctx, tx, salon, phone); err != nil {
				return err
			}
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM clients WHERE salon_id = $1 AND id = $2)`, salonID, clientID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("client %d: %w", clientID, ErrNotFound)
		}
		// The changes themselves are not audited row by row (the old
		// values are what is being erased); one row says it happened.
		if _, err := tx.Exec(ctx, `SELECT set_config('salon.actor', '', true)`); err != nil {
			return err
		}
		// Where else they are written: the chats they booked from, and the
		// texts that carry their name or phone.
		var traces erasureTraces
		if err := tx.QueryRow(ctx, `
			SELECT COALESCE(c.phone, ''),
			       ARRAY(SELECT DISTINCT n FROM (SELECT c.name AS n UNION SELECT contact_name FROM bookings WHERE client_id = c.id
			                                     UNION SELECT contact_name FROM waitlist_entries WHERE client_id = c.id) x
			             WHERE length(n) >= 3),
			       ARRAY(SELECT external_id::bigint FROM client_identities WHERE client_id = c.id AND channel = 'telegram'
			             UNION SELECT origin_ref::bigint FROM bookings WHERE client_id = c.id AND origin_channel = 'telegram')
			FROM clients c WHERE c.salon_id = $1 AND c.id = $2`, salonID, clientID).Scan(&traces.phone, &traces.names, &traces.chats); err != nil {
			return err
		}
		batch := &pgx.Batch{}
		batch.Queue(`DELETE FROM client_identities WHERE salon_id = $1 AND client_id = $2`, salonID, clientID)
		batch.Queue(`UPDATE clients SET name = 'Erased client', phone = NULL, notes = '' WHERE salon_id = $1 AND id = $2`, salonID, clientID)
		batch.Queue(`WITH b AS (
			    UPDATE bookings SET contact_name = '', contact_email = '', notes = '', cancel_reason = '', origin_channel = NULL, origin_ref = NULL,
			           manage_token_hash = NULL, calendar_token_hash = NULL
			    WHERE salon_id = $1 AND client_id = $2 RETURNING id
			), e AS (
			    UPDATE booking_events SET details = details - 'by' - 'reason' WHERE booking_id IN (SELECT id FROM b)
			)
			SELECT count(*) FROM b`, salonID, clientID).QueryRow(func(r pgx.Row) error { return r.Scan(&kept) })
		// Their messages: the addresses and words go, the links die, and
		// nothing still queued is sent (to an address they took back).
		batch.Queue(`DELETE FROM booking_links WHERE booking_id IN (SELECT id FROM bookings WHERE salon_id = $1 AND client_id = $2)`, salonID, clientID)
		batch.Queue(`UPDATE messages SET recipient = '', subject = NULL, body = NULL,
			    state = CASE WHEN state = 'queued' THEN 'dropped' ELSE state END,
			    error = CASE WHEN state = 'queued' THEN 'the client''s data was erased' ELSE error END
			WHERE booking_id IN (SELECT id FROM bookings WHERE salon_id = $1 AND client_id = $2) AND NOT to_master`, salonID, clientID)
		batch.Queue(`DELETE FROM booking_outbox WHERE booking_id IN (SELECT id FROM bookings WHERE salon_id = $1 AND client_id = $2)`, salonID, clientID)
		// Their places on the waiting list go whole: the offers, their
		// messages and links with them (and the unsubscribe links of
		// the offers' e-mails, which name no booking).
		batch.Queue(`DELETE FROM booking_links WHERE salon_id = $1 AND booking_id IS NULL AND address IN (
			    SELECT contact_email FROM waitlist_entries WHERE salon_id = $1 AND client_id = $2 AND contact_email <> '')`, salonID, clientID)
		batch.Queue(`DELETE FROM waitlist_entries WHERE salon_id = $1 AND client_id = $2`, salonID, clientID)
		// What they bought online: the money's record stays, their e-mail
		// and phone (the sale's, its receipt's) go.
		batch.Queue(`UPDATE balance_sales SET email = '', receipt = CASE WHEN receipt IS NULL THEN NULL ELSE receipt - 'customer' END
			WHERE salon_id = $1 AND client_id = $2`, salonID, clientID)
		// (and its settlements' receipts: one not sent yet is refused now,
		// and shown to staff)
		batch.Queue(`UPDATE balance_settlements x SET receipt = x.receipt - 'customer' FROM balance_sales s
			WHERE s.id = x.sale_id AND s.salon_id = $1 AND s.client_id = $2 AND x.receipt IS NOT NULL`, salonID, clientID)
		// What the audit log kept of them.
		batch.Queue(`UPDATE audit_log SET old = CASE WHEN old IS NULL THEN NULL ELSE old - 'name' - 'phone' - 'notes' - 'contact_name' - 'contact_email' - 'origin_ref' - 'cancel_reason' END,
			new = CASE WHEN new IS NULL THEN NULL ELSE new - 'name' - 'phone' - 'notes' - 'contact_name' - 'contact_email' - 'origin_ref' - 'cancel_reason' END
			WHERE salon_id = $1 AND ((entity = 'client' AND entity_id = $2)
			   OR (entity = 'booking' AND entity_id IN (SELECT id FROM bookings WHERE client_id = $2)))`, salonID, clientID)
		// Uploaded files and their reports may hold them too; uploads are
		// kept an hour at most, and go whole.
		batch.Queue(`DELETE FROM uploads WHERE salon_id = $1`, salonID)
		// The chat channel's stores (the Telegram bot's dialogs, its inbox
		// and outbox, what it could not read): all of the client's chats;
		// in any other chat, what carries their phone; and the notices to
		// this salon's masters that name them. (A name alone, elsewhere,
		// could be anyone's.)
		phone, names := traces.phonePatterns(), traces.namePatterns()
		batch.Queue(`UPDATE tg_chats SET dialog = '{}' WHERE chat_id = ANY($1) OR user_id = ANY($1) OR dialog::text LIKE ANY($2)`,
			traces.chats, phone)
		batch.Queue(`DELETE FROM tg_updates WHERE chat_id = ANY($1)
			OR payload LIKE ANY (ARRAY(SELECT convert_to(p, 'UTF8') FROM unnest($2::text[]) p))`, traces.chats, phone)
		batch.Queue(`DELETE FROM tg_outbox WHERE chat_id = ANY($1) OR payload::text LIKE ANY($2)
			OR (payload::text LIKE ANY($3) AND chat_id IN (SELECT external_id::bigint FROM master_identities
			                                               WHERE salon_id = $4 AND channel = 'telegram'))`,
			traces.chats, phone, names, salonID)
		batch.Queue(`DELETE FROM tg_quarantine WHERE raw LIKE ANY (ARRAY(SELECT convert_to(p, 'UTF8') FROM unnest($1::text[]) p))`, phone)
		batch.Queue(`INSERT INTO audit_log (salon_id, actor, action, entity, entity_id, new) VALUES ($1, $2, 'erase', 'client', $3, $4)`,
			salonID, who, clientID, `{"erased": true}`)
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return 0, err
	}
	return kept, nil
}
