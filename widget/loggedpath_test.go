package widget_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"salon/widget"
)

// TestLoggedPathGrantsNothing: what the log shows of a request under a
// secret route carries no token, whether a route took it or not (another
// method, a segment more).
func TestLoggedPathGrantsNothing(t *testing.T) {
	const token = "FEH4ynHwaI3fN7FvJeH2nw"
	app := fiber.New()
	var got string
	app.Use(func(c *fiber.Ctx) error {
		err := c.Next()
		got = widget.LoggedPath(c)
		return err
	})
	app.Get("/a/:token", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Get("/w/:slug/back/:ref", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Get("/api/v1/salons/:slug/balances/:code", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Post("/api/v1/purchases/:ref", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Get("/w/:slug/bought/:ref", func(c *fiber.Ctx) error { return c.SendString("ok") })
	const code = "732Y-837W-SX73"
	for _, r := range [][2]string{{"GET", "/a/" + token}, {"OPTIONS", "/a/" + token}, {"PUT", "/a/" + token}, {"GET", "/a/" + token + "/x"},
		{"GET", "/calendar/" + token + ".ics"}, {"DELETE", "/api/v1/returns/" + token}, {"POST", "/w/studio/back/" + token},
		// A path no route took in its shape: a slash doubled, other
		// capitals, another method, a segment more, a code in lower case.
		{"GET", "//api/v1/salons/demo/balances/" + code}, {"GET", "/API/v1/salons/demo/balances/" + code + "/x"},
		{"GET", "/api/v1/salons/demo/balances/" + strings.ToLower(code) + "/x"}, {"GET", "/api/v1/purchases/" + token},
		{"GET", "/w/demo/bought/" + token + "/x"}, {"GET", "/A/" + token + "/x"}, {"GET", "/Calendar/" + token + ".ics/x"},
		{"GET", "/api/v1/salons/demo/balances/abcd-efgh-jkmn/x"}} {
		resp, err := app.Test(httptest.NewRequest(r[0], r[1], nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if strings.Contains(got, token) || strings.Contains(strings.ToUpper(got), code) || strings.Contains(got, "4ynHw") || strings.Contains(got, "efgh") || got == "" {
			t.Errorf("%s %s is logged as %q", r[0], r[1], got)
		}
	}
	// What grants nothing is logged as it is: an operator reads which
	// page was not found.
	for path, want := range map[string]string{"/w/demo/nope": "/w/demo/nope", "/static/app.js.map": "/static/app.js.map",
		"/api/v1/salons/demo/bookings/17/x": "/api/v1/salons/demo/bookings/17/x", "/w/demo/Nope": "/w/demo/…"} {
		resp, err := app.Test(httptest.NewRequest("GET", path, nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got != want {
			t.Errorf("GET %s is logged as %q, want %q", path, got, want)
		}
	}
}
