package panel

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

type settingsData struct {
	S        booking.Salon
	Policies []booking.RefundPolicy
	Receipts booking.ReceiptSettings
	Messages messageForm
	Error    string
	Fields   map[string]string
}

// messageForm is the salon's message settings as the form shows them.
type messageForm struct {
	QuietFrom, QuietTo string
	Offsets            string // "24 h, 2 h"
	Holdout            int
	Kinds              []kindRow
}

// kindRow is one kind of message, and the paid channels that carry it.
type kindRow struct {
	Kind       booking.MessageKind
	Label      string
	Email, SMS bool
}

func messageFormOf(m *booking.MessageSettings, l *lang) messageForm {
	f := messageForm{QuietFrom: m.QuietFrom, QuietTo: m.QuietTo, Holdout: m.HoldoutPct}
	var offs []string
	for _, o := range m.ReminderOffsets {
		offs = append(offs, leadWords(o, l))
	}
	f.Offsets = strings.Join(offs, ", ")
	for _, k := range booking.ClientKinds {
		f.Kinds = append(f.Kinds, kindRow{Kind: k, Label: l.T(kindNames[k]), Email: m.Carries(booking.ChannelEmail, k), SMS: m.Carries(booking.ChannelSMS, k)})
	}
	return f
}

// parseOffsets reads "24 h, 2 h, 30 min" (or "24ч 2ч", or bare hours).
func parseOffsets(s string) ([]time.Duration, bool) {
	var out []time.Duration
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		part = strings.ToLower(strings.TrimSpace(part))
		if part == "" {
			continue
		}
		unit := time.Hour
		for _, suffix := range []struct {
			s string
			u time.Duration
		}{{"min", time.Minute}, {"мин", time.Minute}, {"m", time.Minute}, {"м", time.Minute}, {"h", time.Hour}, {"ч", time.Hour}} {
			if n, ok := strings.CutSuffix(part, suffix.s); ok {
				part, unit = strings.TrimSpace(n), suffix.u
				break
			}
		}
		n, err := strconv.Atoi(part)
		if err != nil || n <= 0 {
			return nil, false
		}
		out = append(out, time.Duration(n)*unit)
	}
	return out, true
}

// updateMessages saves what the salon's clients hear, when and on which
// paid channels (owners; the core checks).
func (h *Handler) updateMessages(c *fiber.Ctx) error {
	d := settingsData{Policies: policies}
	if err := h.settingsInto(c, &d); err != nil {
		return err
	}
	l := langOf(c)
	in := booking.MessageSettings{QuietFrom: strings.Clone(c.FormValue("quiet_from")), QuietTo: strings.Clone(c.FormValue("quiet_to"))}
	offsets, ok := parseOffsets(c.FormValue("reminder_offsets"))
	holdout, err := strconv.Atoi(cmp.Or(strings.TrimSpace(c.FormValue("reminder_holdout_pct")), "0"))
	if err != nil {
		holdout = -1 // the core names the field
	}
	in.HoldoutPct = holdout
	for _, k := range booking.ClientKinds {
		if c.FormValue("email_"+string(k)) != "" {
			in.EmailKinds = append(in.EmailKinds, k)
		}
		if c.FormValue("sms_"+string(k)) != "" {
			in.SMSKinds = append(in.SMSKinds, k)
		}
	}
	in.ReminderOffsets = offsets
	if !ok {
		c.Status(fiber.StatusUnprocessableEntity)
		d.Messages = messageFormOf(&in, l)
		d.Messages.Offsets = strings.Clone(c.FormValue("reminder_offsets"))
		d.Error = l.T("Some fields are invalid.")
		d.Fields = l.Fields(map[string]i18n.Text{"reminder_offsets": i18n.New("write them like 24 h, 2 h")})
		return h.render(c, "settings", l.T("Settings"), d)
	}
	_, err = h.svc.UpdateMessageSettings(c.UserContext(), user(c).SalonID, in)
	if err == nil {
		return done(c, "/panel/settings", "saved")
	}
	d.Messages = messageFormOf(&in, l)
	if !h.fieldError(c, err, &d.Error, &d.Fields) {
		return err
	}
	return h.render(c, "settings", l.T("Settings"), d)
}

