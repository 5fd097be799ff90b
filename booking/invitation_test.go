package booking_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/mail"
	"salon/booking/mail/mailtest"
	"salon/internal/courier"
)

// inviteWorld is two salons, each with an owner, e-mailing through Mailpit.
type inviteWorld struct {
	*bookingtest.Env
	mp           *mailtest.Server
	a, b         *booking.Salon
	ownerA       context.Context
	ownerB       context.Context
	userA, userB *booking.User
}

func newInviteWorld(t *testing.T) *inviteWorld {
	t.Helper()
	mp := mailtest.Start(t)
	sender, err := mail.New("smtp://salon:secret@"+mp.SMTP, "Salons <panel@salon.example>")
	if err != nil {
		t.Fatal(err)
	}
	e := bookingtest.New(t, booking.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		booking.WithCourier(booking.ChannelEmail, &courier.Email{Mail: sender, Base: "https://salon.test"}, 0))
	w := &inviteWorld{Env: e, mp: mp}
	w.a = e.Salon(t, booking.Salon{Slug: "first", Name: "First", Locale: "ru", Timezone: "Europe/Moscow"})
	w.b = e.Salon(t, booking.Salon{Slug: "second", Name: "Second", Locale: "en", Timezone: "Europe/London"})
	sys := bookingtest.System()
	if w.userA, err = e.Svc.CreateUser(sys, w.a.ID, "owner@first.test", "first-password", booking.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if w.userB, err = e.Svc.CreateUser(sys, w.b.ID, "owner@second.test", "second-password", booking.RoleOwner); err != nil {
		t.Fatal(err)
	}
	w.ownerA = booking.As(context.Background(), booking.ByStaff(*w.userA))
	w.ownerB = booking.As(context.Background(), booking.ByStaff(*w.userB))
	return w
}

// link is the invitation's link as its e-mail to the address has it.
func (w *inviteWorld) link(t *testing.T, to string) string {
	t.Helper()
	for _, m := range w.mp.Messages(t) {
		if len(m.To) == 1 && m.To[0].Address == to {
			i := strings.Index(m.Text, "https://salon.test/panel/invite/")
			if i < 0 {
				t.Fatalf("the invitation's e-mail has no link: %s", m.Text)
			}
			return strings.Fields(m.Text[i:])[0]
		}
	}
	t.Fatalf("no e-mail to %s", to)
	return ""
}

// codeOf is the code of an invitation's link.
func codeOf(link string) string {
	code, _, _ := strings.Cut(strings.TrimPrefix(link, "https://salon.test/panel/invite/"), "?")
	return code
}

// An owner invites a colleague by e-mail; the colleague sets their own
// password from the e-mail's link and is signed in; the link then opens
// nothing.
func TestAnInvitationMakesAUserWhoSetsTheirOwnPassword(t *testing.T) {
	t.Parallel()
	w := newInviteWorld(t)
	web := booking.As(context.Background(), booking.Visitor())
	inv, err := w.Svc.InviteUser(w.ownerA, w.a.ID, " Desk@First.test ", booking.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	// The code goes to the mailbox alone: the owner never holds it.
	if inv.Email != "desk@first.test" || inv.MailedAt.IsZero() || inv.Code != "" {
		t.Fatalf("invitation %+v", inv)
	}
	msgs := w.mp.Messages(t)
	if len(msgs) != 1 || msgs[0].Subject != "Приглашение в панель: First" || !strings.Contains(msgs[0].Text, "owner@first.test") ||
		!strings.Contains(msgs[0].Text, "администратор") {
		t.Fatalf("the e-mail: %+v", msgs)
	}
	link := w.link(t, "desk@first.test")
	code := codeOf(link)
	if !strings.HasSuffix(link, "?lang=ru") {
		t.Fatalf("the e-mail's link %s", link)
	}
	// Nothing but the code's hash is kept: its row holds the hash, and the
	// code nowhere (nor in any job).
	var hashed, readable int
	if err := w.Pool.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE code_hash = sha256(convert_to($1, 'UTF8'))),
		count(*) FILTER (WHERE strpos(to_jsonb(i)::text, $1) > 0) FROM user_invitations i`, code).Scan(&hashed, &readable); err != nil ||
		hashed != 1 || readable != 0 {
		t.Fatalf("the code: %d rows by its hash, %d holding it readable (%v)", hashed, readable, err)
	}
	if n := rows(t, w.Env, `SELECT count(*) FROM river_job WHERE strpos(args::text, $1) > 0`, code); n != 0 {
		t.Fatalf("%d jobs hold the code", n)
	}
	got, err := w.Svc.InvitationByCode(web, code)
	if err != nil || got.SalonName != "First" || got.Email != "desk@first.test" || got.Role != booking.RoleAdmin {
		t.Fatalf("by code: %+v %v", got, err)
	}
	if _, _, err := w.Svc.AcceptInvitation(web, code, "short"); !errors.Is(err, booking.ErrInvalid) {
		t.Fatalf("a short password: %v", err)
	}
	session, u, err := w.Svc.AcceptInvitation(web, code, "desk-password")
	if err != nil || u.SalonID != w.a.ID || u.Role != booking.RoleAdmin || u.Email != "desk@first.test" {
		t.Fatalf("accept: %+v %v", u, err)
	}
	if su, err := w.Svc.SessionUser(web, session); err != nil || su.Email != "desk@first.test" {
		t.Fatalf("the session: %+v %v", su, err)
	}
	if _, lu, err := w.Svc.Login(web, "desk@first.test", "desk-password", "192.0.2.1"); err != nil || lu.ID != u.ID {
		t.Fatalf("login with the password set: %v", err)
	}
	for _, f := range []func() error{
		func() error { _, err := w.Svc.InvitationByCode(web, code); return err },
		func() error { _, _, err := w.Svc.AcceptInvitation(web, code, "another-password"); return err },
	} {
		if err := f(); !errors.Is(err, booking.ErrNotFound) {
			t.Errorf("the used link: %v, want not found", err)
		}
	}
	// The salon's audit log: the invitation by its owner, the user by
	// themself.
	var by string
	if err := w.Pool.QueryRow(t.Context(), `SELECT string_agg(entity || ':' || action || ':' || actor, ',' ORDER BY id) FROM audit_log
		WHERE salon_id = $1 AND entity IN ('invitation', 'user')`, w.a.ID).Scan(&by); err != nil ||
		by != "invitation:create:owner@first.test,user:create:desk@first.test,invitation:delete:desk@first.test" {
		t.Errorf("audit: %q %v", by, err)
	}
	// Only owners invite.
	desk := booking.As(context.Background(), booking.ByStaff(*u))
	if _, err := w.Svc.InviteUser(desk, w.a.ID, "more@first.test", booking.RoleOwner); !errors.Is(err, booking.ErrForbidden) {
		t.Errorf("an admin invites: %v", err)
	}
}

// An owner inviting the address of another salon's user is told what
// inviting a new address tells: nothing of the other salon. Whoever opens
// the link learns the address has an account; the user stays as it was.
func TestInvitingAnotherSalonsUserSaysNothingOfIt(t *testing.T) {
	t.Parallel()
	w := newInviteWorld(t)
	web := booking.As(context.Background(), booking.Visitor())
	taken, err1 := w.Svc.InviteUser(w.ownerB, w.b.ID, "OWNER@first.test", booking.RoleAdmin)
	free, err2 := w.Svc.InviteUser(w.ownerB, w.b.ID, "nobody@first.test", booking.RoleAdmin)
	if err1 != nil || err2 != nil || taken.MailedAt.IsZero() || free.MailedAt.IsZero() || taken.MailError != free.MailError ||
		taken.Code != "" || free.Code != "" {
		t.Fatalf("inviting another salon's user: %+v %v; a new address: %+v %v", taken, err1, free, err2)
	}
	list, err := w.Svc.Invitations(w.ownerB, w.b.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("salon B's invitations: %+v %v", list, err)
	}
	// Its mailbox's holder learns it, opening the link.
	_, _, err = w.Svc.AcceptInvitation(web, codeOf(w.link(t, "owner@first.test")), "a-new-password")
	var ve *booking.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Fields["email"].In("en"), "already has an account") {
		t.Fatalf("accepting for an address with an account: %v", err)
	}
	if _, u, err := w.Svc.Login(web, "owner@first.test", "first-password", "192.0.2.2"); err != nil || u.SalonID != w.a.ID {
		t.Fatalf("salon A's owner after it: %+v %v", u, err)
	}
	// Salon A's own user is refused to salon A's owner (it is in their list).
	if _, err := w.Svc.InviteUser(w.ownerA, w.a.ID, "owner@first.test", booking.RoleAdmin); !errors.Is(err, booking.ErrInvalid) {
		t.Errorf("inviting one's own user: %v", err)
	}
	// Another salon's invitations are not there for B's owner.
	if err := w.Svc.RevokeInvitation(w.ownerA, w.a.ID, taken.ID); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("salon A withdraws B's invitation: %v", err)
	}
	if _, err := w.Svc.Invitations(w.ownerA, w.b.ID); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("salon A lists B's invitations: %v", err)
	}
}

// Inviting again gives a new link and the old one stops working; so does
// withdrawing; a link expires after InvitationTTL.
func TestAnInvitationsLinkEnds(t *testing.T) {
	t.Parallel()
	w := newInviteWorld(t)
	web := booking.As(context.Background(), booking.Visitor())
	if _, err := w.Svc.InviteUser(w.ownerA, w.a.ID, "desk@first.test", booking.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	first := codeOf(w.link(t, "desk@first.test"))
	if _, err := w.Svc.InviteUser(w.ownerA, w.a.ID, "desk@first.test", booking.RoleOwner); err != nil {
		t.Fatal(err)
	}
	second := codeOf(w.link(t, "desk@first.test")) // (the newest e-mail)
	if _, err := w.Svc.InvitationByCode(web, first); first == second || !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("the first link after inviting again: %v", err)
	}
	if got, err := w.Svc.InvitationByCode(web, second); err != nil || got.Role != booking.RoleOwner {
		t.Errorf("the second link: %+v %v", got, err)
	}
	w.Clock.Advance(booking.InvitationTTL + time.Minute)
	if _, _, err := w.Svc.AcceptInvitation(web, second, "desk-password"); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("an expired link: %v", err)
	}
	list, err := w.Svc.Invitations(w.ownerA, w.a.ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("invitations: %+v %v", list, err)
	}
	if err := w.Svc.RevokeInvitation(w.ownerA, w.a.ID, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := w.Svc.Invitations(w.ownerA, w.a.ID); len(list) != 0 {
		t.Errorf("withdrawn, still listed: %+v", list)
	}
}

// One link opened in many tabs at once makes one user: the others find
// the invitation used.
func TestAnInvitationAcceptedAtOnceMakesOneUser(t *testing.T) {
	t.Parallel()
	w := newInviteWorld(t)
	if _, err := w.Svc.InviteUser(w.ownerA, w.a.ID, "desk@first.test", booking.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	code := codeOf(w.link(t, "desk@first.test"))
	const n = 6
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			_, _, errs[i] = w.Svc.AcceptInvitation(booking.As(context.Background(), booking.Visitor()), code, "desk-password")
		})
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, booking.ErrNotFound) && !errors.Is(err, booking.ErrUnavailable):
			t.Errorf("a tab: %v", err)
		}
	}
	var users, sessions int
	if err := w.Pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM users WHERE email = 'desk@first.test'),
		(SELECT count(*) FROM panel_sessions s JOIN users u ON u.id = s.user_id WHERE u.email = 'desk@first.test')`).Scan(&users, &sessions); err != nil {
		t.Fatal(err)
	}
	if ok != 1 || users != 1 || sessions != 1 {
		t.Fatalf("%d tabs signed in, %d users, %d sessions; want one each", ok, users, sessions)
	}
}

