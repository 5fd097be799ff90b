package booking

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The salon's own running: what the panel changes besides bookings. Every
// method here reads its caller from the context (see As): staff are held to
// their salon (another salon's ids are ErrNotFound) and role (owners manage
// the catalogue, users and settings; admins the day, clients and shifts),
// and their changes are audited.

// UpdateSalon changes the salon's settings (not its slug). Owners only.
// Errors: ErrNotFound, ErrForbidden, ErrInvalid.
func (s *Service) UpdateSalon(ctx context.Context, in Salon) (*Salon, error) {
	if err := authorize(ctx, in.ID, RoleOwner); err != nil {
		return nil, err
	}
	cur, err := getSalon(ctx, s.pool, in.ID)
	if err != nil {
		return nil, err
	}
	in.Slug = cur.Slug
	if err := in.normalize(); err != nil {
		return nil, err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			UPDATE salons SET name = $2, timezone = $3, currency = $4, locale = $5, slot_step_min = $6,
			       min_notice_min = $7, hold_min = $8, cutoff_hours = $9, horizon_days = $10,
			       refund_policy = $11, country = $12, deposit_fallback = $13,
			       address = $14, phone = $15, about = $16, privacy_url = $17, deposit_topup = $18,
			       waitlist_mode = $19, waitlist_offer_min = $20, waitlist_broadcast_n = $21
			WHERE id = $1`, in.ID, in.Name, in.Timezone, in.Currency, in.Locale, in.SlotStepMin,
			in.MinNoticeMin, in.HoldMin, in.CutoffHours, in.HorizonDays, in.RefundPolicy, in.Country, in.DepositFallback,
			in.Address, in.Phone, in.About, in.PrivacyURL, in.DepositTopUp, in.WaitlistMode, in.WaitlistOfferMin, in.WaitlistBroadcastN)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update salon: %w", err)
	}
	return &in, nil
}

// UpdateService changes a service: name, duration, buffer, price, deposit,
// and whether it is offered. Bookings already made keep their terms.
// Owners only. Errors: ErrNotFound, ErrForbidden, ErrInvalid.
func (s *Service) UpdateService(ctx context.Context, salonID int64, in SalonService) (*SalonService, error) {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return nil, err
	}
	if err := in.normalize(); err != nil {
		return nil, err
	}
	in.SalonID = salonID
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
			UPDATE services SET name = $3, duration_min = $4, buffer_min = $5, price = $6, deposit = $7, active = $8,
			       processing_min = $9, finish_min = $10
			WHERE salon_id = $1 AND id = $2`, salonID, in.ID, in.Name, in.DurationMin, in.BufferMin, in.Price, in.Deposit, in.Active,
			in.ProcessingMin, in.FinishMin)
		switch {
		case pgCode(err) == pgUniqueViolation:
			return Invalid("name", "a service with this name exists")
		case err != nil:
			return fmt.Errorf("update service: %w", err)
		case tag.RowsAffected() == 0:
			return fmt.Errorf("service %d: %w", in.ID, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &in, nil
}

// AllServices lists every service of the salon, inactive ones too, by name.
func (s *Service) AllServices(ctx context.Context, salonID int64) ([]SalonService, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	return s.services(ctx, salonID, false)
}

// ServiceByID returns one service of the salon (active or not).
// Errors: ErrNotFound.
func (s *Service) ServiceByID(ctx context.Context, salonID, id int64) (*SalonService, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	sv, err := scanService(s.pool.QueryRow(ctx, `SELECT `+serviceColumns+`
		FROM services WHERE salon_id = $1 AND id = $2`, salonID, id))
	if isNoRows(err) {
		return nil, fmt.Errorf("service %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("service %d: %w", id, dbErr(err))
	}
	return &sv, nil
}

// UpdateMaster changes a master's name, phone and whether clients may book
// them. Deactivating a master revokes their calendar feed, unlinks their
// chat accounts and voids their unused link codes (NewLinkCode and
// NewCalendarToken then refuse them). Owners only. Errors: ErrNotFound,
// ErrForbidden, ErrInvalid.
func (s *Service) UpdateMaster(ctx context.Context, salonID int64, in Master) (*Master, error) {
	salon, err := s.salonAs(ctx, salonID, RoleOwner)
	if err != nil {
		return nil, err
	}
	if err := in.normalize(salon.Country); err != nil {
		return nil, err
	}
	in.SalonID = salonID
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE masters SET name = $3, phone = NULLIF($4, ''), active = $5
			WHERE salon_id = $1 AND id = $2`, salonID, in.ID, in.Name, in.Phone, in.Active)
		switch {
		case pgCode(err) == pgUniqueViolation:
			return Invalid("name", "a master with this name exists")
		case err != nil:
			return fmt.Errorf("update master: %w", err)
		case tag.RowsAffected() == 0:
			return fmt.Errorf("master %d: %w", in.ID, ErrNotFound)
		case in.Active:
			return nil
		}
		// Deactivated: their feed (their clients' names and phones), their
		// chat accounts and their unused link codes end with them.
		batch := &pgx.Batch{}
		batch.Queue(`DELETE FROM master_calendars WHERE salon_id = $1 AND master_id = $2`, salonID, in.ID)
		batch.Queue(`DELETE FROM master_identities WHERE salon_id = $1 AND master_id = $2`, salonID, in.ID)
		batch.Queue(`DELETE FROM master_link_codes WHERE salon_id = $1 AND master_id = $2 AND used_at IS NULL`, salonID, in.ID)
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return fmt.Errorf("deactivate master: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &in, nil
}

// MasterDetail is a master with the terms of each service they do.
type MasterDetail struct {
	Master
	Offers []Offer // by service id; zero duration or price: the service's own
	Linked int     // chat accounts linked to the master
}

// AllMasters lists every master of the salon, inactive ones too, by name.
func (s *Service) AllMasters(ctx context.Context, salonID int64) ([]Master, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `
		SELECT m.id, m.salon_id, m.name, COALESCE(m.phone, ''), m.active,
		       COALESCE((SELECT array_agg(service_id ORDER BY service_id) FROM master_services WHERE master_id = m.id), '{}')
		FROM masters m WHERE m.salon_id = $1 ORDER BY m.active DESC, m.name, m.id`, salonID)
	if err != nil {
		return nil, fmt.Errorf("masters: %w", dbErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Master, error) {
		var m Master
		err := r.Scan(&m.ID, &m.SalonID, &m.Name, &m.Phone, &m.Active, &m.ServiceIDs)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("masters: %w", dbErr(err))
	}
	return out, nil
}

// MasterByID returns a master of the salon with their offers.
// Errors: ErrNotFound.
func (s *Service) MasterByID(ctx context.Context, salonID, id int64) (*MasterDetail, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	var d MasterDetail
	err := s.pool.QueryRow(ctx, `SELECT id, salon_id, name, COALESCE(phone, ''), active,
		(SELECT count(*) FROM master_identities WHERE master_id = m.id)
		FROM masters m WHERE salon_id = $1 AND id = $2`, salonID, id).
		Scan(&d.ID, &d.SalonID, &d.Name, &d.Phone, &d.Active, &d.Linked)
	if isNoRows(err) {
		return nil, fmt.Errorf("master %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("master %d: %w", id, dbErr(err))
	}
	rows, err := s.pool.Query(ctx, `SELECT service_id, COALESCE(duration_min, 0), COALESCE(price, 0)
		FROM master_services WHERE master_id = $1 ORDER BY service_id`, id)
	if err != nil {
		return nil, fmt.Errorf("master %d: %w", id, dbErr(err))
	}
	d.Offers, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Offer, error) {
		var o Offer
		err := r.Scan(&o.ServiceID, &o.DurationMin, &o.Price)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("master %d: %w", id, dbErr(err))
	}
	for _, o := range d.Offers {
		d.ServiceIDs = append(d.ServiceIDs, o.ServiceID)
	}
	return &d, nil
}

// Users lists the salon's panel users by email.
func (s *Service) Users(ctx context.Context, salonID int64) ([]User, error) {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, salon_id, email, role, COALESCE(lang, '') FROM users WHERE salon_id = $1 ORDER BY email`, salonID)
	if err != nil {
		return nil, fmt.Errorf("users: %w", dbErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (User, error) {
		var u User
		err := r.Scan(&u.ID, &u.SalonID, &u.Email, &u.Role, &u.Lang)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("users: %w", dbErr(err))
	}
	return out, nil
}

// DeleteUser removes a panel user of the salon, ending their sessions. The
// last owner cannot be removed, nor can a user remove themselves. Owners
// only. Errors: ErrNotFound, ErrForbidden, ErrConflict.
func (s *Service) DeleteUser(ctx context.Context, salonID, userID int64) error {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return err
	}
	if c := callerOf(ctx); c.kind == callerStaff && c.user.ID == userID {
		return conflict("you cannot remove yourself")
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		// Owners are locked so two owners removing each other cannot both win.
		rows, err := tx.Query(ctx, `SELECT id, role FROM users WHERE salon_id = $1 ORDER BY id FOR UPDATE`, salonID)
		if err != nil {
			return fmt.Errorf("delete user: %w", err)
		}
		type ur struct {
			id   int64
			role Role
		}
		us, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ur, error) {
			var u ur
			err := r.Scan(&u.id, &u.role)
			return u, err
		})
		if err != nil {
			return fmt.Errorf("delete user: %w", err)
		}
		owners, found := 0, false
		for _, u := range us {
			if u.role == RoleOwner && u.id != userID {
				owners++
			}
			found = found || u.id == userID
		}
		if !found {
			return fmt.Errorf("user %d: %w", userID, ErrNotFound)
		}
		if owners == 0 {
			return conflict("the salon's last owner cannot be removed")
		}
		_, err = tx.Exec(ctx, `DELETE FROM users WHERE salon_id = $1 AND id = $2`, salonID, userID)
		return err
	})
}

