package panel

import (
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
