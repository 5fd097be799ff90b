package panel

import (
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

var (
	errNoPage = fmt.Errorf("no such page: %w", booking.ErrNotFound)
	errCSRF   = errors.New("missing or wrong CSRF token")
	errOrigin = errors.New("a sign-in form posted from another site")
)

// RetryAfter is what a 503 tells the browser to wait, in seconds.
const RetryAfter = 2

// errors renders, as a page of the panel, whatever a handler under it
// returns. This is the one place where the booking package's error kinds
// become HTTP statuses and messages; anything that is not a kind is logged
// with the request id and shown as "internal error".
// A handler's panic is one such error: logged with its stack, the page
// says "internal error" (the server's own recovery would answer the
// API's JSON).
func (h *Handler) errors(c *fiber.Ctx) error {
	err := h.next(c)
	if err == nil {
		return nil
	}
	status, msg := h.classify(c, err)
	l := langOf(c)
	loc := time.UTC
	if s, ok := c.Locals(salonKey).(*booking.Salon); ok {
		loc = s.Location()
	}
	c.Status(status)
	return h.render(c, "error", l.T(msg), errorPage{Status: status, Message: l.T(msg), Detail: detail(err, l, loc)})
}

// next runs the handlers after this one, a panic among them returned as
// an error with its stack.
func (h *Handler) next(c *fiber.Ctx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return c.Next()
}

type errorPage struct {
	Status  int
	Message string
	Detail  string
}

// classify maps an error to a status and a message.
func (h *Handler) classify(c *fiber.Ctx, err error) (int, string) {
	var (
		fe *fiber.Error
		th *booking.ThrottledError
	)
	switch {
	case errors.As(err, &th):
		c.Set(fiber.HeaderRetryAfter, fmt.Sprint(int(th.RetryAfter.Seconds())+1))
		return fiber.StatusTooManyRequests, "Too many failed logins. Try again later."
	case errors.Is(err, errCSRF), errors.Is(err, errOrigin):
		return fiber.StatusForbidden, "The form has expired. Go back, reload the page and try again."
	case errors.Is(err, booking.ErrUnavailable):
		c.Set(fiber.HeaderRetryAfter, fmt.Sprint(RetryAfter))
		return fiber.StatusServiceUnavailable, "The calendar is busy. Nothing was changed; try again in a moment."
	case errors.Is(err, booking.ErrNotFound):
		return fiber.StatusNotFound, "Not found."
	case errors.Is(err, booking.ErrForbidden):
		return fiber.StatusForbidden, "You may not do this."
	case errors.Is(err, booking.ErrTooLate):
		return fiber.StatusConflict, "It is too late for this change."
	case errors.Is(err, booking.ErrSlotTaken):
		return fiber.StatusConflict, "This time is taken."
	case errors.Is(err, booking.ErrExhausted):
		return fiber.StatusConflict, "The package or certificate cannot pay for this."
	case errors.Is(err, booking.ErrConflict):
		return fiber.StatusConflict, "This cannot be done in its current state."
	case errors.Is(err, booking.ErrInvalid):
		return fiber.StatusUnprocessableEntity, "Some fields are invalid."
	case errors.As(err, &fe) && fe.Code < 500:
		return fe.Code, "The request was not understood."
	}
	path := c.Path()
	if r := c.Route(); r != nil && strings.Contains(r.Path, ":code") {
		path = r.Path // (an invitation's code opens an account: never logged)
	}
	h.log.Error("panel: internal error", "err", err, "path", path, "request_id", c.Locals("requestid"))
	return fiber.StatusInternalServerError, "internal error"
}

// detail is what may be shown of an error kind to the user (never of an
// internal error), as a sentence of its own: it follows the kind's. Times
// are in loc, the salon's.
func detail(err error, l *lang, loc *time.Location) string {
	s := reasonOf(err, l, loc)
	if s == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[n:]
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "!") && !strings.HasSuffix(s, "?") {
		s += "."
	}
	return s
}

// reasonOf is detail's words, as the core gives them.
func reasonOf(err error, l *lang, loc *time.Location) string {
	var (
		ve *booking.ValidationError
		lb *booking.LostBookingsError
	)
	switch {
	case errors.As(err, &ve):
		fields := l.Fields(ve.Fields)
		parts := make([]string, 0, len(fields))
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			parts = append(parts, i18n.Field(k).In(l.Code)+": "+fields[k])
		}
		return strings.Join(parts, "; ")
	case errors.As(err, &lb):
		ids := make([]string, len(lb.Bookings))
		for i, b := range lb.Bookings {
			ids[i] = fmt.Sprintf("#%d %s", b.ID, l.DateTime(b.StartsAt.In(loc)))
		}
		return i18n.New("bookings would be outside working hours: %s", strings.Join(ids, ", ")).In(l.Code)
	case errors.Is(err, booking.ErrConflict), errors.Is(err, booking.ErrTooLate), errors.Is(err, booking.ErrForbidden):
		// The core's reason, in the page's language: only one it gives in
		// words to translate (an i18n text); its other errors are for the
		// log, in English, and the kind's message says enough.
		var t i18n.Text
		if errors.As(err, &t) {
			return t.In(l.Code)
		}
	}
	return ""
}

func isNotFound(err error) bool { return errors.Is(err, booking.ErrNotFound) }