// SetUserLang sets the calling panel user's language ("" for the salon's).
// Errors: ErrInvalid, ErrForbidden (not a panel user).
func (s *Service) SetUserLang(ctx context.Context, lang string) error {
	u, err := panelUser(ctx)
	if err != nil {
		return err
	}
	if lang != "" && lang != "ru" && lang != "en" {
		return Invalid("lang", "ru or en")
	}
	_, err = s.pool.Exec(ctx, `UPDATE users SET lang = NULLIF($3, '') WHERE salon_id = $1 AND id = $2`, u.SalonID, u.ID, lang)
	if err != nil {
		return fmt.Errorf("set lang: %w", dbErr(err))
	}
	return nil
}

// ClientSummary is a client with the counts the panel shows.
type ClientSummary struct {
	Client
	Bookings int       // all bookings
	NoShows  int       // of them, no-shows
	LastAt   time.Time // start of the latest visit that took place (zero: none)
	NextAt   time.Time // start of the next booking still on (zero: none)
}

// MaxClientResults is the most clients SearchClients returns.
const MaxClientResults = 50

// SearchClients finds clients of the salon whose name contains q (any case,
// in any script: folded with ICU, not the database's locale)
// or whose phone contains its digits (at least 3); the latest seen
// first: by when they last booked or came, or were added.
func (s *Service) SearchClients(ctx context.Context, salonID int64, q string) ([]ClientSummary, error) {
	salon, err := s.salonAs(ctx, salonID, RoleAdmin)
	if err != nil {
		return nil, err
	}
	q = strings.TrimSpace(q)
	if len(q) > 100 {
		q = q[:100]
	}
	digits := phoneDigits(q, salon.Country)
	like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q) + "%"
	rows, err := s.pool.Query(ctx, `
		SELECT c.id, c.salon_id, c.name, COALESCE(c.phone, ''), c.notes,
		       count(DISTINCT b.visit_id), count(DISTINCT b.visit_id) FILTER (WHERE b.status = 'no_show'),
		       COALESCE(max(b.starts_at) FILTER (WHERE b.status = 'completed' OR b.status = 'confirmed' AND b.starts_at < @now), 'epoch'),
		       COALESCE(min(b.starts_at) FILTER (WHERE b.status IN ('confirmed', 'pending') AND b.starts_at >= @now), 'epoch')
		FROM clients c LEFT JOIN bookings b ON b.client_id = c.id
		WHERE c.salon_id = @salon AND (@q = '' OR lower(c.name COLLATE "und-x-icu") LIKE lower(@like COLLATE "und-x-icu") OR (@digits <> '' AND c.phone LIKE '%' || @digits || '%'))
		GROUP BY c.id
		ORDER BY GREATEST(max(b.created_at), max(b.starts_at) FILTER (WHERE b.status = 'completed' OR b.status = 'confirmed' AND b.starts_at < @now),
		         c.created_at) DESC, c.id DESC LIMIT @limit`,
		pgx.NamedArgs{"salon": salonID, "q": q, "like": like, "digits": digits, "limit": MaxClientResults, "now": s.now()})
	if err != nil {
		return nil, fmt.Errorf("search clients: %w", dbErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ClientSummary, error) {
		var c ClientSummary
		err := r.Scan(&c.ID, &c.SalonID, &c.Name, &c.Phone, &c.Notes, &c.Bookings, &c.NoShows, &c.LastAt, &c.NextAt)
		for _, t := range []*time.Time{&c.LastAt, &c.NextAt} {
			if t.Unix() == 0 {
				*t = time.Time{}
			}
		}
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("search clients: %w", dbErr(err))
	}
	return out, nil
}

