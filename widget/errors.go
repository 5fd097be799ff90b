package widget

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
)

// errorBody is every API error: {"error": CODE, "message": TEXT, ...}.
type errorBody struct {
	Error        string            `json:"error"`
	Message      string            `json:"message"`
	Fields       map[string]string `json:"fields,omitempty"`
	Alternatives []slotJSON        `json:"alternatives,omitempty"`
}

var errNoRoute = fmt.Errorf("no such endpoint: %w", booking.ErrNotFound)

// fail maps an error to its HTTP answer. This is the one place where the
// booking package's error kinds become statuses and codes; anything that is
// not a kind is logged with the request id and answered "internal error".
func fail(c *fiber.Ctx, log *slog.Logger, err error) error {
	var (
		ve *booking.ValidationError
		st *booking.SlotTakenError
		se *syntaxError
	)
	switch {
	case errors.As(err, &st):
		return c.Status(fiber.StatusConflict).JSON(errorBody{Error: "slot_taken",
			Message: "this time was just taken; here are the nearest free times", Alternatives: slotsJSON(st.Alternatives, salonLoc(c))})
	case errors.Is(err, booking.ErrKeyReused):
		return c.Status(fiber.StatusUnprocessableEntity).JSON(errorBody{Error: "idempotency_conflict",
			Message: "this Idempotency-Key was used with a different request"})
	case errors.Is(err, booking.ErrInProgress):
		return c.Status(fiber.StatusConflict).JSON(errorBody{Error: "in_progress",
			Message: "a request with this Idempotency-Key is still running; retry shortly"})
	case errors.As(err, &ve):
		return c.Status(fiber.StatusUnprocessableEntity).JSON(errorBody{Error: "invalid", Message: "some fields are invalid", Fields: ve.Fields})
	case errors.As(err, &se):
		return c.Status(fiber.StatusUnprocessableEntity).JSON(errorBody{Error: "invalid", Message: se.msg, Fields: map[string]string{"body": se.msg}})
	case errors.Is(err, booking.ErrNotFound), errors.Is(err, booking.ErrForbidden):
		// A wrong manage token and a missing booking look the same.
		return c.Status(fiber.StatusNotFound).JSON(errorBody{Error: "not_found", Message: notFoundMessage(err)})
	case errors.Is(err, booking.ErrTooLate):
		return c.Status(fiber.StatusConflict).JSON(errorBody{Error: "too_late", Message: "changes are closed for this booking: " + kindless(err)})
	case errors.Is(err, booking.ErrConflict):
		return c.Status(fiber.StatusConflict).JSON(errorBody{Error: "too_late", Message: "this booking can no longer be changed: " + kindless(err)})
	case errors.Is(err, booking.ErrInvalid):
		return c.Status(fiber.StatusUnprocessableEntity).JSON(errorBody{Error: "invalid", Message: kindless(err)})
	case errors.Is(err, errRateLimited):
		return c.Status(fiber.StatusTooManyRequests).JSON(errorBody{Error: "rate_limited", Message: "too many bookings from your address; try again in a minute"})
	}
	log.Error("internal error", "request_id", c.Locals("requestid"), "method", c.Method(), "path", c.Path(), "err", err)
	return c.Status(fiber.StatusInternalServerError).JSON(errorBody{Error: "internal", Message: "internal error"})
}

func notFoundMessage(err error) string {
	if errors.Is(err, errNoRoute) {
		return "no such endpoint"
	}
	return "not found"
}

// kindless is the error's message without the kind's own words at the end.
func kindless(err error) string {
	msg := err.Error()
	for _, k := range []error{booking.ErrTooLate, booking.ErrConflict, booking.ErrInvalid} {
		msg = strings.TrimSuffix(msg, ": "+k.Error())
	}
	return msg
}

// syntaxError is a request body that is not the JSON expected.
type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return e.msg }

// decode reads the JSON body into v. Wrong types become field errors named
// by their JSON path; malformed JSON a body error. Unknown fields are ignored.
func decode(c *fiber.Ctx, v any) error {
	body := c.Body()
	if len(strings.TrimSpace(string(body))) == 0 {
		return &syntaxError{"the request body must be a JSON object"}
	}
	err := json.Unmarshal(body, v)
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return &booking.ValidationError{Fields: map[string]string{te.Field: "must be " + jsonKind(te.Type.Kind().String())}}
	case errors.As(err, &te):
		return &syntaxError{"the request body must be a JSON object"}
	case errors.As(err, &se):
		return &syntaxError{fmt.Sprintf("malformed JSON at byte %d", se.Offset)}
	}
	return &syntaxError{"malformed JSON"}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int64", "int", "int32":
		return "an integer"
	case "string":
		return "a string"
	case "struct", "ptr", "map":
		return "an object"
	case "bool":
		return "true or false"
	}
	return "of another type"
}

// salonLoc is the time zone of the salon the request is about, if known.
func salonLoc(c *fiber.Ctx) *time.Location {
	if s, ok := c.Locals(salonKey).(*booking.Salon); ok {
		return s.Location()
	}
	return time.UTC
}

func errorsIsNotFound(err error) bool { return errors.Is(err, booking.ErrNotFound) }

// ErrorHandler answers the errors no handler answered (fiber's own: 404 for
// no route, 405, 413 for a body over the limit) in the API's error shape,
// and anything else as a logged internal error.
func ErrorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		var fe *fiber.Error
		if !errors.As(err, &fe) {
			return fail(c, log, err)
		}
		code := "invalid"
		switch {
		case fe.Code == fiber.StatusNotFound:
			code = "not_found"
		case fe.Code == fiber.StatusTooManyRequests:
			code = "rate_limited"
		case fe.Code >= 500:
			log.Error("request failed", "request_id", c.Locals("requestid"), "path", c.Path(), "err", err)
			return c.Status(fiber.StatusInternalServerError).JSON(errorBody{Error: "internal", Message: "internal error"})
		}
		return c.Status(fe.Code).JSON(errorBody{Error: code, Message: fe.Message})
	}
}
