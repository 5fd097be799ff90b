package widget

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

// errorBody is every API error: {"error": CODE, "message": TEXT, ...}.
type errorBody struct {
	Error   string            `json:"error"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
	// Alternatives are []slotJSON, or, for a visit, []visitSlotJSON.
	Alternatives any `json:"alternatives,omitempty"`
	// Payments says a 503 is online payment being down (not a busy calendar).
	Payments bool `json:"payments_down,omitempty"`
}

var (
	errNoRoute     = fmt.Errorf("no such endpoint: %w", booking.ErrNotFound)
	errMediaType   = errors.New("unsupported media type")
	errRateLimited = errors.New("rate limited")
)

// RetryAfter is what a 503 tells the client to wait, in seconds.
const RetryAfter = 2

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
		var alts any = slotsJSON(st.Alternatives, salonLoc(c))
		if st.Visits != nil {
			alts = visitSlotsJSON(st.Visits, salonLoc(c))
		}
		return reply(c, fiber.StatusConflict, errorBody{Error: "slot_taken",
			Message: i18n.New("this time was just taken; here are the nearest free times").In(requestLang(c)), Alternatives: alts})
	case errors.Is(err, booking.ErrKeyReused):
		return reply(c, fiber.StatusUnprocessableEntity, errorBody{Error: "idempotency_conflict",
			Message: i18n.New("this Idempotency-Key was used with a different request").In(requestLang(c))})
	case errors.Is(err, booking.ErrInProgress):
		return reply(c, fiber.StatusConflict, errorBody{Error: "in_progress",
			Message: i18n.New("a request with this Idempotency-Key is still running; retry shortly").In(requestLang(c))})
	case errors.Is(err, booking.ErrPaymentsDown):
		c.Set(fiber.HeaderRetryAfter, "60")
		return reply(c, fiber.StatusServiceUnavailable, errorBody{Error: "unavailable", Payments: true,
			Message: i18n.New("online payment is not available right now, so deposit bookings are paused; nothing was booked, please try again in a few minutes").In(requestLang(c))})
	case errors.Is(err, booking.ErrUnavailable):
		c.Set(fiber.HeaderRetryAfter, fmt.Sprint(RetryAfter))
		return reply(c, fiber.StatusServiceUnavailable, errorBody{Error: "unavailable",
			Message: i18n.New("the salon's calendar is busy; nothing was changed, please try again in a moment").In(requestLang(c))})
	case errors.As(err, &ve):
		return reply(c, fiber.StatusUnprocessableEntity, errorBody{Error: "invalid", Message: i18n.New("some fields are invalid").In(requestLang(c)), Fields: fieldsIn(ve.Fields, requestLang(c))})
	case errors.As(err, &se):
		msg := se.msg.In(requestLang(c))
		return reply(c, fiber.StatusUnprocessableEntity, errorBody{Error: "invalid", Message: msg, Fields: map[string]string{"body": msg}})
	case errors.Is(err, errMediaType):
		return reply(c, fiber.StatusUnsupportedMediaType, errorBody{Error: "unsupported_media_type",
			Message: "send the body as JSON, with Content-Type: application/json"})
	case errors.Is(err, booking.ErrNotFound), errors.Is(err, booking.ErrForbidden):
		// A wrong manage token and a missing booking look the same.
		return reply(c, fiber.StatusNotFound, errorBody{Error: "not_found", Message: notFoundMessage(err).In(requestLang(c))})
	case errors.Is(err, booking.ErrExhausted):
		// (Why, on the field that named it, too: the widget shows it there.)
		why, lang := reasonIn(err, c), requestLang(c)
		return reply(c, fiber.StatusConflict, errorBody{Error: "balance_exhausted", Fields: map[string]string{"pay_with": why},
			Message: i18n.New("this package or certificate cannot pay for this booking: %s", why).In(lang)})
	case errors.Is(err, booking.ErrTooLate):
		return reply(c, fiber.StatusConflict, errorBody{Error: "too_late",
			Message: i18n.New("changes are closed for this booking: %s", reasonIn(err, c)).In(requestLang(c))})
	case errors.Is(err, booking.ErrConflict):
		return reply(c, fiber.StatusConflict, errorBody{Error: "conflict",
			Message: i18n.New("this cannot be done now: %s", reasonIn(err, c)).In(requestLang(c))})
	case errors.Is(err, booking.ErrInvalid):
		return reply(c, fiber.StatusUnprocessableEntity, errorBody{Error: "invalid", Message: reasonIn(err, c)})
	case errors.Is(err, errRateLimited):
		return reply(c, fiber.StatusTooManyRequests, errorBody{Error: "rate_limited",
			Message: i18n.New("too many requests from your address; try again in a minute").In(requestLang(c))})
	}
	log.Error("internal error", "request_id", c.Locals("requestid"), "method", c.Method(), "path", LoggedPath(c), "err", err)
	return reply(c, fiber.StatusInternalServerError, errorBody{Error: "internal", Message: "internal error"})
}

func reply(c *fiber.Ctx, status int, body errorBody) error {
	return c.Status(status).JSON(body)
}

func notFoundMessage(err error) i18n.Text {
	if errors.Is(err, errNoRoute) {
		return i18n.New("no such endpoint")
	}
	return i18n.New("not found")
}

// reasonIn is why err was refused, in the request's language: the reason
// it carries, else its message without the kind's words.
func reasonIn(err error, c *fiber.Ctx) string {
	var t i18n.Text
	if errors.As(err, &t) {
		return t.In(requestLang(c))
	}
	return kindless(err)
}

// kindless is the error's message without the kind's own words at the end.
func kindless(err error) string {
	msg := err.Error()
	for _, k := range []error{booking.ErrTooLate, booking.ErrExhausted, booking.ErrConflict, booking.ErrInvalid} {
		msg = strings.TrimSuffix(msg, ": "+k.Error())
	}
	return msg
}

// syntaxError is a request body that is not the JSON expected.
type syntaxError struct{ msg i18n.Text }

func (e *syntaxError) Error() string { return e.msg.String() }

// decode reads the JSON body into v. The body must be declared JSON (else
// errMediaType); wrong types become field errors named by their JSON path;
// malformed JSON a body error; a field the API does not take a field
// error naming it. With optional,
// an empty body (of any declared type) leaves v as it is.
func decode(c *fiber.Ctx, v any, optional bool) error {
	body := c.Body()
	if optional && len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if !isJSON(c.Get(fiber.HeaderContentType)) {
		return errMediaType
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return &syntaxError{i18n.New("the request body must be a JSON object")}
	}
	// A field the API does not take is refused, named by its path (the
	// OpenAPI document's objects take no others): a misspelt one
	// ("pay_width") would otherwise be dropped without a word, one in
	// other letters ("PAY_WITH") or given twice taken.
	// (Malformed JSON ends the walk: the decoder names where.)
	if se := checkShape(body, reflect.TypeOf(v)); se != nil {
		return booking.Invalid(se.path, se.why)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	err := dec.Decode(v)
	if err == nil {
		if _, tail := dec.Token(); tail != io.EOF { // (one value, nothing after it)
			return &syntaxError{i18n.New("malformed JSON at byte %d", dec.InputOffset())}
		}
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return booking.Invalid(te.Field, jsonKind(te.Type.Kind().String()))
	case errors.As(err, &te):
		return &syntaxError{i18n.New("the request body must be a JSON object")}
	case errors.As(err, &se):
		return &syntaxError{i18n.New("malformed JSON at byte %d", se.Offset)}
	}
	return &syntaxError{i18n.New("malformed JSON")}
}

// isJSON reports a JSON media type (application/json, or a +json one).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int64", "int", "int32":
		return "must be an integer"
	case "string":
		return "must be a string"
	case "struct", "ptr", "map":
		return "must be an object"
	case "bool":
		return "must be true or false"
	}
	return "must be of another type"
}

// salonLoc is the time zone of the salon the request is about, if known.
func salonLoc(c *fiber.Ctx) *time.Location {
	if s, ok := c.Locals(salonKey).(*booking.Salon); ok {
		return s.Location()
	}
	return time.UTC
}

// ErrorHandler answers, for the API, what happened before any handler ran
// (fiber's and the HTTP server's own errors: 404 for no route, 413 for a
// body over the limit, 400 for a request that is not HTTP) in the API's
// error shape, without repeating the server's internal wording; anything
// else is a logged internal error.
func ErrorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		var fe *fiber.Error
		if !errors.As(err, &fe) {
			return fail(c, log, err)
		}
		body := errorBody{Error: "invalid", Message: "malformed request"}
		switch {
		case fe.Code == fiber.StatusNotFound:
			body = errorBody{Error: "not_found", Message: "no such endpoint"}
		case fe.Code == fiber.StatusMethodNotAllowed:
			body.Message = "method not allowed"
		case fe.Code == fiber.StatusRequestEntityTooLarge:
			body.Message = "the request body is too large"
		case fe.Code == fiber.StatusRequestHeaderFieldsTooLarge:
			body.Message = "the request headers are too large"
		case fe.Code == fiber.StatusRequestTimeout:
			body.Message = "the request took too long to arrive"
		case fe.Code == fiber.StatusTooManyRequests:
			body = errorBody{Error: "rate_limited", Message: "too many requests"}
		case fe.Code >= 500:
			log.Error("request failed", "request_id", c.Locals("requestid"), "path", LoggedPath(c), "err", err)
			return reply(c, fiber.StatusInternalServerError, errorBody{Error: "internal", Message: "internal error"})
		}
		return reply(c, fe.Code, body)
	}
}

// secretParams are the route parameters that grant access (a calendar
// feed's file name, a payment's return reference, a message's one-tap
// link).
var secretParams = []string{":file", ":ref", ":token", ":code"}

// LoggedPath is what a log shows of a request's path: the path, or the
// route if the path grants access, so that a log grants nothing.
func LoggedPath(c *fiber.Ctx) string {
	route := c.Route().Path
	for _, p := range secretParams {
		if strings.Contains(route, p) {
			return route
		}
	}
	path := c.Path()
	if route == path || strings.Contains(route, ":") {
		return path // (a route's own words, or its ids and slugs)
	}
	// No route took it (another method, a segment more, other capitals,
	// a slash doubled): it is logged up to its first segment that might
	// be a code, a token or a reference, whatever route it was meant for.
	kept := 0
	for seg := range strings.SplitSeq(path[min(1, len(path)):], "/") {
		if !plainSegment(seg) {
			return path[:kept] + "/…"
		}
		kept += 1 + len(seg)
	}
	return path
}

// plainSegment tells a segment of a path that grants nothing: a word of a
// route, a slug, an id, a file name. A code of a balance (732Y-837W-SX73,
// in either case, ABCD-EFGH-JKMN too), a token or a reference has its
// shape, mixes letters and digits, is long or has capitals.
func plainSegment(seg string) bool {
	if len(seg) > 24 {
		return false
	}
	letters, digits := false, false
	for _, r := range seg {
		switch {
		case r >= 'a' && r <= 'z':
			letters = true
		case r >= '0' && r <= '9':
			digits = true
		case r == '.' || r == '-' || r == '_':
		default:
			return false
		}
	}
	if strings.Count(seg, "-") == 2 && len(seg) == 14 {
		return false // (a balance's code has that shape, some with no digit)
	}
	return !(letters && digits && len(seg) > 3)
}

// fieldsIn writes the reasons of fields in lang.
func fieldsIn(fields map[string]i18n.Text, lang string) map[string]string {
	out := make(map[string]string, len(fields))
	for k, v := range fields {
		out[k] = v.In(lang)
	}
	return out
}

// requestLang is the language the API writes reasons in: the first of the
// request's Accept-Language that the catalogue speaks (the widget's page
// sends its own), else English.
func requestLang(c *fiber.Ctx) string {
	if l, ok := acceptedLang(c); ok {
		return l
	}
	return "en"
}

// acceptedLang is the first language of the request's Accept-Language
// that the catalogue speaks.
func acceptedLang(c *fiber.Ctx) (string, bool) {
	for part := range strings.SplitSeq(c.Get(fiber.HeaderAcceptLanguage), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if slices.Contains(i18n.Languages, base) {
			return base, true
		}
	}
	return "", false
}