// UpdateClient changes a client's name and notes (the phone is who they
// are: a new number is a new client). Errors: ErrNotFound, ErrInvalid.
func (s *Service) UpdateClient(ctx context.Context, salonID, clientID int64, name, notes string) (*Client, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	fe := fieldErrors{}
	name = cleanText(fe, "name", name, MaxNameLen, oneLine, true)
	notes = cleanText(fe, "notes", notes, MaxNotesLen, multiLine, false)
	if err := fe.err(); err != nil {
		return nil, err
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE clients SET name = $3, notes = $4 WHERE salon_id = $1 AND id = $2`,
			salonID, clientID, name, notes)
		if err != nil {
			return fmt.Errorf("update client: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("client %d: %w", clientID, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.Client(ctx, salonID, clientID)
}

// ClientBookings lists a client's bookings, latest first (at most 200), as
// the staff caller sees them.
func (s *Service) ClientBookings(ctx context.Context, salonID, clientID int64) ([]View, error) {
	return s.ClientBookingsOn(ctx, salonID, clientID, time.Time{}, time.Time{})
}

// ClientBookingsOn is ClientBookings of the visits that start in [from,
// to) (zero times: any).
func (s *Service) ClientBookingsOn(ctx context.Context, salonID, clientID int64, from, to time.Time) ([]View, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	var since, until *time.Time // (nil: NULL, no bound)
	if !from.IsZero() {
		since, until = &from, &to
	}
	rows, err := s.pool.Query(ctx, `SELECT `+prefixed("b.", bookingColumns)+`, `+viewColumns+`, `+prefixed("s.", salonColumns)+viewFrom+`
		WHERE b.salon_id = $1 AND b.client_id = $2 AND b.visit_of IS NULL
		  AND ($3::timestamptz IS NULL OR (b.starts_at >= $3 AND b.starts_at < $4))
		ORDER BY b.starts_at DESC, b.id DESC LIMIT 200`, salonID, clientID, since, until)
	if err != nil {
		return nil, fmt.Errorf("client bookings: %w", dbErr(err))
	}
	out, err := s.collectViews(rows, callerOf(ctx))
	if err != nil {
		return nil, fmt.Errorf("client bookings: %w", dbErr(err))
	}
	if err := s.withSegments(ctx, out); err != nil { // a visit is one line
		return nil, fmt.Errorf("client bookings: %w", dbErr(err))
	}
	return out, nil
}

// Event is a line of a booking's history.
type Event struct {
	Action  string // created, cancelled, rescheduled, completed, no_show, hold_expired, ...
	Actor   Actor
	By      string         // the panel user's email, for staff changes
	Details map[string]any // what changed (from, to, reason, ...)
	At      time.Time
}

// History returns the booking's events, oldest first, to a caller who may
// see the booking; a later service of a visit's, with the visit's (a
// move, a payment: recorded on its first service), each change said once.
// Errors: ErrNotFound.
func (s *Service) History(ctx context.Context, salonID, bookingID int64) ([]Event, error) {
	if _, err := s.BookingView(ctx, salonID, bookingID); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `
		SELECT e.action, e.actor_kind, COALESCE(e.actor_id, 0), e.channel, e.details, e.at,
		       COALESCE(CASE WHEN e.actor_kind = 'admin' THEN u.email END, '')
		FROM booking_events e LEFT JOIN users u ON u.id = e.actor_id AND e.actor_kind = 'admin'
		WHERE e.booking_id = $1
		   OR e.booking_id = (SELECT visit_id FROM bookings WHERE id = $1 AND visit_id <> id)
		      AND NOT EXISTS (SELECT 1 FROM booking_events x WHERE x.booking_id = $1 AND x.action = e.action AND x.at = e.at)
		ORDER BY e.id`, bookingID)
	if err != nil {
		return nil, fmt.Errorf("history: %w", dbErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) {
		var e Event
		var ch *string
		err := r.Scan(&e.Action, &e.Actor.Kind, &e.Actor.ID, &ch, &e.Details, &e.At, &e.By)
		if ch != nil {
			e.Actor.Channel = Channel(*ch)
		}
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("history: %w", dbErr(err))
	}
	return out, nil
}

// CompletePast marks confirmed bookings completed once the salon-local day
// they started on has ended (unless staff marked them no-show first), so
// that history and no-show counts mean something. It returns how many.
// Replicas may run it at once (SKIP LOCKED). Only the platform asks.
func (s *Service) CompletePast(ctx context.Context) (int, error) {
	if err := onlySystem(ctx); err != nil {
		return 0, err
	}
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `
			WITH due AS (
			    -- Visits by their heads (a visit completes whole), ended:
			    -- every service of it, processing and finish included.
			    SELECT b.id FROM bookings b JOIN salons s ON s.id = b.salon_id
			    WHERE b.status = 'confirmed' AND b.visit_of IS NULL AND b.starts_at < $1::timestamptz - interval '12 hours'
			      AND NOT EXISTS (SELECT 1 FROM bookings x WHERE (x.id = b.id OR x.visit_of = b.id)
			                      AND booking_slot_end(x.starts_at, x.duration_min + x.processing_min + x.finish_min) > $1)
			      AND (b.starts_at AT TIME ZONE s.timezone)::date < ($1::timestamptz AT TIME ZONE s.timezone)::date
			    ORDER BY b.starts_at LIMIT 1000 FOR UPDATE OF b SKIP LOCKED
			), upd AS (
			    UPDATE bookings b SET status = 'completed', updated_at = now() FROM due
			    WHERE (b.id = due.id OR b.visit_of = due.id) AND b.status = 'confirmed'
			    RETURNING b.id, b.salon_id
			), ev AS (
			    INSERT INTO booking_events (salon_id, booking_id, action, actor_kind, channel, details)
			    SELECT salon_id, id, 'completed', 'system', 'system', '{"from": "confirmed", "auto": true}' FROM upd
			)
			SELECT count(*) FROM upd`, s.now()).Scan(&n)
	})
	return n, err
}

// Setup is how far a salon is from taking bookings online: what it has of
// each thing a client needs.
type Setup struct {
	Services        int   // active services
	Masters         int   // active masters
	MastersOffering int   // active masters who do an active service
	MastersWorking  int   // of those, masters with working hours from now on
	FirstMaster     int64 // a master to set the hours of (0: none)
}

// Ready reports whether clients can book: a service, a master who does it
// and hours to do it in.
func (s Setup) Ready() bool { return s.Services > 0 && s.MastersOffering > 0 && s.MastersWorking > 0 }

// SetupOf reads the salon's Setup, to its staff.
func (s *Service) SetupOf(ctx context.Context, salonID int64) (*Setup, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	var st Setup
	err := s.pool.QueryRow(ctx, `
		WITH offering AS (
		    SELECT DISTINCT m.id FROM masters m JOIN master_services ms ON ms.master_id = m.id
		    JOIN services sv ON sv.id = ms.service_id AND sv.active
		    WHERE m.salon_id = $1 AND m.active)
		SELECT (SELECT count(*) FROM services WHERE salon_id = $1 AND active),
		       (SELECT count(*) FROM masters WHERE salon_id = $1 AND active),
		       (SELECT count(*) FROM offering),
		       (SELECT count(DISTINCT master_id) FROM shifts WHERE salon_id = $1 AND ends_at > $2 AND master_id IN (SELECT id FROM offering)),
		       COALESCE((SELECT min(id) FROM offering WHERE id NOT IN (SELECT master_id FROM shifts WHERE salon_id = $1 AND ends_at > $2)),
		                (SELECT min(id) FROM masters WHERE salon_id = $1 AND active), 0)`,
		salonID, s.now()).Scan(&st.Services, &st.Masters, &st.MastersOffering, &st.MastersWorking, &st.FirstMaster)
	if err != nil {
		return nil, fmt.Errorf("setup: %w", dbErr(err))
	}
	return &st, nil
}
