package widget_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gofiber/fiber/v2/middleware/requestid"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp"
	"salon/widget"
)

func TestMain(m *testing.M) { bookingtest.Main(m) }

// testDay is the day the fixture's masters work: the day after the pinned clock.
var testDay = booking.Date{Year: 2026, Month: 3, Day: 3}

// site is a salon served over real HTTP on a loopback port, with every API
// response checked against the OpenAPI document.
type site struct {
	*bookingtest.Env
	t       *testing.T
	base    string
	salon   *booking.Salon
	svc     *booking.SalonService
	masters []*booking.Master
	client  *http.Client
	router  routers.Router
	// outbox gives a message whole, links live (a site with the
	// development outbox's couriers: linkSite)
	outbox func(id int64) (string, bool)
	// sandbox is the payment provider of a site that takes payments
	// (paySite).
	sandbox *psp.Sandbox
}

type siteOption func(*widget.Config)

func newSite(t *testing.T, opts ...siteOption) *site {
	t.Helper()
	return newSiteOn(t, bookingtest.New(t), opts...)
}

// newSiteOn is newSite on an Env of the test's own (a core with couriers).
func newSiteOn(t *testing.T, e *bookingtest.Env, opts ...siteOption) *site {
	t.Helper()
	s := &site{Env: e, t: t, client: &http.Client{Timeout: 30 * time.Second}}
	s.salon = e.Salon(t, booking.Salon{Slug: "studio", Name: "Studio", CutoffHours: 3})
	s.svc = e.Service(t, s.salon, booking.SalonService{Name: "Haircut", DurationMin: 60, Price: 250000})
	for range 3 {
		m := e.Master(t, s.salon, s.svc)
		e.Shift(t, s.salon, m, testDay, 2, "10:00", "20:00")
		s.masters = append(s.masters, m)
	}
	cfg := widget.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(&cfg)
	}
	s.base = serve(t, widget.New(e.Svc, cfg), cfg.Log)

	s.router = openapiRouter(t)
	return s
}

// openapiRouter is a router over the OpenAPI document, which must be valid.
func openapiRouter(t *testing.T) routers.Router {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(widget.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is not valid OpenAPI: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return router
}

// serve runs the handler on a loopback port like salon serve does, and
// returns its base URL.
func serve(t testing.TB, h *widget.Handler, log *slog.Logger) string {
	t.Helper()
	app := widget.NewApp(log)
	app.Use(requestid.New())
	h.Register(app)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck // ends at Shutdown
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String()
}

// reply is an HTTP answer with its JSON decoded.
type reply struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
	list   []any
}

func (r reply) str(key string) string { s, _ := r.body[key].(string); return s }

func (r reply) fields() map[string]any { f, _ := r.body["fields"].(map[string]any); return f }

func (r reply) id() int64 { v, _ := r.body["id"].(float64); return int64(v) }

// do sends a request and checks the response against the OpenAPI document.
func (s *site) do(method, path string, body any, headers ...string) reply {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
			_ = json.Unmarshal(raw, &r.list)
		} else if err := json.Unmarshal(raw, &r.body); err != nil {
			s.t.Fatalf("%s %s: not JSON: %s", method, path, raw)
		}
	}
	if r.status >= 500 {
		s.t.Errorf("%s %s: %d %s", method, path, r.status, raw)
	}
	if strings.HasPrefix(path, "/api/v1/") && path != "/api/v1/openapi.json" {
		s.validate(req, r)
	}
	return r
}

// validate checks one response against the OpenAPI document.
func (s *site) validate(req *http.Request, r reply) {
	s.t.Helper()
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		if r.status == 404 {
			return // no such route: the 404 body is checked by the test itself
		}
		s.t.Errorf("%s %s: not in the OpenAPI document: %v", req.Method, req.URL.Path, err)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 r.status,
		Header:                 r.header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(r.raw)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		s.t.Errorf("%s %s -> %d does not match the OpenAPI document: %v\n%s", req.Method, req.URL.Path, r.status, err, r.raw)
	}
}

// at is the RFC 3339 time of hh:mm on the test day, in the salon's zone.
func (s *site) at(hhmm string) string {
	return bookingtest.At(s.salon, testDay, hhmm).Format(time.RFC3339)
}

func (s *site) newBooking(master *booking.Master, hhmm string) map[string]any {
	return map[string]any{
		"service_id": s.svc.ID, "master_id": master.ID, "starts_at": s.at(hhmm),
		"client": map[string]any{"name": "Anna", "phone": bookingtest.Phone()},
	}
}

func (s *site) book(master *booking.Master, hhmm string) reply {
	s.t.Helper()
	r := s.do("POST", "/api/v1/salons/studio/bookings", s.newBooking(master, hhmm))
	if r.status != 201 {
		s.t.Fatalf("book %s: %d %s", hhmm, r.status, r.raw)
	}
	return r
}