func (h *Handler) settings(c *fiber.Ctx) error {
	d := settingsData{Policies: policies}
	if err := h.settingsInto(c, &d); err != nil {
		return err
	}
	return h.render(c, "settings", langOf(c).T("Settings"), d)
}

// settingsInto reads the salon's settings and its receipts' into d.
func (h *Handler) settingsInto(c *fiber.Ctx, d *settingsData) error {
	s, err := h.svc.Settings(c.UserContext(), user(c).SalonID)
	if err != nil {
		return err
	}
	r, err := h.svc.ReceiptSettingsOf(c.UserContext(), user(c).SalonID)
	if err != nil {
		return err
	}
	m, err := h.svc.MessageSettingsOf(c.UserContext(), user(c).SalonID)
	if err != nil {
		return err
	}
	d.S, d.Receipts, d.Messages = *s, *r, messageFormOf(m, langOf(c))
	return nil
}

// updateReceipts saves what the salon's fiscal receipts say (owners).
func (h *Handler) updateReceipts(c *fiber.Ctx) error {
	d := settingsData{Policies: policies}
	if err := h.settingsInto(c, &d); err != nil {
		return err
	}
	vat, verr := strconv.Atoi(c.FormValue("vat_code"))
	tax, terr := strconv.Atoi(cmp.Or(c.FormValue("tax_system"), "0"))
	d.Receipts = booking.ReceiptSettings{VatCode: vat, TaxSystem: tax, Item: strings.Clone(c.FormValue("receipt_item"))}
	if verr != nil || terr != nil {
		c.Status(fiber.StatusUnprocessableEntity)
		d.Error = langOf(c).T("Some fields are invalid.")
		return h.render(c, "settings", langOf(c).T("Settings"), d)
	}
	err := h.svc.SetReceiptSettings(c.UserContext(), user(c).SalonID, d.Receipts)
	if err == nil {
		return done(c, "/panel/settings", "saved")
	}
	if !h.fieldError(c, err, &d.Error, &d.Fields) {
		return err
	}
	return h.render(c, "settings", langOf(c).T("Settings"), d)
}

var policies = []booking.RefundPolicy{booking.RefundAlways, booking.RefundBeforeCutoff, booking.RefundNever}

// updateSettings saves the salon's settings (owners; the core checks).
func (h *Handler) updateSettings(c *fiber.Ctx) error {
	if user(c).Role != booking.RoleOwner {
		// (Before the form is read: a refused form would show the settings.)
		return fmt.Errorf("settings: %w", booking.ErrForbidden)
	}
	s := *salonOf(c)
	s.Name = strings.Clone(c.FormValue("name"))
	s.Timezone = strings.Clone(strings.TrimSpace(c.FormValue("timezone")))
	s.Locale = strings.Clone(c.FormValue("locale"))
	s.RefundPolicy = booking.RefundPolicy(strings.Clone(c.FormValue("refund_policy")))
	s.Address, s.Phone = strings.Clone(c.FormValue("address")), strings.Clone(c.FormValue("phone"))
	s.About, s.PrivacyURL = strings.Clone(c.FormValue("about")), strings.Clone(c.FormValue("privacy_url"))
	if v := c.FormValue("deposit_fallback"); v != "" {
		s.DepositFallback = booking.DepositFallback(strings.Clone(v))
	}
	if v := c.FormValue("deposit_topup"); v != "" {
		s.DepositTopUp = booking.TopUp(strings.Clone(v))
	}
	fe := map[string]i18n.Text{}
	num := func(field string, p *int) {
		v, err := strconv.Atoi(strings.TrimSpace(c.FormValue(field)))
		if err != nil {
			fe[field] = i18n.New("must be an integer")
			return
		}
		*p = v
	}
	num("slot_step_min", &s.SlotStepMin)
	num("min_notice_min", &s.MinNoticeMin)
	num("hold_min", &s.HoldMin)
	num("cutoff_hours", &s.CutoffHours)
	num("horizon_days", &s.HorizonDays)
	if v := c.FormValue("waitlist_mode"); v != "" {
		s.WaitlistMode = strings.Clone(v)
	}
	if c.FormValue("waitlist_offer_min") != "" {
		num("waitlist_offer_min", &s.WaitlistOfferMin)
	}
	if c.FormValue("waitlist_broadcast_n") != "" {
		num("waitlist_broadcast_n", &s.WaitlistBroadcastN)
	}
	d := settingsData{S: s, Policies: policies}
	if r, err := h.svc.ReceiptSettingsOf(c.UserContext(), user(c).SalonID); err == nil {
		d.Receipts = *r
	}
	if len(fe) == 0 {
		_, err := h.svc.UpdateSalon(c.UserContext(), s)
		if err == nil {
			return done(c, "/panel/settings", "saved")
		}
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
	} else {
		c.Status(fiber.StatusUnprocessableEntity)
		d.Error, d.Fields = langOf(c).T("Some fields are invalid."), langOf(c).Fields(fe)
	}
	return h.render(c, "settings", langOf(c).T("Settings"), d)
}

