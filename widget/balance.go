package widget

import (
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

// The balances API (contract section 4, "Balances"): what is left of a
// package or a gift certificate, for whoever holds its code.

type balanceJSON struct {
	Kind booking.BalanceKind `json:"kind"`
	// Remaining: a package's visits, a certificate's money (major units).
	Remaining any `json:"remaining"`
	// ExpiresAt: the end of its last day; null for a balance with no end
	// (present either way: the contract names it).
	ExpiresAt *string `json:"expires_at"`
	// ServiceIDs: a package's services (of a visit, it pays a visit of it
	// for each service that is one of them, in order, as many as it has
	// left, as the booking reserves).
	ServiceIDs []int64 `json:"service_ids,omitempty"`
}

func (h *Handler) getBalance(c *fiber.Ctx) error {
	// (The path's code as typed: "ABCD EFGH JKMN" arrives escaped, and
	// its spaces are as good as its dashes.)
	code := strings.Clone(c.Params("code"))
	if u, err := url.PathUnescape(code); err == nil {
		code = u
	}
	return h.showBalance(c, code, booking.BalanceUse{})
}

// lookupBody is a code sent in a body: the widget's way, which keeps the
// code out of every URL (and of proxies' access logs).
type lookupBody struct {
	Code *string `json:"code"`
	// What it would pay for (the widget's booking, before it is
	// confirmed): a package for none of these services, or another
	// client's, is refused as the booking would be.
	ServiceIDs []int64 `json:"service_ids"`
	Phone      *string `json:"phone"`
}

func (h *Handler) lookupBalance(c *fiber.Ctx) error {
	var body lookupBody
	if err := decode(c, &body, false); err != nil {
		return err
	}
	if body.Code == nil {
		return &booking.ValidationError{Fields: map[string]i18n.Text{"code": i18n.New("required")}}
	}
	use := booking.BalanceUse{ServiceIDs: body.ServiceIDs}
	if body.Phone != nil {
		use.Phone = *body.Phone
	}
	switch {
	case len(use.ServiceIDs) > 20:
		return &booking.ValidationError{Fields: map[string]i18n.Text{"service_ids": i18n.New("at most %d", 20)}}
	case len(use.Phone) > 40:
		return &booking.ValidationError{Fields: map[string]i18n.Text{"phone": i18n.New("at most %d characters", 40)}}
	}
	return h.showBalance(c, *body.Code, use)
}

// showBalance answers what is left of the balance of code, if it would
// pay for use.
func (h *Handler) showBalance(c *fiber.Ctx, code string, use booking.BalanceUse) error {
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	b, err := h.svc.CheckBalance(c.UserContext(), s.ID, code, use)
	if err != nil {
		return err
	}
	out := balanceJSON{Kind: b.Kind, Remaining: b.Remaining}
	if b.Kind == booking.BalanceCertificate {
		out.Remaining = booking.Money(b.Remaining)
	} else {
		out.ServiceIDs = b.ServiceIDs
	}
	if !b.ExpiresOn.IsZero() {
		at := stamp(b.ExpiresOn.AddDays(1).Start(s.Location()), s.Location())
		out.ExpiresAt = &at
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(out)
}
