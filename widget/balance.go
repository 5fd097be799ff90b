package widget

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
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
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	b, err := h.svc.BalanceByCode(c.UserContext(), s.ID, strings.Clone(c.Params("code")))
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
