package panel

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	qrcode "github.com/skip2/go-qrcode"
)

// onlineData is where the salon's clients book: the widget's link and its
// embed snippet, a QR code of the link, the bot's deep link.
type onlineData struct {
	WidgetURL string
	Snippet   string
	BotURL    string // "" when no bot runs
	GiftURL   string // the page that sells packages and certificates online ("" while none is on sale)
	Payments  bool   // the server takes payments online
}

// online shows the salon's booking links.
func (h *Handler) online(c *fiber.Ctx) error {
	s := salonOf(c)
	base := h.base(c)
	d := onlineData{
		WidgetURL: base + "/w/" + url.PathEscape(s.Slug),
		Snippet:   fmt.Sprintf(`<script src="%s/widget.js" data-salon="%s" async></script>`, base, s.Slug),
	}
	// (Sold online only where payments are taken, as the widget links it.)
	if d.Payments = h.svc.Provider() != nil; d.Payments {
		offers, err := h.svc.BalanceOffers(c.UserContext(), s.ID, false)
		if err != nil {
			return err
		}
		if len(offers) > 0 {
			d.GiftURL = d.WidgetURL + "/gift"
		}
	}
	if h.cfg.BotUsername != nil {
		if u := h.cfg.BotUsername(); u != "" {
			d.BotURL = "https://t.me/" + url.PathEscape(u) + "?start=" + url.QueryEscape(s.Slug)
		}
	}
	return h.render(c, "online", langOf(c).T("Online booking"), d)
}

// onlineQR is a QR code of the widget's link, as PNG or SVG (for printing
// at the reception desk); ?download names it for saving.
func (h *Handler) onlineQR(c *fiber.Ctx) error {
	s := salonOf(c)
	q, err := qrcode.New(h.base(c)+"/w/"+url.PathEscape(s.Slug), qrcode.Medium)
	if err != nil {
		return fmt.Errorf("qr code: %w", err)
	}
	var body []byte
	switch c.Params("format") {
	case "png":
		if body, err = q.PNG(512); err != nil {
			return fmt.Errorf("qr code: %w", err)
		}
		c.Type("png")
	case "svg":
		body = qrSVG(q.Bitmap())
		c.Set(fiber.HeaderContentType, "image/svg+xml")
	default:
		return errNoPage
	}
	if c.Query("download") != "" {
		c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s-booking-qr.%s"`, s.Slug, c.Params("format")))
	}
	c.Set(fiber.HeaderCacheControl, "private, max-age=300")
	return c.Send(body)
}

// qrSVG draws a QR code's modules (its quiet zone included) as one path of
// unit squares: crisp at any print size.
func qrSVG(bits [][]bool) []byte {
	n := len(bits)
	var path strings.Builder
	for y, row := range bits {
		for x, dark := range row {
			if dark {
				fmt.Fprintf(&path, "M%d %dh1v1h-1z", x, y)
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="512" height="512" shape-rendering="crispEdges">`+
		`<rect width="%d" height="%d" fill="#fff"/><path fill="#000" d="%s"/></svg>`, n, n, n, n, path.String())
	return b.Bytes()
}

// base is the server's public base URL: SALON_PUBLIC_URL, else this
// request's.
func (h *Handler) base(c *fiber.Ctx) string {
	if h.cfg.PublicURL != "" {
		return strings.TrimRight(h.cfg.PublicURL, "/")
	}
	return c.BaseURL()
}