type usersData struct {
	Users       []booking.User
	Invitations []invitationRow
	Email       string
	Role        string
	Error       string
	Fields      map[string]string
	// Invited is the invitation just made on a server that sends no
	// e-mail, with its link to hand over (shown this once: only its hash
	// is kept). Where e-mail goes, the link goes to the mailbox alone.
	Invited *invitationRow
}

// invitationRow is an invitation as the users page lists it.
type invitationRow struct {
	booking.Invitation
	Link    string // the link to hand over (just made, on a server that sends no e-mail)
	Until   string // when its link stops working
	Expired bool
	Mail    string // how its e-mail went
}

func (h *Handler) users(c *fiber.Ctx) error { return h.showUsers(c, &usersData{Role: "admin"}) }

func (h *Handler) showUsers(c *fiber.Ctx, d *usersData) error {
	var err error
	if d.Users, err = h.svc.Users(c.UserContext(), user(c).SalonID); err != nil {
		return err
	}
	list, err := h.svc.Invitations(c.UserContext(), user(c).SalonID)
	if err != nil {
		return err
	}
	for _, inv := range list {
		d.Invitations = append(d.Invitations, h.invitationRow(c, inv))
	}
	return h.render(c, "users", langOf(c).T("Users"), d)
}

// invitationRow says an invitation for the users page.
func (h *Handler) invitationRow(c *fiber.Ctx, inv booking.Invitation) invitationRow {
	l, s := langOf(c), salonOf(c)
	r := invitationRow{Invitation: inv, Until: l.When(inv.ExpiresAt.In(s.Location()), h.svc.Now().In(s.Location())),
		Expired: !h.svc.Now().Before(inv.ExpiresAt)}
	switch {
	case !inv.MailedAt.IsZero():
		r.Mail = l.T("e-mail sent")
	case inv.MailError == booking.NoMailer:
		r.Mail = l.T("this server sends no e-mail: hand over the link")
	case inv.MailError != "":
		r.Mail = l.T("the e-mail did not go: invite again")
	}
	return r
}

// createUser invites an e-mail address to be the salon's user (owners).
// The link goes to the mailbox: the owner never sees it (holding it, they
// could learn whether the address has an account elsewhere), but on a
// server that sends no e-mail, where the page shows it once to hand over.
func (h *Handler) createUser(c *fiber.Ctx) error {
	d := &usersData{Email: strings.Clone(c.FormValue("email")), Role: strings.Clone(c.FormValue("role"))}
	inv, err := h.svc.InviteUser(c.UserContext(), user(c).SalonID, d.Email, booking.Role(d.Role))
	if err != nil {
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
		return h.showUsers(c, d)
	}
	switch {
	case inv.Code != "":
		row := h.invitationRow(c, *inv)
		row.Link = h.base(c) + booking.InvitePath(inv.Code, salonOf(c).Locale)
		return h.showUsers(c, &usersData{Role: "admin", Invited: &row})
	case inv.MailedAt.IsZero():
		return done(c, "/panel/users", "invitation_not_mailed")
	}
	return done(c, "/panel/users", "invited")
}

