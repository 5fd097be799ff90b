package booking

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"salon/i18n"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Batches write many rows of one kind at once, for imports: each row is
// accepted whole or rejected with its reason, by natural key (a re-import
// updates, never duplicates), in few round trips. The caller the context
// carries (As; an import is ByImport) is held to the salon as everywhere,
// and the changes are audited under its name. With dry set, every
// transaction is rolled back instead of committed: the results are what a
// real run would report.

// Outcome is what became of one row of a batch.
type Outcome string

// Outcomes.
const (
	Created   Outcome = "created"
	Updated   Outcome = "updated"
	Unchanged Outcome = "unchanged"
	Rejected  Outcome = "rejected"
)

// RowResult is the outcome of one row. A rejected row has Err (a
// *ValidationError names the field) and, for a booking, the nearest free
// starts.
type RowResult struct {
	Outcome      Outcome
	Err          error
	Alternatives []Slot
	// Part: of a schedule's day refused for one of its shifts, which
	// (1-based, in the order given; 0: the day as a whole).
	Part int
}

func rejected(field, why string, args ...any) RowResult {
	return RowResult{Outcome: Rejected, Err: Invalid(field, why, args...)}
}

// errDryRun ends a rehearsed transaction: inTx rolls back on any error.
var errDryRun = errors.New("dry run")

// batchTx runs fn in a transaction that commits, or, when dry, is rolled
// back.
func (s *Service) batchTx(ctx context.Context, dry bool, fn func(tx pgx.Tx) error) error {
	if r, ok := ctx.Value(rehearsalKey{}).(*rehearsal); ok {
		return r.step(ctx, fn)
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if dry {
			return errDryRun
		}
		return nil
	})
	if errors.Is(err, errDryRun) {
		return nil
	}
	return err
}

// A rehearsal runs several imports (services, then masters, then the
// schedule, clients and bookings) in one transaction that is always rolled
// back: each sees what the ones before it would have written, so an owner
// checks a whole salon's files before anything is written.
type rehearsal struct {
	mu sync.Mutex // one import at a time: the transaction is one connection's
	tx pgx.Tx
}

type rehearsalKey struct{}

// Rehearse runs fn with a context in which every import's batch writes
// into one transaction, rolled back when fn returns (whatever the imports'
// dry flags say): a dry run of several files that depend on each other.
// The caller names who asks (an import, or the system).
func (s *Service) Rehearse(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := callerOf(ctx).check(); err != nil {
		return err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("rehearse: %w", dbErr(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // always: a rehearsal writes nothing
	if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true), set_config('salon.actor', $2, true)`,
		fmt.Sprint(max(s.lockWait.Milliseconds(), 1)), callerOf(ctx).auditName()); err != nil {
		return fmt.Errorf("rehearse: %w", dbErr(err))
	}
	return fn(context.WithValue(ctx, rehearsalKey{}, &rehearsal{tx: tx}))
}

// read runs fn on the rehearsal's transaction.
func (r *rehearsal) read(fn func(q querier) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return dbErr(fn(r.tx))
}

// step runs one batch in a savepoint of the rehearsal: a batch that fails
// leaves nothing; one that succeeds stays for the batches after it.
func (r *rehearsal) step(ctx context.Context, fn func(tx pgx.Tx) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp, err := r.tx.Begin(ctx)
	if err != nil {
		return fmt.Errorf("rehearse: %w", dbErr(err))
	}
	defer sp.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after release
	if err := fn(sp); err != nil {
		return dbErr(err)
	}
	if err := sp.Commit(ctx); err != nil {
		return fmt.Errorf("rehearse: %w", dbErr(err))
	}
	return nil
}

// ServiceRow is a row of a services import: the service, and which of its
// optional columns the file has (a missing column keeps the stored value).
type ServiceRow struct {
	SalonService
	HasBuffer, HasDeposit bool
	// HasProcessing: the file has processing or finish columns (else
	// a re-import keeps the service's).
	HasProcessing bool
}

// ImportServices creates or updates services by name.
func (s *Service) ImportServices(ctx context.Context, salonID int64, rows []ServiceRow, dry bool) ([]RowResult, error) {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return nil, err
	}
	out := make([]RowResult, len(rows))
	names := make([]string, len(rows))
	for i := range rows {
		names[i] = strings.TrimSpace(rows[i].Name)
	}
	err := s.batchTx(ctx, dry, func(tx pgx.Tx) error {
		cur := map[string]SalonService{}
		r, err := tx.Query(ctx, `SELECT `+serviceColumns+` FROM services
			WHERE salon_id = $1 AND name = ANY($2) ORDER BY id FOR UPDATE`, salonID, names)
		if err != nil {
			return fmt.Errorf("import services: %w", err)
		}
		existing, err := pgx.CollectRows(r, func(r pgx.CollectableRow) (SalonService, error) { return scanService(r) })
		if err != nil {
			return fmt.Errorf("import services: %w", err)
		}
		for _, sv := range existing {
			cur[sv.Name] = sv
		}
		seen := map[string]bool{}
		for i, row := range rows {
			if key := strings.ToLower(strings.TrimSpace(row.Name)); seen[key] {
				out[i] = rejected("name", "given twice: this name is on an earlier row")
				continue
			} else {
				seen[key] = true
			}
			old, found := cur[strings.TrimSpace(row.Name)]
			in := row.SalonService
			in.Active = true
			if found {
				if !row.HasBuffer {
					in.BufferMin = old.BufferMin
				}
				if !row.HasDeposit {
					in.Deposit = old.Deposit
				}
				if !row.HasProcessing {
					in.ProcessingMin, in.FinishMin = old.ProcessingMin, old.FinishMin
				}
			}
			if err := in.normalize(); err != nil {
				out[i] = RowResult{Outcome: Rejected, Err: err}
				continue
			}
			switch {
			case !found:
				if err := tx.QueryRow(ctx, `INSERT INTO services (salon_id, name, duration_min, buffer_min, price, deposit, processing_min, finish_min)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, salonID, in.Name, in.DurationMin, in.BufferMin, in.Price, in.Deposit,
					in.ProcessingMin, in.FinishMin).Scan(&in.ID); err != nil {
					return fmt.Errorf("import services: %w", err)
				}
				out[i].Outcome = Created
			case old.DurationMin == in.DurationMin && old.BufferMin == in.BufferMin && old.Price == in.Price &&
				old.Deposit == in.Deposit && old.ProcessingMin == in.ProcessingMin && old.FinishMin == in.FinishMin && old.Active:
				in.ID = old.ID
				out[i].Outcome = Unchanged
			default:
				in.ID = old.ID
				if _, err := tx.Exec(ctx, `UPDATE services SET duration_min = $2, buffer_min = $3, price = $4, deposit = $5, active = true,
					       processing_min = $6, finish_min = $7
					WHERE id = $1`, old.ID, in.DurationMin, in.BufferMin, in.Price, in.Deposit, in.ProcessingMin, in.FinishMin); err != nil {
					return fmt.Errorf("import services: %w", err)
				}
				out[i].Outcome = Updated
			}
			cur[in.Name] = in
		}
		return nil
	})
	return out, err
}

