package booking

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Invitation is an e-mail address a salon's owner invited to be one of
// its panel users. Its link goes to that mailbox only: whoever opens it
// there sets a password and becomes the user, and only they learn whether
// the address has an account already (an address is one user of one
// salon), never the owner who typed it. (A server that sends no e-mail
// shows the owner the link to hand over: there, whoever holds it learns
// that as well.)
type Invitation struct {
	ID        int64
	SalonID   int64
	Email     string
	Role      Role
	CreatedAt time.Time
	ExpiresAt time.Time
	// MailedAt is when its e-mail went (zero: it did not), MailError why
	// not.
	MailedAt  time.Time
	MailError string
	// Code is its secret, which the link /panel/invite/{Code} carries,
	// kept as a hash: InviteUser returns it only from a server that sends
	// no e-mail, for the owner to hand over; else it goes to the mailbox
	// alone.
	Code string
	// SalonName names the salon (InvitationByCode).
	SalonName string
}

// InvitationTTL is how long an invitation's link stays good.
const InvitationTTL = 7 * 24 * time.Hour

// InvitePath is where, under the server's public URL, the invitation
// with the code is accepted (its page in lang).
func InvitePath(code, lang string) string {
	return "/panel/invite/" + url.PathEscape(code) + "?lang=" + url.QueryEscape(lang)
}

// InviteMail is the e-mail of an invitation.
type InviteMail struct {
	To, Lang, Code string
	Salon          Salon
	Role           Role
	InvitedBy      string // the owner's e-mail
	ExpiresAt      time.Time
}

// InviteCourier is an e-mail courier that also delivers invitations.
type InviteCourier interface {
	DeliverInvite(ctx context.Context, m *InviteMail) (Sent, error)
}

const invitationColumns = `i.id, i.salon_id, i.email, i.role, i.created_at, i.expires_at, COALESCE(i.mailed_at, 'epoch'), i.mail_error`

// dest is where invitationColumns scan to (fixed reads MailedAt's zero).
func (v *Invitation) dest() []any {
	return []any{&v.ID, &v.SalonID, &v.Email, &v.Role, &v.CreatedAt, &v.ExpiresAt, &v.MailedAt, &v.MailError}
}

func (v *Invitation) fixed() *Invitation {
	if v.MailedAt.Unix() == 0 {
		v.MailedAt = time.Time{}
	}
	return v
}