// revokeInvitation withdraws an invitation (owners).
func (h *Handler) revokeInvitation(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := h.svc.RevokeInvitation(c.UserContext(), user(c).SalonID, id); err != nil {
		return err
	}
	return done(c, "/panel/users", "invitation_revoked")
}

// deleteUser removes a panel user, ending their sessions (owners).
func (h *Handler) deleteUser(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := h.svc.DeleteUser(c.UserContext(), user(c).SalonID, id); err != nil {
		d := &usersData{Role: "admin"}
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
		return h.showUsers(c, d)
	}
	return done(c, "/panel/users", "removed")
}

type auditData struct {
	From, To, Actor, Entity string
	Actors                  []string
	Entities                []string
	Rows                    []auditRow
}

type auditRow struct {
	At      string
	Actor   string
	What    string   // what was done to which record
	Changes []string // each changed column: label, before → after
	Href    string
}

var auditEntities = []string{"booking", "client", "master", "master_service", "service", "shift", "salon", "user", "invitation", "balance", "balance_offer"}

// audit lists the salon's audit log, filtered by date, actor and entity.
func (h *Handler) audit(c *fiber.Ctx) error {
	u := user(c)
	d := auditData{From: strings.Clone(c.Query("from")), To: strings.Clone(c.Query("to")),
		Actor: strings.Clone(c.Query("actor")), Entity: strings.Clone(c.Query("entity")), Entities: auditEntities}
	f := booking.AuditFilter{Actor: d.Actor, Entity: d.Entity}
	if d.From != "" {
		f.From, _ = booking.ParseDate(d.From)
	}
	if d.To != "" {
		f.To, _ = booking.ParseDate(d.To)
	}
	rows, err := h.svc.AuditLog(c.UserContext(), u.SalonID, f)
	if err != nil {
		return err
	}
	if d.Actors, err = h.svc.AuditActors(c.UserContext(), u.SalonID); err != nil {
		return err
	}
	salon := salonOf(c)
	n := auditNames{services: map[int64]string{}, loc: salon.Location(), currency: salon.Currency}
	if n.masters, err = h.masterNames(c); err != nil {
		return err
	}
	services, err := h.svc.AllServices(c.UserContext(), u.SalonID)
	if err != nil {
		return err
	}
	for _, sv := range services {
		n.services[sv.ID] = sv.Name
	}
	l := langOf(c)
	for _, r := range rows {
		ar := auditRow{At: l.DateTime(r.At.In(n.loc)), Actor: r.Actor}
		if name, ok := strings.CutPrefix(r.Actor, "import:"); ok {
			ar.Actor = l.T("import of %s", name)
		}
		ar.What, ar.Changes = auditText(r, n, l)
		switch r.Entity {
		case "booking":
			ar.Href = fmt.Sprintf("/panel/bookings/%d", r.EntityID)
		case "client":
			ar.Href = fmt.Sprintf("/panel/clients/%d", r.EntityID)
		case "master", "master_service":
			ar.Href = fmt.Sprintf("/panel/masters/%d", r.EntityID)
		case "service":
			ar.Href = fmt.Sprintf("/panel/services/%d", r.EntityID)
		case "balance":
			ar.Href = fmt.Sprintf("/panel/balances/%d", r.EntityID)
		case "balance_offer":
			ar.Href = "/panel/balances"
		}
		d.Rows = append(d.Rows, ar)
	}
	return h.render(c, "audit", langOf(c).T("Audit log"), d)
}
