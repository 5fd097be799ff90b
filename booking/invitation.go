package booking

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Invitation is an e-mail address a salon's owner invited to be one of
// its panel users. Whoever opens its link sets a password and becomes
// the user; only they learn whether the address has an account already
// (at another salon: an address is one user of one salon), never the
// owner who typed it.
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
	// Code is its secret, which the link /panel/invite/{Code} carries:
	// returned by InviteUser only (it is kept as a hash).
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
// e-mails it the invitation's link (the returned Invitation's Code, for
// the owner to hand over too). Inviting an address again replaces its
// invitation (a new link; the old one stops working). An address that is
// already this salon's user is refused; one that is another salon's is
// invited as any other (the owner learns nothing of other salons). Owners
// only. Errors: ErrNotFound (salon), ErrForbidden, ErrInvalid (email,
// role).
func (s *Service) InviteUser(ctx context.Context, salonID int64, email string, role Role) (*Invitation, error) {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return nil, err
	}
	email = strings.ToLower(strings.TrimSpace(email))
	fe := fieldErrors{}
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 320 {
		fe.add("email", "not an email address")
	}
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
	inv := &Invitation{SalonID: salonID, Email: email, Role: role, Code: code, ExpiresAt: now.Add(InvitationTTL)}
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
			INSERT INTO user_invitations (salon_id, email, role, code_hash, invited_by, lang, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (salon_id, email) DO UPDATE SET role = EXCLUDED.role, code_hash = EXCLUDED.code_hash,
				invited_by = EXCLUDED.invited_by, lang = EXCLUDED.lang, created_at = EXCLUDED.created_at,
				expires_at = EXCLUDED.expires_at, mailed_at = NULL, mail_error = ''
			RETURNING id, created_at`, salonID, email, role, tokenHash(code), invitedBy, salon.Locale, now, inv.ExpiresAt).
			Scan(&inv.ID, &inv.CreatedAt)
	})
	if err != nil {
		return nil, dbErr(err)
	}
	m := &InviteMail{To: email, Lang: salon.Locale, Code: code, Salon: *salon, Role: role, InvitedBy: caller.user.Email, ExpiresAt: inv.ExpiresAt}
	if err := s.deliverInvite(ctx, m); err != nil {
		inv.MailError = redactAddresses(err.Error())
		if !errors.Is(err, errNoMailer) { // (the owner's page says so)
			s.log.Warn("invitation: the e-mail did not go", "invitation", inv.ID, "err", inv.MailError)
		}
	} else {
		inv.MailedAt = s.now()
	}
	// (Under the code it was sent with: a newer invitation of the
	// address keeps its own record.)
	if _, err := s.pool.Exec(ctx, `UPDATE user_invitations SET mailed_at = $3, mail_error = $4 WHERE id = $1 AND code_hash = $2`,
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
// replicas. Errors: errNoMailer, or why it did not go.
func (s *Service) deliverInvite(ctx context.Context, m *InviteMail) error {
	c, ok := s.couriers[ChannelEmail].(InviteCourier)
	if !ok {
		return errNoMailer
	}
	if err := s.turn(ctx, ChannelEmail); err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
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
	// (Only a live invitation's holder gets a password hashed.)
	if _, err := s.InvitationByCode(ctx, code); err != nil {
		return "", nil, err
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
				return Invalid("email", "this address already has an account: log in with it, or ask the salon to invite another address")
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