// MasterRow is a row of a masters import: a name, and the optional phone
// and service names (a missing column keeps what is stored; the services
// listed replace the master's).
type MasterRow struct {
	Name     string
	Phone    string
	Services []string
	HasPhone bool
	// HasServices says the row lists services (an empty list keeps them).
	HasServices bool
	// NoServices says the row lists none, on purpose ("—", as the export
	// writes a master who does nothing): a new master does nothing, a
	// known one no longer does theirs.
	NoServices bool
}

// ImportMasters creates or updates masters by name.
func (s *Service) ImportMasters(ctx context.Context, salonID int64, rows []MasterRow, dry bool) ([]RowResult, error) {
	salon, err := s.salonAs(ctx, salonID, RoleOwner)
	if err != nil {
		return nil, err
	}
	out := make([]RowResult, len(rows))
	err = s.batchTx(ctx, dry, func(tx pgx.Tx) error {
		svcByName, err := serviceIDs(ctx, tx, salonID)
		if err != nil {
			return err
		}
		names := make([]string, len(rows))
		for i := range rows {
			names[i] = CleanName(rows[i].Name)
		}
		type cur struct {
			id     int64
			phone  string
			active bool
			offers []int64
		}
		have := map[string]*cur{}
		if err := eachRow(ctx, tx, func(r pgx.Row) error {
			var c cur
			var name string
			if err := r.Scan(&c.id, &name, &c.phone, &c.active, &c.offers); err != nil {
				return err
			}
			have[name] = &c
			return nil
		}, `SELECT m.id, m.name, COALESCE(m.phone, ''), m.active,
			COALESCE((SELECT array_agg(service_id ORDER BY service_id) FROM master_services WHERE master_id = m.id), '{}')
			FROM masters m WHERE m.salon_id = $1 AND m.name = ANY($2) ORDER BY m.id FOR UPDATE`, salonID, names); err != nil {
			return fmt.Errorf("import masters: %w", err)
		}
		seen := map[string]bool{}
		var active []int64 // the salon's services on offer, read when needed
		for i, row := range rows {
			m := Master{Name: row.Name, Phone: row.Phone}
			var want []int64
			bad := ""
			for _, n := range row.Services {
				id, ok := svcByName[strings.ToLower(strings.TrimSpace(n))]
				if !ok {
					bad = n
					break
				}
				if !slices.Contains(want, id) {
					want = append(want, id)
				}
			}
			// Every column at fault, in one report.
			err := m.normalize(salon.Country)
			if bad != "" {
				ve := unknown("services", "no service %q in this salon", bad)
				var other *ValidationError
				if errors.As(err, &other) {
					maps.Copy(ve.Fields, other.Fields)
				}
				err = ve
			}
			if err != nil {
				out[i] = RowResult{Outcome: Rejected, Err: err}
				continue
			}
			if seen[strings.ToLower(m.Name)] {
				out[i] = rejected("name", "given twice: this name is on an earlier row")
				continue
			}
			seen[strings.ToLower(m.Name)] = true
			slices.Sort(want)
			if want == nil {
				want = []int64{} // (an array, not NULL, for ANY below)
			}
			c, found := have[m.Name]
			if !found && len(want) == 0 && !row.NoServices {
				// A new master with no services named does every service
				// the salon offers, as one added in the panel does (until
				// some are unticked).
				if active == nil {
					if err := tx.QueryRow(ctx, `SELECT COALESCE(array_agg(id ORDER BY id), '{}') FROM services WHERE salon_id = $1 AND active`,
						salonID).Scan(&active); err != nil {
						return fmt.Errorf("import masters: %w", err)
					}
				}
				row.HasServices, want = true, active
			}
			if !found {
				c = &cur{}
				if err := tx.QueryRow(ctx, `INSERT INTO masters (salon_id, name, phone) VALUES ($1, $2, NULLIF($3, '')) RETURNING id`,
					salonID, m.Name, m.Phone).Scan(&c.id); err != nil {
					return fmt.Errorf("import masters: %w", err)
				}
				c.phone, c.active = m.Phone, true
				have[m.Name] = c
				out[i].Outcome = Created
			} else {
				out[i].Outcome = Unchanged
				if (row.HasPhone && c.phone != m.Phone) || !c.active {
					if !row.HasPhone {
						m.Phone = c.phone
					}
					if _, err := tx.Exec(ctx, `UPDATE masters SET phone = NULLIF($2, ''), active = true WHERE id = $1`, c.id, m.Phone); err != nil {
						return fmt.Errorf("import masters: %w", err)
					}
					c.phone, c.active = m.Phone, true
					out[i].Outcome = Updated
				}
			}
			if row.HasServices && (len(want) > 0 || row.NoServices) && !slices.Equal(want, c.offers) {
				if _, err := tx.Exec(ctx, `DELETE FROM master_services WHERE master_id = $1 AND NOT service_id = ANY($2)`, c.id, want); err != nil {
					return fmt.Errorf("import masters: %w", err)
				}
				if _, err := tx.Exec(ctx, `INSERT INTO master_services (salon_id, master_id, service_id)
					SELECT $1, $2, unnest($3::bigint[]) ON CONFLICT (master_id, service_id) DO NOTHING`, salonID, c.id, want); err != nil {
					return fmt.Errorf("import masters: %w", err)
				}
				c.offers = want
				if out[i].Outcome == Unchanged {
					out[i].Outcome = Updated
				}
			}
		}
		return nil
	})
	return out, err
}

