package widget

import (
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
)

// OutboxPath is the development outbox page (salon dev): the e-mail and
// SMS a server without SMTP or an SMS provider would have sent.
const OutboxPath = "/dev/outbox"

// outboxShows is how many messages the development outbox page shows.
const outboxShows = 100

// RegisterOutbox serves the development outbox page. Only salon dev
// registers it: it shows every salon's messages to whoever asks. whole
// gives a message's words with their links live, when this process sent
// it (the database keeps them without their tokens); extra are the
// e-mails this process sent that have no row (a sale's refunds,
// invitations to a salon's panel).
func (h *Handler) RegisterOutbox(app *fiber.App, whole func(id int64) (string, bool), extra func() []booking.Message) {
	app.Get(OutboxPath, h.deadline, func(c *fiber.Ctx) error {
		list, err := h.svc.Outbox(booking.As(c.UserContext(), booking.BySystem()), outboxShows)
		if err != nil {
			return h.pageError(c, err)
		}
		for i := range list {
			if t, ok := whole(list[i].ID); ok {
				list[i].Body = t
			}
		}
		list = append(list, extra()...)
		slices.SortStableFunc(list, func(a, b booking.Message) int { return b.CreatedAt.Compare(a.CreatedAt) })
		list = list[:min(len(list), outboxShows)]
		var b strings.Builder
		if err := pages.ExecuteTemplate(&b, "outbox.html", list); err != nil {
			return h.pageError(c, err)
		}
		c.Set(fiber.HeaderCacheControl, "no-store")
		c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
		return c.SendString(b.String())
	})
}