// InviteUser invites the address to be the salon's user in role, and
// e-mails it the invitation's link. Inviting an address again replaces its
// invitation (a new link; the old one stops working). An address that is
// already this salon's user is refused; one that is another salon's is
// invited as any other: the owner learns nothing of other salons. The
// e-mail's outcome is in MailedAt and MailError; the code is returned
// only when this server sends no e-mail (Code). Owners only.
// Errors: ErrNotFound (salon), ErrForbidden, ErrInvalid (email, role).
func (s *Service) InviteUser(ctx context.Context, salonID int64, email string, role Role) (*Invitation, error) {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return nil, err
	}
	fe := fieldErrors{}
	email = staffEmail(fe, email)
	if role != RoleOwner && role != RoleAdmin {
		fe.add("role", "owner or admin")
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	caller := callerOf(ctx)
	var invitedBy *int64
	if caller.kind == callerStaff && caller.user.ID != 0 {
		invitedBy = &caller.user.ID
	}
	code := newToken()
	now := s.now()
	inv := &Invitation{SalonID: salonID, Email: email, Role: role, ExpiresAt: now.Add(InvitationTTL)}
	var salon *Salon
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if salon, err = getSalon(ctx, tx, salonID); err != nil {
			return err
		}
		var ours bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE salon_id = $1 AND email = $2)`, salonID, email).Scan(&ours); err != nil {
			return fmt.Errorf("invite: %w", err)
		}
		if ours {
			return Invalid("email", "a user with this email exists")
		}
		return tx.QueryRow(ctx, `
			INSERT INTO user_invitations (salon_id, email, role, code_hash, invited_by, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (salon_id, email) DO UPDATE SET role = EXCLUDED.role, code_hash = EXCLUDED.code_hash,
				invited_by = EXCLUDED.invited_by, created_at = EXCLUDED.created_at,
				expires_at = EXCLUDED.expires_at, mailed_at = NULL, mail_error = ''
			RETURNING id, created_at`, salonID, email, role, tokenHash(code), invitedBy, now, inv.ExpiresAt).
			Scan(&inv.ID, &inv.CreatedAt)
	})
	if err != nil {
		return nil, dbErr(err)
	}
	// The e-mail goes now, the code in memory only (never in a job's
	// row), within what is left of the caller's time; its outcome is
	// recorded whatever became of the caller meanwhile.
	m := &InviteMail{To: email, Lang: salon.Locale, Code: code, Salon: *salon, Role: role, InvitedBy: caller.user.Email, ExpiresAt: inv.ExpiresAt}
	switch err := s.deliverInvite(ctx, m); {
	case errors.Is(err, errNoMailer):
		inv.MailError, inv.Code = NoMailer, code // (to hand over: no mailbox gets it)
	case err != nil:
		inv.MailError = redactAddresses(err.Error())
		s.log.Warn("invitation: the e-mail did not go", "invitation", inv.ID, "err", inv.MailError)
	default:
		inv.MailedAt = s.now()
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	// (Under the code it was sent with: a newer invitation of the
	// address keeps its own record.)
	if _, err := s.pool.Exec(rctx, `UPDATE user_invitations SET mailed_at = $3, mail_error = $4 WHERE id = $1 AND code_hash = $2`,
		inv.ID, tokenHash(code), nullTime(inv.MailedAt), inv.MailError); err != nil {
		s.log.Warn("invitation: record the e-mail", "invitation", inv.ID, "err", err)
	}
	return inv, nil
}

// nullTime is t, or NULL when zero.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// deliverInvite sends m by the e-mail courier, in its turn among the
// replicas, within what is left of ctx's time less a margin for the
// caller's answer (at most sendTimeout). Errors: errNoMailer, or why it
// did not go (in time).
func (s *Service) deliverInvite(ctx context.Context, m *InviteMail) error {
	c, ok := s.couriers[ChannelEmail].(InviteCourier)
	if !ok {
		return errNoMailer
	}
	budget := sendTimeout
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)-2*time.Second)
	}
	if budget <= 0 {
		return fmt.Errorf("%w: no time left to send it", ErrDeliveryUnknown)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	if err := s.turn(sctx, ChannelEmail); err != nil {
		return err
	}
	_, err := c.DeliverInvite(sctx, m)
	return err
}

// Invitations lists the salon's invitations not yet accepted, the newest
// first (expired ones too, to invite again). Owners only.
func (s *Service) Invitations(ctx context.Context, salonID int64) ([]Invitation, error) {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+invitationColumns+` FROM user_invitations i WHERE i.salon_id = $1
		ORDER BY i.created_at DESC, i.id DESC LIMIT 100`, salonID)
	if err != nil {
		return nil, fmt.Errorf("invitations: %w", dbErr(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Invitation, error) {
		var v Invitation
		err := r.Scan(v.dest()...)
		return *v.fixed(), err
	})
	if err != nil {
		return nil, fmt.Errorf("invitations: %w", dbErr(err))
	}
	return out, nil
}

// RevokeInvitation withdraws an invitation: its link stops working.
// Owners only. Errors: ErrNotFound.
func (s *Service) RevokeInvitation(ctx context.Context, salonID, id int64) error {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM user_invitations WHERE salon_id = $1 AND id = $2`, salonID, id)
		if err != nil {
			return fmt.Errorf("revoke invitation: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("invitation %d: %w", id, ErrNotFound)
		}
		return nil
	})
}

// errTakenAddress refuses an invitation to an address that has an
// account already (at this salon or another): told to its mailbox's
// holder, who opened the link.
var errTakenAddress = Invalid("email", "this address already has an account, and an address is the user of one salon only: ask the salon to invite another address")