// serviceIDs maps the salon's service names (lower case) to ids.
func serviceIDs(ctx context.Context, q querier, salonID int64) (map[string]int64, error) {
	out, err := idsByName(ctx, q, `SELECT id, name FROM services WHERE salon_id = $1`, salonID)
	if err != nil {
		return nil, fmt.Errorf("services: %w", err)
	}
	return out, nil
}

// masterIDs maps the salon's master names (lower case) to ids.
func masterIDs(ctx context.Context, q querier, salonID int64) (map[string]int64, error) {
	out, err := idsByName(ctx, q, `SELECT id, name FROM masters WHERE salon_id = $1`, salonID)
	if err != nil {
		return nil, fmt.Errorf("masters: %w", err)
	}
	return out, nil
}

// idsByName maps the lower-cased names of a query's (id, name) rows to the ids.
func idsByName(ctx context.Context, q querier, sql string, salonID int64) (map[string]int64, error) {
	out := map[string]int64{}
	return out, eachRow(ctx, q, func(r pgx.Row) error {
		var id int64
		var name string
		if err := r.Scan(&id, &name); err != nil {
			return err
		}
		out[strings.ToLower(name)] = id
		return nil
	}, sql, salonID)
}

// ClientRow is a row of a clients import: the phone (the key), the name,
// and the optional Telegram user id and notes (a missing column keeps what
// is stored). A Telegram id given by the salon becomes the client's
// identity on Telegram (verified by the import: the salon vouches).
type ClientRow struct {
	Name, Phone, Telegram, Notes string
	HasTelegram, HasNotes        bool
}

// ImportClients creates or updates clients by phone.
func (s *Service) ImportClients(ctx context.Context, salonID int64, rows []ClientRow, dry bool) ([]RowResult, error) {
	salon, err := s.salonAs(ctx, salonID, RoleOwner)
	if err != nil {
		return nil, err
	}
	out := make([]RowResult, len(rows))
	phones := make([]string, len(rows))
	for i := range rows {
		fe := fieldErrors{}
		in := ClientInput{Name: rows[i].Name, Phone: rows[i].Phone}
		in.normalize(fe, "", salon.Country)
		rows[i].Name, rows[i].Phone = in.Name, in.Phone
		if rows[i].HasNotes {
			rows[i].Notes = cleanText(fe, "notes", rows[i].Notes, MaxNotesLen, multiLine, false)
		}
		if t := strings.TrimSpace(rows[i].Telegram); rows[i].HasTelegram && t != "" {
			if id, err := strconv.ParseInt(strings.TrimPrefix(t, "tg:"), 10, 64); err != nil || id <= 0 {
				fe.add("telegram", "a Telegram user id (a number)")
			} else {
				rows[i].Telegram = strconv.FormatInt(id, 10)
			}
		} else {
			rows[i].Telegram = ""
		}
		if err := fe.err(); err != nil {
			out[i] = RowResult{Outcome: Rejected, Err: err}
			continue
		}
		if slices.Contains(phones[:i], in.Phone) {
			out[i] = rejected("phone", "given twice: this phone is on an earlier row")
			continue
		}
		phones[i] = in.Phone
	}
	err = s.batchTx(ctx, dry, func(tx pgx.Tx) error {
		type cur struct {
			id              int64
			name, notes, tg string
		}
		have := map[string]*cur{}
		if err := eachRow(ctx, tx, func(r pgx.Row) error {
			var c cur
			var phone string
			if err := r.Scan(&c.id, &phone, &c.name, &c.notes, &c.tg); err != nil {
				return err
			}
			have[phone] = &c
			return nil
		}, `SELECT c.id, c.phone, c.name, c.notes,
			COALESCE((SELECT min(external_id) FROM client_identities i WHERE i.client_id = c.id AND i.channel = 'telegram'), '')
			FROM clients c WHERE c.salon_id = $1 AND c.phone = ANY($2) ORDER BY c.id FOR UPDATE`, salonID, phones); err != nil {
			return fmt.Errorf("import clients: %w", err)
		}
		batch := &pgx.Batch{}
		for i, row := range rows {
			if out[i].Outcome == Rejected {
				continue
			}
			c, found := have[row.Phone]
			notes := row.Notes
			if found && !row.HasNotes {
				notes = c.notes
			}
			switch {
			case !found:
				c = &cur{name: row.Name, notes: notes}
				have[row.Phone] = c
				batch.Queue(`INSERT INTO clients (salon_id, name, phone, notes) VALUES ($1, $2, $3, $4)
					ON CONFLICT (salon_id, phone) WHERE phone IS NOT NULL DO UPDATE SET name = EXCLUDED.name, notes = EXCLUDED.notes`,
					salonID, row.Name, row.Phone, notes)
				out[i].Outcome = Created
			case c.name != row.Name || c.notes != notes:
				batch.Queue(`UPDATE clients SET name = $3, notes = $4 WHERE salon_id = $1 AND phone = $2`, salonID, row.Phone, row.Name, notes)
				c.name, c.notes = row.Name, notes
				out[i].Outcome = Updated
			default:
				out[i].Outcome = Unchanged
			}
			if row.Telegram != "" && row.Telegram != c.tg {
				batch.Queue(`INSERT INTO client_identities (salon_id, client_id, channel, external_id, verified_by)
					SELECT $1, id, 'telegram', $3, 'import' FROM clients WHERE salon_id = $1 AND phone = $2
					ON CONFLICT (salon_id, channel, external_id) DO UPDATE SET client_id = EXCLUDED.client_id,
					    verified_by = EXCLUDED.verified_by, verified_at = now()`, salonID, row.Phone, row.Telegram)
				c.tg = row.Telegram
				if out[i].Outcome == Unchanged {
					out[i].Outcome = Updated
				}
			}
		}
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return fmt.Errorf("import clients: %w", err)
		}
		return nil
	})
	return out, err
}

