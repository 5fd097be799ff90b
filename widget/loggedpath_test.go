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
	for _, r := range [][2]string{{"GET", "/a/" + token}, {"OPTIONS", "/a/" + token}, {"PUT", "/a/" + token}, {"GET", "/a/" + token + "/x"},
		{"GET", "/calendar/" + token + ".ics"}, {"DELETE", "/api/v1/returns/" + token}, {"POST", "/w/studio/back/" + token}} {
		resp, err := app.Test(httptest.NewRequest(r[0], r[1], nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if strings.Contains(got, token) || got == "" {
			t.Errorf("%s %s is logged as %q", r[0], r[1], got)
		}
	}
}
