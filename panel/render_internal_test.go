package panel

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// TestEveryFormHasAPage: a POST of the panel's that renders a page (a
// form refused, a code shown once) is put at a GET page that exists: its
// own head (/panel/balances/7/refund: /panel/balances/7) or the form's
// page; none falls back to the start but the ones that only redirect.
func TestEveryFormHasAPage(t *testing.T) {
	app := fiber.New()
	h := &Handler{}
	h.Register(app)
	gets := map[string]bool{}
	param := regexp.MustCompile(`:[a-z]+`)
	for _, r := range app.GetRoutes(true) {
		if r.Method == fiber.MethodGet {
			gets[param.ReplaceAllString(r.Path, "7")] = true
		}
	}
	redirectsOnly := map[string]bool{"/panel/logout": true, "/panel/lang": true, "/panel/messages/:id/retry": true}
	for _, r := range app.GetRoutes(true) {
		if r.Method != fiber.MethodPost || !strings.HasPrefix(r.Path, "/panel") || redirectsOnly[r.Path] {
			continue
		}
		path := param.ReplaceAllString(r.Path, "7")
		page := h.pageOf(app, path)
		if !gets[page] && !gets[strings.TrimSuffix(page, "/")] || page == "/panel/" {
			t.Errorf("a POST to %s renders at %s, which is no page", r.Path, page)
		}
	}
}

// TestAPanicIsAPageOfThePanel: a handler's panic is answered as any
// internal error of the panel is, a page in its words, its stack logged,
// none of it shown.
func TestAPanicIsAPageOfThePanel(t *testing.T) {
	var logged strings.Builder
	h := New(nil, Config{Log: slog.New(slog.NewTextHandler(&logged, nil))})
	app := fiber.New()
	app.Use(h.errors)
	app.Get("/panel/boom", func(*fiber.Ctx) error { panic("index out of range [1] with length 1") })
	resp, err := app.Test(httptest.NewRequest(fiber.MethodGet, "/panel/boom", nil), 5000)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != fiber.StatusInternalServerError || !strings.HasPrefix(resp.Header.Get(fiber.HeaderContentType), "text/html") ||
		!strings.Contains(string(body), "<html") || strings.Contains(string(body), "index out of range") || strings.Contains(string(body), "goroutine") {
		t.Errorf("a panic: %d %s %.500s", resp.StatusCode, resp.Header.Get(fiber.HeaderContentType), body)
	}
	if !strings.Contains(logged.String(), "index out of range") || !strings.Contains(logged.String(), "panel.TestAPanicIsAPageOfThePanel") {
		t.Errorf("the log: %s", logged.String())
	}
}
