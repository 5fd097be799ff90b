package widget

import (
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
	Remaining any    `json:"remaining"`
	ExpiresAt string `json:"expires_at,omitempty"` // the end of its last day
}

func (h *Handler) getBalance(c *fiber.Ctx) error {
	return h.showBalance(c, strings.Clone(c.Params("code")))
}

// lookupBody is a code sent in a body: the widget's way, which keeps the
// code out of every URL (and of proxies' access logs).
type lookupBody struct {
	Code *string `json:"code"`
}

func (h *Handler) lookupBalance(c *fiber.Ctx) error {
	var body lookupBody
	if err := decode(c, &body, false); err != nil {
		return err
	}
	if body.Code == nil {
		return &booking.ValidationError{Fields: map[string]i18n.Text{"code": i18n.New("required")}}
	}
	return h.showBalance(c, *body.Code)
}

// showBalance answers what is left of the balance of code.
func (h *Handler) showBalance(c *fiber.Ctx, code string) error {
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	b, err := h.svc.BalanceByCode(c.UserContext(), s.ID, code)
	if err != nil {
		return err
	}
	out := balanceJSON{Kind: b.Kind, Remaining: b.Remaining}
	if b.Kind == booking.BalanceCertificate {
		out.Remaining = booking.Money(b.Remaining)
	}
	if !b.ExpiresOn.IsZero() {
		out.ExpiresAt = stamp(b.ExpiresOn.AddDays(1).Start(s.Location()), s.Location())
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(out)
}