// DayRow is a master's shifts on one day, as a schedule import gives them:
// they replace the day's shifts.
type DayRow struct {
	Master string
	Date   Date
	Shifts []ShiftInput
}

// ImportSchedule replaces each master's shifts on each day given. A day
// whose change would leave an active booking outside working hours is
// rejected (naming the bookings); so is a day whose shifts overlap each
// other or a neighbouring day's. The days are written in one transaction:
// the masters' locks, one read of the current shifts, one check of the
// bookings, one delete and one COPY.
func (s *Service) ImportSchedule(ctx context.Context, salonID int64, days []DayRow, dry bool) ([]RowResult, error) {
	salon, err := s.salonAs(ctx, salonID, RoleAdmin)
	if err != nil {
		return nil, err
	}
	loc := salon.Location()
	out := make([]RowResult, len(days))
	type day struct {
		i      int
		master int64
		date   Date
		shifts []shift
	}
	err = s.batchTx(ctx, dry, func(tx pgx.Tx) error {
		ids, err := masterIDs(ctx, tx, salonID)
		if err != nil {
			return err
		}
		var todo []day
		seen := map[[2]int64]bool{}
		var lockIDs []int64
		for i, d := range days {
			id, ok := ids[strings.ToLower(CleanName(d.Master))]
			if !ok {
				out[i] = RowResult{Outcome: Rejected, Err: unknown("master", "no such master in this salon")}
				continue
			}
			key := [2]int64{id, int64(d.Date.sortKey())}
			if seen[key] {
				out[i] = rejected("date", "this master's day is given twice")
				continue
			}
			seen[key] = true
			var shifts []shift
			var bad error
			part := 0
			for k, x := range d.Shifts {
				sh, err := x.instants(d.Date, loc)
				if err != nil {
					bad, part = err, k+1
					break
				}
				shifts = append(shifts, sh)
			}
			slices.SortFunc(shifts, func(a, b shift) int { return a.start.Compare(b.start) })
			for k := 1; k < len(shifts) && bad == nil; k++ {
				if shifts[k].start.Before(shifts[k-1].end) {
					bad = i18n.New("shifts of one day must not overlap")
				}
			}
			if bad != nil {
				out[i] = RowResult{Outcome: Rejected, Err: invalidBy(shiftField(bad), bad), Part: part}
				continue
			}
			todo = append(todo, day{i: i, master: id, date: d.Date, shifts: shifts})
			if !slices.Contains(lockIDs, id) {
				lockIDs = append(lockIDs, id)
			}
		}
		if len(todo) == 0 {
			return nil
		}
		if err := lockManyMasters(ctx, tx, lockIDs); err != nil {
			return fmt.Errorf("import schedule: %w", err)
		}
		ms, ds := make([]int64, len(todo)), make([]time.Time, len(todo))
		for k, d := range todo {
			ms[k], ds[k] = d.master, d.date.dbDate()
		}
		old := map[[2]int64][]shift{}
		if err := eachRow(ctx, tx, func(r pgx.Row) error {
			var m int64
			var d time.Time
			sh, err := scanShift(r, &m, &d)
			if err != nil {
				return err
			}
			k := [2]int64{m, int64(DateOf(d).sortKey())}
			old[k] = append(old[k], sh)
			return nil
		}, `SELECT s.master_id, s.work_date, s.starts_at, s.ends_at, s.break_starts_at, s.break_ends_at
			FROM shifts s JOIN unnest($2::bigint[], $3::date[]) x(m, d) ON s.master_id = x.m AND s.work_date = x.d
			WHERE s.salon_id = $1 ORDER BY s.starts_at`, salonID, ms, ds); err != nil {
			return fmt.Errorf("import schedule: %w", err)
		}
		// Which days change, and the bookings their old shifts covered.
		var changed []day
		var bm []int64
		var bf, bt []time.Time
		for _, d := range todo {
			prev := old[[2]int64{d.master, int64(d.date.sortKey())}]
			switch {
			case sameShifts(prev, d.shifts):
				out[d.i].Outcome = Unchanged
				continue
			case len(prev) == 0:
				out[d.i].Outcome = Created
			default:
				out[d.i].Outcome = Updated
				bm = append(bm, d.master)
				bf, bt = append(bf, prev[0].start), append(bt, prev[len(prev)-1].end)
			}
			changed = append(changed, d)
		}
		if len(bm) > 0 {
			r, err := tx.Query(ctx, `SELECT b.master_id, b.id, b.starts_at, b.duration_min, b.processing_min, b.finish_min FROM bookings b
				JOIN unnest($2::bigint[], $3::timestamptz[], $4::timestamptz[]) x(m, f, t)
				  ON b.master_id = x.m AND b.starts_at < x.t
				 AND booking_slot_end(b.starts_at, b.duration_min + b.processing_min + b.finish_min) > x.f
				WHERE b.salon_id = $1 AND b.status IN ('pending', 'confirmed')`, salonID, bm, bf, bt)
			if err != nil {
				return fmt.Errorf("import schedule: %w", err)
			}
			bks, err := pgx.CollectRows(r, scanWorkOf)
			if err != nil {
				return fmt.Errorf("import schedule: %w", err)
			}
			kept := changed[:0]
			for _, d := range changed {
				prev := old[[2]int64{d.master, int64(d.date.sortKey())}]
				var lost []LostBooking
				for _, b := range bks {
					if b.master == d.master && b.coveredBy(prev) && !b.coveredBy(d.shifts) {
						lost = append(lost, LostBooking{ID: b.id, StartsAt: b.start.In(loc)})
					}
				}
				if len(lost) > 0 {
					out[d.i] = RowResult{Outcome: Rejected, Err: &LostBookingsError{Bookings: lost}}
					continue
				}
				kept = append(kept, d)
			}
			changed = kept
		}
		if len(changed) == 0 {
			return nil
		}
		if err := writeDays(ctx, tx, salonID, changed, func(d day) (int64, Date, []shift) { return d.master, d.date, d.shifts }); err == nil {
			return nil
		} else if pgCode(err) != pgExclusionViolation {
			return err
		}
		// Some day overlaps a neighbouring day's shift: write the days one
		// by one, each under a savepoint, and reject those that overlap.
		for _, d := range changed {
			err := writeDays(ctx, tx, salonID, []day{d}, func(d day) (int64, Date, []shift) { return d.master, d.date, d.shifts })
			if pgCode(err) == pgExclusionViolation {
				out[d.i] = rejected("start", "overlaps a shift of the day before or after")
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// writeDays replaces the shifts of the days under a savepoint (rolled back
// to when it fails): one delete, one COPY.
func writeDays[D any](ctx context.Context, tx pgx.Tx, salonID int64, days []D, get func(D) (int64, Date, []shift)) error {
	if _, err := tx.Exec(ctx, `SAVEPOINT days`); err != nil {
		return fmt.Errorf("import schedule: %w", err)
	}
	ms, ds := make([]int64, len(days)), make([]time.Time, len(days))
	var rows [][]any
	for k, d := range days {
		m, date, shifts := get(d)
		ms[k], ds[k] = m, date.dbDate()
		for _, sh := range shifts {
			var bs, be any
			if !sh.breakStart.IsZero() {
				bs, be = sh.breakStart, sh.breakEnd
			}
			rows = append(rows, []any{salonID, m, date.dbDate(), sh.start, sh.end, bs, be})
		}
	}
	_, err := tx.Exec(ctx, `DELETE FROM shifts s USING unnest($2::bigint[], $3::date[]) x(m, d)
		WHERE s.salon_id = $1 AND s.master_id = x.m AND s.work_date = x.d`, salonID, ms, ds)
	if err == nil && len(rows) > 0 {
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"shifts"},
			[]string{"salon_id", "master_id", "work_date", "starts_at", "ends_at", "break_starts_at", "break_ends_at"},
			pgx.CopyFromRows(rows))
	}
	if err != nil {
		if _, rerr := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT days`); rerr != nil {
			return fmt.Errorf("import schedule: %w", rerr)
		}
		return err
	}
	if _, err := tx.Exec(ctx, `RELEASE SAVEPOINT days`); err != nil {
		return fmt.Errorf("import schedule: %w", err)
	}
	return nil
}

func sameShifts(a, b []shift) bool {
	return slices.EqualFunc(a, b, func(x, y shift) bool {
		return x.start.Equal(y.start) && x.end.Equal(y.end) && x.breakStart.Equal(y.breakStart) && x.breakEnd.Equal(y.breakEnd)
	})
}

// BookingRow is a row of a bookings import. Its natural key is the master
// and the start: the same client's booking already there is updated
// (service, status), never doubled; another client's is never taken over
// (the row is rejected as a taken time). Status may be confirmed (the default),
// completed or no_show.
type BookingRow struct {
	Master, Service string
	StartsAt        time.Time
	Phone, Name     string
	Status          Status
	// Visit, when not "", names the visit the row is a service of: the
	// rows of one visit (in one file) are booked as one, all or none.
	Visit string
}

// MaxBookingGroup is the most rows of one master written in one transaction.
const MaxBookingGroup = 500

// ImportBookings books the rows, grouped per master: each group in one
// transaction under the master's lock, each row under a savepoint against
// the exclusion constraint, the inserts pipelined. Past times and times
// outside shifts are allowed (history); an overlap with another booking,
// in the salon or earlier in the file, rejects the row with the nearest
// free starts. Imported bookings notify nobody.
func (s *Service) ImportBookings(ctx context.Context, salonID int64, rows []BookingRow, dry bool) ([]RowResult, error) {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return nil, err
	}
	var (
		cat        *catalog
		mids, sids map[string]int64
	)
	read := func(q querier) error {
		var err error
		if mids, err = masterIDs(ctx, q, salonID); err != nil {
			return err
		}
		sids, err = serviceIDs(ctx, q, salonID)
		return err
	}
	if r, ok := ctx.Value(rehearsalKey{}).(*rehearsal); ok {
		// A rehearsal reads what the imports before it would have made.
		err := r.read(func(q querier) error {
			var err error
			if cat, err = loadCatalog(ctx, q, salonID); err != nil {
				return err
			}
			return read(q)
		})
		if err != nil {
			return nil, err
		}
	} else {
		var err error
		if cat, err = s.currentCatalog(ctx, salonID); err != nil {
			return nil, err
		}
		if err := read(s.pool); err != nil {
			return nil, err
		}
	}
	country := cat.salon.Country
	out := make([]RowResult, len(rows))
	caller := callerOf(ctx)
	actor := Actor{Kind: ActorSystem, Channel: ChannelImport}
	if caller.kind == callerStaff {
		actor = Actor{Kind: ActorAdmin, ID: caller.user.ID, Channel: ChannelPanel}
	}
	groups := map[int64][]int{}
	var order []int64
	prepared := make([]Booking, len(rows))
	clients := make([]ClientInput, len(rows))
	for i, r := range rows {
		fe := fieldErrors{}
		m, okM := mids[strings.ToLower(CleanName(r.Master))]
		sv, okS := sids[strings.ToLower(strings.TrimSpace(r.Service))]
		if !okM {
			out[i] = RowResult{Outcome: Rejected, Err: unknown("master", "no such master in this salon")}
			continue
		}
		if !okS {
			out[i] = RowResult{Outcome: Rejected, Err: unknown("service", "no such service in this salon")}
			continue
		}
		o, offered := cat.offers[[2]int64{m, sv}]
		if !offered {
			out[i] = rejected("service", "this master does not do this service")
			continue
		}
		c := ClientInput{Name: r.Name, Phone: r.Phone}
		c.normalize(fe, "client_", country)
		if c.Name == "" {
			delete(fe, "client_name") // the name is optional: the phone is the client
		}
		status := cmpOr(string(r.Status), string(StatusConfirmed))
		switch Status(status) {
		case StatusConfirmed, StatusCompleted, StatusNoShow:
		default:
			fe.add("status", "confirmed, completed or no_show")
		}
		if r.StartsAt.IsZero() {
			fe.add("start", "required")
		}
		if err := fe.err(); err != nil {
			out[i] = RowResult{Outcome: Rejected, Err: err}
			continue
		}
		svc := cat.services[sv]
		prepared[i] = Booking{SalonID: salonID, MasterID: m, ServiceID: sv, StartsAt: r.StartsAt.Truncate(time.Minute),
			DurationMin: o.durationMin, BufferMin: svc.BufferMin, ProcessingMin: svc.ProcessingMin, FinishMin: svc.FinishMin,
			Status: Status(status), Source: SourceImport,
			Price: o.price, Deposit: svc.Deposit, ContactName: c.Name}
		clients[i] = c
		if _, ok := groups[m]; !ok {
			order = append(order, m)
		}
		groups[m] = append(groups[m], i)
	}
	visits, visitOrder := visitGroups(rows, out, groups)
	now := s.now()
	alternatives := func(q querier, i int) error {
		b := prepared[i]
		alts, err := s.searchAlternatives(ctx, q, salonID, b.ServiceID, b.MasterID, b.StartsAt, now, 0, true)
		if err != nil {
			return err
		}
		out[i].Alternatives = alts
		out[i].Err = &SlotTakenError{Alternatives: alts}
		return nil
	}
	taken := func(i int) bool { return out[i].Outcome == Rejected && errors.Is(out[i].Err, ErrSlotTaken) }
	if dry {
		// A rehearsal of the whole chunk in one transaction, rolled back:
		// every master's lock at once (ascending), the groups, then the
		// alternatives as the real run would find them (seeing the
		// rehearsed rows).
		err := s.batchTx(ctx, true, func(tx pgx.Tx) error {
			if err := lockManyMasters(ctx, tx, order); err != nil {
				return fmt.Errorf("import bookings: %w", err)
			}
			for _, m := range order {
				if err := writeGroup(ctx, tx, m, groups[m], prepared, clients, actor, out); err != nil {
					return err
				}
			}
			for _, v := range visitOrder {
				if err := writeVisit(ctx, tx, visits[v], prepared, clients, actor, out); err != nil {
					return err
				}
			}
			for i := range out {
				if taken(i) {
					if err := alternatives(tx, i); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	for _, m := range order {
		idx := groups[m]
		for len(idx) > 0 {
			n := min(len(idx), MaxBookingGroup)
			group := idx[:n]
			if err := s.inTx(ctx, func(tx pgx.Tx) error {
				if err := lockMasters(ctx, tx, m); err != nil {
					return err
				}
				return writeGroup(ctx, tx, m, group, prepared, clients, actor, out)
			}); err != nil {
				return nil, err
			}
			idx = idx[n:]
		}
	}
	for _, v := range visitOrder {
		idx := visits[v]
		var ms []int64
		for _, i := range idx {
			ms = append(ms, prepared[i].MasterID)
		}
		if err := s.inTx(ctx, func(tx pgx.Tx) error {
			if err := lockMasters(ctx, tx, ms...); err != nil {
				return err
			}
			return writeVisit(ctx, tx, idx, prepared, clients, actor, out)
		}); err != nil {
			return nil, err
		}
	}
	// The nearest free starts for each row refused for an overlap, now
	// that every lock is released.
	for i := range out {
		if taken(i) {
			if err := alternatives(s.pool, i); err != nil {
				return nil, dbErr(err)
			}
		}
	}
	return out, nil
}

// visitGroups takes the rows of visits of several services out of the
// masters' groups: by visit, in the file's order (each visit's rows by
// start). A visit with a row refused already refuses all its rows.
func visitGroups(rows []BookingRow, out []RowResult, groups map[int64][]int) (map[string][]int, []string) {
	by := map[string][]int{}
	var order []string
	for i, r := range rows {
		if r.Visit == "" {
			continue
		}
		if _, ok := by[r.Visit]; !ok {
			order = append(order, r.Visit)
		}
		by[r.Visit] = append(by[r.Visit], i)
	}
	kept := order[:0]
	for _, v := range order {
		idx := by[v]
		if len(idx) < 2 {
			delete(by, v) // a visit of one: an ordinary row
			continue
		}
		for m, g := range groups {
			groups[m] = slices.DeleteFunc(g, func(i int) bool { return slices.Contains(idx, i) })
		}
		bad := slices.ContainsFunc(idx, func(i int) bool { return out[i].Outcome == Rejected })
		switch {
		case len(idx) > MaxVisitItems:
			for _, i := range idx {
				out[i] = rejected("visit", "at most %d services in one visit", MaxVisitItems)
			}
		case bad:
			for _, i := range idx {
				if out[i].Outcome != Rejected {
					out[i] = rejected("visit", "another row of this visit was rejected")
				}
			}
		default:
			slices.SortStableFunc(idx, func(a, b int) int { return rows[a].StartsAt.Compare(rows[b].StartsAt) })
			kept = append(kept, v)
			continue
		}
		delete(by, v)
	}
	return by, kept
}

// writeVisit writes the rows of one visit (by start) in the transaction,
// under its masters' locks (taken by the caller): all of them as one
// visit under a savepoint, or none. Rows of the visit already there, all
// of them, are unchanged; a visit is of one client, with one status.
func writeVisit(ctx context.Context, tx pgx.Tx, idx []int, prepared []Booking, clients []ClientInput, actor Actor, out []RowResult) error {
	head := prepared[idx[0]]
	for _, i := range idx[1:] {
		switch {
		case clients[i].Phone != clients[idx[0]].Phone:
			return rejectAll(out, idx, rejected("visit", "a visit's rows are of one client"))
		case prepared[i].Status != head.Status:
			return rejectAll(out, idx, rejected("visit", "a visit's rows have one status"))
		}
	}
	ms, starts := make([]int64, len(idx)), make([]time.Time, len(idx))
	for k, i := range idx {
		ms[k], starts[k] = prepared[i].MasterID, prepared[i].StartsAt
	}
	var found, same int
	if err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE b.visit_id = min_visit AND COALESCE(c.phone, '') = $3)
		FROM (SELECT b.*, min(b.visit_id) OVER () AS min_visit FROM bookings b
		      JOIN unnest($1::bigint[], $2::timestamptz[]) x (m, t) ON b.master_id = x.m AND b.starts_at = x.t
		      WHERE b.salon_id = $4 AND b.status <> 'cancelled') b
		JOIN clients c ON c.id = b.client_id`, ms, starts, clients[idx[0]].Phone, head.SalonID).Scan(&found, &same); err != nil {
		return fmt.Errorf("import visit: %w", err)
	}
	switch {
	case found == len(idx) && same == len(idx):
		for _, i := range idx {
			out[i].Outcome = Unchanged
		}
		return nil
	case found > 0:
		return rejectAll(out, idx, RowResult{Outcome: Rejected, Err: ErrSlotTaken})
	}
	rest := make([]Booking, 0, len(idx)-1)
	for _, i := range idx[1:] {
		sg := prepared[i]
		sg.HoldExpiresAt = head.HoldExpiresAt
		rest = append(rest, sg)
	}
	for _, i := range idx[1:] {
		head.Deposit += prepared[i].Deposit // one payment of the visit's deposits
	}
	batch := &pgx.Batch{}
	batch.Queue(`SAVEPOINT visit`)
	queueInsertBooking(batch, &head, clients[idx[0]], clientRecord{}, Identity{}, "", actor, nil, nil, nil, false, rest, nil)
	err := tx.SendBatch(ctx, batch).Close()
	if pgCode(err) == pgExclusionViolation {
		if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT visit`); err != nil {
			return fmt.Errorf("import visit: %w", err)
		}
		return rejectAll(out, idx, RowResult{Outcome: Rejected, Err: ErrSlotTaken})
	}
	if err != nil {
		return fmt.Errorf("import visit: %w", err)
	}
	for _, i := range idx {
		out[i].Outcome = Created
	}
	return nil
}

// rejectAll refuses every row of idx as r.
func rejectAll(out []RowResult, idx []int, r RowResult) error {
	for _, i := range idx {
		out[i] = r
	}
	return nil
}

// writeGroup writes one master's rows in the transaction, under the
// master's lock (taken by the caller).
func writeGroup(ctx context.Context, tx pgx.Tx, masterID int64, idx []int, prepared []Booking, clients []ClientInput,
	actor Actor, out []RowResult) error {
	starts := make([]time.Time, len(idx))
	for k, i := range idx {
		starts[k] = prepared[i].StartsAt
	}
	// What is already at these starts (the natural key).
	type cur struct {
		id, service int64
		phone       string
		status      Status
		visit       bool // a service of a visit of several: changed only with its visit
		paid        bool // paid with a balance: the file does not change it
	}
	have := map[int64]cur{}
	if err := eachRow(ctx, tx, func(r pgx.Row) error {
		var c cur
		var at time.Time
		if err := r.Scan(&c.id, &at, &c.service, &c.phone, &c.status, &c.visit, &c.paid); err != nil {
			return err
		}
		have[at.Unix()] = c
		return nil
	}, `SELECT b.id, b.starts_at, b.service_id, COALESCE(c.phone, ''), b.status,
		       b.visit_of IS NOT NULL OR EXISTS (SELECT 1 FROM bookings x WHERE x.visit_of = b.id),
		       EXISTS (SELECT 1 FROM balance_entries e WHERE e.booking_id = b.id)
		FROM bookings b JOIN clients c ON c.id = b.client_id
		WHERE b.master_id = $1 AND b.starts_at = ANY($2) AND b.status <> 'cancelled' FOR UPDATE OF b`, masterID, starts); err != nil {
		return fmt.Errorf("import bookings: %w", err)
	}
	// Every row under a savepoint, pipelined; a refused row is rolled
	// back alone and the rest sent again.
	written := map[int]bool{}
	pending := slices.Clone(idx)
	for len(pending) > 0 {
		batch := &pgx.Batch{}
		var sent []int
		for _, i := range pending {
			b := &prepared[i]
			c, exists := have[b.StartsAt.Unix()]
			switch {
			case exists && c.phone != clients[i].Phone:
				// Another client's booking holds this time: never taken over.
				out[i] = RowResult{Outcome: Rejected, Err: ErrSlotTaken}
				continue
			case exists && c.service == b.ServiceID && c.status == b.Status:
				out[i].Outcome = Unchanged
				continue
			case exists && c.paid:
				// Paid with a package or a certificate: its price, service
				// and status are the ledger's, not the file's.
				out[i] = rejected("service", "paid with a package or certificate: change it in the panel")
				continue
			case exists && c.visit:
				// One service of a visit never changes alone.
				out[i] = rejected("visit", "a service of a visit: give all the visit's rows, with its visit column")
				continue
			case exists:
				batch.Queue(`SAVEPOINT row`)
				queueUpdateBooking(batch, c.id, b, clients[i], func() { written[i] = true })
				out[i].Outcome = Updated
			default:
				batch.Queue(`SAVEPOINT row`)
				queueInsertBooking(batch, b, clients[i], clientRecord{}, Identity{}, "", actor, nil, nil, nil, false, nil, nil)
				batch.Queue(`SELECT`).Exec(func(pgconn.CommandTag) error { written[i] = true; return nil })
				out[i].Outcome = Created
			}
			batch.Queue(`RELEASE SAVEPOINT row`)
			sent = append(sent, i)
		}
		if len(sent) == 0 {
			return nil
		}
		err := tx.SendBatch(ctx, batch).Close()
		if err == nil {
			return nil
		}
		if pgCode(err) != pgExclusionViolation {
			return fmt.Errorf("import bookings: %w", err)
		}
		// The refused row is the first not written.
		bad := slices.IndexFunc(sent, func(i int) bool { return !written[i] })
		if bad < 0 {
			return fmt.Errorf("import bookings: %w", err)
		}
		if _, rerr := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT row; RELEASE SAVEPOINT row`); rerr != nil {
			return fmt.Errorf("import bookings: %w", rerr)
		}
		i := sent[bad]
		out[i] = RowResult{Outcome: Rejected, Err: ErrSlotTaken}
		pending = sent[bad+1:]
	}
	return nil
}

// queueUpdateBooking queues the update of the client's existing booking at
// the imported row's key: its service, terms and status.
func queueUpdateBooking(batch *pgx.Batch, id int64, b *Booking, c ClientInput, done func()) {
	batch.Queue(`
		WITH cl AS (
		    INSERT INTO clients (salon_id, name, phone) VALUES ($2, $3, $4)
		    ON CONFLICT (salon_id, phone) WHERE phone IS NOT NULL DO UPDATE SET
		        name = CASE WHEN clients.name = '' THEN EXCLUDED.name ELSE clients.name END
		    RETURNING id
		), u AS (
		    UPDATE bookings SET service_id = $5, duration_min = $6, buffer_min = $7, price = $8, deposit = $9,
		           status = $10, client_id = (SELECT id FROM cl), contact_name = $3, processing_min = $11, finish_min = $12,
		           updated_at = now()
		    WHERE id = $1 RETURNING id
		)
		INSERT INTO booking_events (salon_id, booking_id, action, actor_kind, channel, details)
		SELECT $2, id, 'imported', 'system', 'import', '{}' FROM u`,
		id, b.SalonID, c.Name, c.Phone, b.ServiceID, b.DurationMin, b.BufferMin, b.Price, b.Deposit, b.Status,
		b.ProcessingMin, b.FinishMin).
		Exec(func(pgconn.CommandTag) error { done(); return nil })
}
