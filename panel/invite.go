package panel

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
)

// Invitations: an owner invites a colleague's e-mail address (the users
// page); whoever opens the invitation's link, which goes to that mailbox,
// sets a password here and is signed in as the salon's user. Only they
// learn whether the address has an account already: the owner who typed
// it never sees the link (but where the server sends no e-mail).

type inviteData struct {
	Invitation *booking.Invitation // nil: the link opens nothing (used, withdrawn, expired)
	Action     string              // where the form posts (the link's own address)
	Error      string
	Fields     map[string]string
}

// invitePage shows an invitation: the salon, the address and the role it
// is for, and the password to set. It changes nothing.
func (h *Handler) invitePage(c *fiber.Ctx) error {
	inv, err := h.svc.InvitationByCode(c.UserContext(), strings.Clone(c.Params("code")))
	return h.showInvite(c, &inviteData{Invitation: inv}, err)
}

// showInvite renders the invitation's page: gone (404) when err says it
// opens nothing.
func (h *Handler) showInvite(c *fiber.Ctx, d *inviteData, err error) error {
	l := langOf(c)
	switch {
	case errors.Is(err, booking.ErrNotFound):
		c.Status(fiber.StatusNotFound)
		d.Invitation = nil
	case err != nil:
		return err
	}
	// (The link's code is in its path: the panel's Referrer-Policy,
	// same-origin, gives it to no other site.)
	d.Action = c.Path() + "?lang=" + l.Code
	return h.render(c, "invite", l.T("Invitation to the panel"), d)
}

// acceptInvite sets the password and signs the new user in.
func (h *Handler) acceptInvite(c *fiber.Ctx) error {
	if !h.sameOrigin(c) {
		return errOrigin
	}
	code := strings.Clone(c.Params("code"))
	inv, err := h.svc.InvitationByCode(c.UserContext(), code)
	d := &inviteData{Invitation: inv}
	if err != nil {
		return h.showInvite(c, d, err)
	}
	l := langOf(c)
	password := c.FormValue("password")
	if password != c.FormValue("password2") {
		c.Status(fiber.StatusUnprocessableEntity)
		d.Error, d.Fields = l.T("Some fields are invalid."), map[string]string{l.Field("password2"): l.T("the passwords differ")}
		return h.showInvite(c, d, nil)
	}
	id, _, err := h.svc.AcceptInvitation(c.UserContext(), code, password)
	switch {
	case errors.Is(err, booking.ErrUnavailable):
		c.Status(fiber.StatusServiceUnavailable)
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(RetryAfter))
		d.Error = l.T("Signing in is busy. Try again in a moment.")
		return h.showInvite(c, d, nil)
	case errors.Is(err, booking.ErrNotFound):
		return h.showInvite(c, d, err)
	case err != nil:
		if !h.fieldError(c, err, &d.Error, &d.Fields) {
			return err
		}
		return h.showInvite(c, d, nil)
	}
	// (A session this browser had, another user's, ends: one browser,
	// one user signed in.)
	if old := c.Cookies(CookieName); old != "" {
		if err := h.svc.Logout(c.UserContext(), old); err != nil {
			h.log.Warn("panel: end the session replaced by an invitation's", "err", err)
		}
	}
	h.setCookie(c, id, booking.SessionMax)
	return c.Redirect("/panel/", fiber.StatusSeeOther)
}