// errNoInvitation is the answer to a code that opens no invitation: none
// was made, it was accepted or withdrawn, or it expired.
var errNoInvitation = fmt.Errorf("no such invitation, or it expired: %w", ErrNotFound)

// InvitationByCode reads the live invitation the code opens, with its
// salon's name: for whoever holds the link. Errors: ErrNotFound.
func (s *Service) InvitationByCode(ctx context.Context, code string) (*Invitation, error) {
	if _, err := asked(ctx); err != nil {
		return nil, err
	}
	if code == "" || len(code) > 64 {
		return nil, errNoInvitation
	}
	var v Invitation
	err := s.pool.QueryRow(ctx, `SELECT `+invitationColumns+`, s.name FROM user_invitations i
		JOIN salons s ON s.id = i.salon_id WHERE i.code_hash = $1 AND i.expires_at > $2`, tokenHash(code), s.now()).
		Scan(append(v.dest(), &v.SalonName)...)
	if isNoRows(err) {
		return nil, errNoInvitation
	}
	if err != nil {
		return nil, fmt.Errorf("invitation: %w", dbErr(err))
	}
	return v.fixed(), nil
}

// AcceptInvitation makes the holder of the invitation's code the salon's
// user, with the password, and opens a session for them (its id, as
// Login returns). The invitation is used up: of two accepting at once,
// one becomes the user. An address that already has an account (at any
// salon) is refused, to its holder, with the reason. Errors: ErrNotFound
// (no live invitation), ErrInvalid (password; email taken),
// ErrUnavailable (too many passwords being hashed).
func (s *Service) AcceptInvitation(ctx context.Context, code, password string) (string, *User, error) {
	if _, err := asked(ctx); err != nil {
		return "", nil, err
	}
	if code == "" || len(code) > 64 {
		return "", nil, errNoInvitation
	}
	if n := utf8.RuneCountInString(password); n < MinPasswordLen {
		return "", nil, Invalid("password", "at least %d characters", MinPasswordLen)
	} else if len(password) > 1024 {
		return "", nil, Invalid("password", "at most %d characters", 1024)
	}
	// (Only a live invitation's holder for a free address gets a
	// password hashed: the hash costs what a login does.)
	inv, err := s.InvitationByCode(ctx, code)
	if err != nil {
		return "", nil, err
	}
	var taken bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE email = $1)`, inv.Email).Scan(&taken); err != nil {
		return "", nil, fmt.Errorf("accept invitation: %w", dbErr(err))
	}
	if taken {
		return "", nil, errTakenAddress
	}
	hash, err := s.passwords.hash(ctx, password)
	if err != nil {
		return "", nil, err
	}
	session := newSessionID()
	var u User
	now := s.now()
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT salon_id, email, role FROM user_invitations WHERE code_hash = $1 AND expires_at > $2 FOR UPDATE`,
			tokenHash(code), now).Scan(&u.SalonID, &u.Email, &u.Role)
		if isNoRows(err) {
			return errNoInvitation
		}
		if err != nil {
			return fmt.Errorf("accept invitation: %w", err)
		}
		// (The new user's own act, in the salon's audit log.)
		if _, err := tx.Exec(ctx, `SELECT set_config('salon.actor', $1, true)`, u.Email); err != nil {
			return fmt.Errorf("accept invitation: %w", err)
		}
		if err := u.insert(ctx, tx, hash); err != nil {
			if errors.Is(err, ErrInvalid) {
				return errTakenAddress
			}
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM user_invitations WHERE code_hash = $1`, tokenHash(code)); err != nil {
			return fmt.Errorf("accept invitation: %w", err)
		}
		_, err = tx.Exec(ctx, insertSessionSQL, sessionHash(session), u.ID, now, now.Add(SessionMax))
		return err
	})
	if err != nil {
		return "", nil, dbErr(err)
	}
	return session, &u, nil
}