// A user removed takes their invitations with them: an owner leaving
// cannot come back by a link they sent (to an address of their own).
func TestARemovedUsersInvitationsGo(t *testing.T) {
	t.Parallel()
	w := newInviteWorld(t)
	second, err := w.Svc.CreateUser(bookingtest.System(), w.a.ID, "second@first.test", "second-password", booking.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	asSecond := booking.As(context.Background(), booking.ByStaff(*second))
	if _, err := w.Svc.InviteUser(asSecond, w.a.ID, "back-door@elsewhere.test", booking.RoleOwner); err != nil {
		t.Fatal(err)
	}
	code := codeOf(w.link(t, "back-door@elsewhere.test"))
	if err := w.Svc.DeleteUser(w.ownerA, w.a.ID, second.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Svc.AcceptInvitation(booking.As(context.Background(), booking.Visitor()), code, "back-door-password"); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("the removed owner's invitation: %v, want not found", err)
	}
	if n := rows(t, w.Env, `SELECT count(*) FROM audit_log WHERE entity = 'invitation' AND action = 'delete' AND actor = 'owner@first.test'`); n != 1 {
		t.Errorf("%d audit rows of the invitation going with its owner", n)
	}
}

// rows runs a count.
func rows(t *testing.T, e *bookingtest.Env, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := e.Pool.QueryRow(t.Context(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
