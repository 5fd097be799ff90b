package booking

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The audit log (table audit_log) records every change made in the panel or
// by an import: who, what, which record, and the changed columns before and
// after. Triggers write it, in the transaction of the change, whenever that
// transaction names its actor; the core names it from the caller. So no
// code path can change a salon from the panel without leaving its row.

// auditName is how the caller's changes are recorded in the audit log; ""
// when they are not.
func (c Caller) auditName() string {
	switch c.kind {
	case callerStaff:
		if c.user.Email != "" {
			return c.user.Email
		}
		return fmt.Sprintf("user #%d", c.user.ID)
	case callerImport:
		return "import:" + c.file
	case callerSystem:
		if c.file != "" {
			return CommandActor + c.file
		}
	}
	return ""
}

// authorize checks that the caller ctx carries may act in the salon with
// at least role need (the owner may do everything an admin may). A staff
// caller of another salon gets ErrNotFound, as if the salon (or the record
// asked for) did not exist; an admin asking for an owner's action, a
// client or nobody, ErrForbidden.
func authorize(ctx context.Context, salonID int64, need Role) error {
	c := callerOf(ctx)
	if err := c.check(); err != nil {
		return err
	}
	switch c.kind {
	case callerSystem:
		return nil
	case callerImport:
		if c.user.SalonID != salonID {
			return fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
		}
		if c.user.ID != 0 && need == RoleOwner && c.user.Role != RoleOwner {
			return fmt.Errorf("only the salon's owner may: %w", ErrForbidden)
		}
		return nil
	case callerStaff:
		if c.user.SalonID != salonID {
			return fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
		}
		if need == RoleOwner && c.user.Role != RoleOwner {
			return fmt.Errorf("only the salon's owner may: %w", ErrForbidden)
		}
		return nil
	}
	return fmt.Errorf("not staff: %w", ErrForbidden)
}

// salonAs checks that the caller the context carries holds the role in
// the salon (authorize), and returns the salon.
func (s *Service) salonAs(ctx context.Context, salonID int64, need Role) (*Salon, error) {
	if err := authorize(ctx, salonID, need); err != nil {
		return nil, err
	}
	return getSalon(ctx, s.pool, salonID)
}

// AuditEntry is a row of the audit log.
type AuditEntry struct {
	ID       int64
	Actor    string
	Action   string // create, update, delete; for bookings the new status or reschedule
	Entity   string // salon, user, master, master_service, service, shift, client, booking
	EntityID int64
	Old, New map[string]any // the changed columns (nil for a create's old, a delete's new)
	At       time.Time
}

// AuditFilter narrows the audit log. Zero fields do not filter.
type AuditFilter struct {
	From, To Date   // salon-local days, inclusive
	Actor    string // exact actor
	Entity   string
	EntityID int64
	Limit    int // default and maximum MaxAuditRows
}

// MaxAuditRows is the most rows AuditLog returns.
const MaxAuditRows = 500

// AuditLog lists the salon's audit log, newest first. Staff only.
// Errors: ErrNotFound (another salon), ErrForbidden.
func (s *Service) AuditLog(ctx context.Context, salonID int64, f AuditFilter) ([]AuditEntry, error) {
	salon, err := s.salonAs(ctx, salonID, RoleAdmin)
	if err != nil {
		return nil, err
	}
	if f.Limit <= 0 || f.Limit > MaxAuditRows {
		f.Limit = MaxAuditRows
	}
	var from, to *time.Time
	if !f.From.IsZero() {
		t := f.From.Start(salon.Location())
		from = &t
	}
	if !f.To.IsZero() {
		t := f.To.AddDays(1).Start(salon.Location())
		to = &t
	}
	rows, err := s.pool.Query(ctx, `
		SELECT id, actor, action, entity, COALESCE(entity_id, 0), old, new, created_at FROM audit_log
		WHERE salon_id = @salon AND (@from::timestamptz IS NULL OR created_at >= @from)
		  AND (@to::timestamptz IS NULL OR created_at < @to)
		  AND (@actor = '' OR actor = @actor) AND (@entity = '' OR entity = @entity)
		  AND (@eid = 0 OR entity_id = @eid)
		ORDER BY created_at DESC, id DESC LIMIT @limit`,
		pgx.NamedArgs{"salon": salonID, "from": from, "to": to, "actor": strings.TrimSpace(f.Actor),
			"entity": strings.TrimSpace(f.Entity), "eid": f.EntityID, "limit": f.Limit})
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", dbErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditEntry, error) {
		var e AuditEntry
		var o, n []byte
		if err := r.Scan(&e.ID, &e.Actor, &e.Action, &e.Entity, &e.EntityID, &o, &n, &e.At); err != nil {
			return e, err
		}
		if len(o) > 0 {
			_ = json.Unmarshal(o, &e.Old)
		}
		if len(n) > 0 {
			_ = json.Unmarshal(n, &e.New)
		}
		return e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", dbErr(err))
	}
	return out, nil
}

// AuditActors lists the distinct actors of the salon's audit log, for a filter.
func (s *Service) AuditActors(ctx context.Context, salonID int64) ([]string, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT actor FROM audit_log WHERE salon_id = $1 ORDER BY actor LIMIT 200`, salonID)
	if err != nil {
		return nil, fmt.Errorf("audit actors: %w", dbErr(err))
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("audit actors: %w", dbErr(err))
	}
	return out, nil
}
