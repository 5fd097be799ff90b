package widget

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// OpenAPI is the API's OpenAPI 3 document, served at /api/v1/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

func serveOpenAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	return c.Send(OpenAPI)
}
