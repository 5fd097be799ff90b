package panel

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io/fs"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/web"
)

// pages are the panel's templates by name: each page file is parsed over
// the layout and the shared parts.
var pages = func() map[string]*template.Template {
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(web.Panel, "layout.html", "parts.html"))
	names, err := fs.Glob(web.Panel, "*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		if n == "layout.html" || n == "parts.html" {
			continue
		}
		out[strings.TrimSuffix(n, ".html")] = template.Must(template.Must(base.Clone()).ParseFS(web.Panel, n))
	}
	return out
}()

var funcs = template.FuncMap{
	"hm":   func(t time.Time) string { return t.Format("15:04") },
	"date": func(t time.Time) string { return t.Format("2006-01-02") },
	"join": strings.Join,
	// phone is a phone as people read it (+7 999 123-45-67), as on every
	// page.
	"phone": booking.DisplayPhone,
	// YooKassa's codes for a receipt's VAT and the seller's tax system.
	// The salon sets the nominal rate (prepayments carry its calculated
	// one: booking.ReceiptSettings); a calculated code set before is
	// offered while it is the salon's, so that saving keeps it.
	"vatCodes": func(current int) map[int]string {
		codes := map[int]string{1: "no VAT", 2: "VAT 0%", 3: "VAT 10%", 4: "VAT 20%", 7: "VAT 5%", 8: "VAT 7%", 11: "VAT 22%"}
		if name, ok := map[int]string{5: "VAT 10/110", 6: "VAT 20/120", 9: "VAT 5/105", 10: "VAT 7/107", 12: "VAT 22/122"}[current]; ok {
			codes[current] = name
		}
		return codes
	},
	"taxSystems": func() map[int]string {
		return map[int]string{1: "general (OSN)", 2: "simplified, income (USN)", 3: "simplified, income minus expense", 4: "single tax on imputed income (ENVD)",
			5: "unified agricultural tax (ESN)", 6: "patent (PSN)"}
	},
	// invalid marks an input whose field the page's errors name (fields
	// are keyed by their label in the page's language: lang.Fields).
	"invalid": func(fields map[string]string, label string) template.HTMLAttr {
		if _, ok := fields[label]; ok {
			return ` aria-invalid="true"`
		}
		return ""
	},
	"isoLocal": func(t time.Time) string {
		return t.Format("2006-01-02T15:04")
	},
	"query": func(kv ...any) template.URL {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(fmt.Sprint(kv[i]), fmt.Sprint(kv[i+1]))
		}
		return template.URL(v.Encode())
	},
	"add":        func(a, b int) int { return a + b },
	"pair":       func(a, b any) []any { return []any{a, b} }, // (two arguments of a template)
	"has":        func(ids []int64, id int64) bool { return slices.Contains(ids, id) },
	"asset":      web.Asset,
	"zoneGroups": zoneGroups,
}

// zoneGroup is a group of a time zone list: its label (a key of the
// panel's words) and its zones.
type zoneGroup struct {
	Label string
	Zones []string
}

// zoneGroups lists the zones a salon may be in: first those of country
// (the salon's), then the rest by region in the order of the reader's
// alphabet (Africa, America, …; Австралия, Азия, …), UTC, and the salon's own
// zone (an old name the list no longer has is kept, last, never changed
// by saving the form).
func zoneGroups(current, country string, l *lang) []zoneGroup {
	zones := booking.TimeZones()
	regions := map[string]bool{}
	for _, z := range zones {
		region, _, _ := strings.Cut(z, "/")
		regions[region] = true
	}
	first := zoneGroup{Label: "The salon's country"}
	var rest []zoneGroup
	var other []string // a name the list does not have (Etc/GMT-3, US/Eastern)
	if current != "" && !slices.Contains(zones, current) {
		if booking.CountryOf(current) == country && country != "" {
			first.Zones = append(first.Zones, current)
		} else {
			other = append(other, current)
		}
	}
	slices.Sort(zones)
	for _, z := range zones {
		if country != "" && booking.CountryOf(z) == country {
			first.Zones = append(first.Zones, z)
			continue
		}
		region, _, _ := strings.Cut(z, "/")
		if n := len(rest); n == 0 || rest[n-1].Label != "zone "+region {
			rest = append(rest, zoneGroup{Label: "zone " + region})
		}
		rest[len(rest)-1].Zones = append(rest[len(rest)-1].Zones, z)
	}
	utc := func(g zoneGroup) int { // (after the regions)
		if g.Label == "zone UTC" {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(rest, func(a, b zoneGroup) int {
		return cmp.Or(cmp.Compare(utc(a), utc(b)), strings.Compare(l.T(a.Label), l.T(b.Label)))
	})
	if other != nil {
		rest = append(rest, zoneGroup{Label: "zone Other", Zones: other})
	}
	if len(first.Zones) == 0 {
		return rest
	}
	// A country's zones from west to east (Kaliningrad, Moscow, …,
	// Kamchatka), as its people list them.
	now := time.Now()
	offset := func(z string) int {
		loc, err := time.LoadLocation(z)
		if err != nil {
			return 0
		}
		_, off := now.In(loc).Zone()
		return off
	}
	slices.SortStableFunc(first.Zones, func(a, b string) int { return cmp.Compare(offset(a), offset(b)) })
	return append([]zoneGroup{first}, rest...)
}

// page is what every template gets: the language, the user and salon, the
// CSRF token for forms, and the page's own data.
type page struct {
	L     *lang
	User  *booking.User
	Salon *booking.Salon
	CSRF  string
	Title string
	// Here is the page's own address: a page rendered by a POST (a form
	// refused, a code shown once) is at the page's GET address, which the
	// browser's address bar and the language switch take.
	Here   string
	Nav    string
	Notice string
	Data   any
}

// render executes a page into a buffer (so a failing template sends no
// half page) and sends it.
func (h *Handler) render(c *fiber.Ctx, name, title string, data any) error {
	t, ok := pages[name]
	if !ok {
		return fmt.Errorf("panel: no template %q", name)
	}
	p := h.pageFor(c, name, title, data)
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		return fmt.Errorf("panel: render %s: %w", name, err)
	}
	c.Type("html", "utf-8")
	return c.Send(buf.Bytes())
}

// fragment executes one named template of a page (an htmx swap).
func (h *Handler) fragment(c *fiber.Ctx, name, block string, data any) error {
	p := h.pageFor(c, name, "", data)
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, block, p); err != nil {
		return fmt.Errorf("panel: render %s/%s: %w", name, block, err)
	}
	c.Type("html", "utf-8")
	return c.Send(buf.Bytes())
}

func (h *Handler) pageFor(c *fiber.Ctx, name, title string, data any) *page {
	p := &page{L: langOf(c), Title: title, Nav: name, Data: data, Notice: notices[c.Query("done")], Here: c.OriginalURL()}
	if c.Method() == fiber.MethodPost {
		p.Here = h.pageOf(c.App(), c.Path())
	}
	if u, ok := c.Locals(userKey).(*booking.User); ok {
		p.User = u
		p.CSRF = csrfToken(c.Locals(sessionKey).(string))
	}
	if s, ok := c.Locals(salonKey).(*booking.Salon); ok {
		p.Salon = s
	}
	if p.Notice != "" {
		p.Notice = p.L.T(p.Notice)
	}
	return p
}

// notices are the confirmations a redirect after a change shows (?done=).
var notices = map[string]string{
	"created":               "Booking created.",
	"cancelled":             "Booking cancelled.",
	"salon_cancelled":       "Booking cancelled. Its time is not offered to the waiting list; if the master cannot work then, take it off their schedule, so that it is not booked online either.",
	"rescheduled":           "Booking moved.",
	"unmoved":               "Nothing to move: the booking is already at that time, with that master.",
	"completed":             "Marked as completed.",
	"no_show":               "Marked as no-show.",
	"saved":                 "Saved.",
	"invitation_revoked":    "Invitation withdrawn: its link no longer works.",
	"invited":               "Invitation e-mailed: its link lets them set their password.",
	"invitation_not_mailed": "The invitation's e-mail did not go: invite the address again in a while.",
	"removed":               "Removed.",
	"refunded":              "The deposit is being refunded.",
	"paid":                  "The deposit is recorded as paid in the salon; the booking is confirmed.",
	"checked":               "Checked with the payment service.",
	"released":              "The money is being released.",
	"nothing":               "Nothing to do: it had already moved on.",
	"erased":                "The client's personal data is erased.",
	"resent":                "The message is queued again: it is rebuilt from the booking and sent now.",
	"waitlisted":            "The client is on the waiting list.",
	"offered":               "The time is offered to the client.",
	"paid_with":             "Paid with the balance: it is spent when the visit is marked completed.",
	"balance_refunded":      "What was left is refunded: pay it back to the client.",
	"sale_refunded":         "What was left is being refunded to the buyer's card through the payment service.",
	"offer_added":           "On sale online: clients buy it on the widget's gift page.",
	"offer_changed":         "Saved.",
	"code_sent":             "A new code is e-mailed to the buyer; the old one no longer works.",
	"refund_asked":          "The refund is asked of the payment service again: it is followed until the money goes back.",
	"sale_back":             "The money went back to the buyer's card.",
	"refund_recorded":       "The refund is recorded as made at the payment service.",
	"sold_already":          "This sale was made already (the form was sent twice): here it is. Its code was shown once, after the first send; nothing more was sold.",
}

// done redirects (303) to path with a confirmation.
func done(c *fiber.Ctx, path, what string) error {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return c.Redirect(path+sep+"done="+what, fiber.StatusSeeOther)
}

// formPages are the GET pages of the forms that POST to an address no
// GET route has.
var formPages = map[string]string{
	"/panel/bookings":       "/panel/bookings/new",
	"/panel/balance-offers": "/panel/balances",
}

// pageOf is the GET page a POST to path belongs to: the form's page
// (formPages), or the longest head of path a panel GET route matches
// (/panel/balances/7/refund: /panel/balances/7), else the panel's start.
func (h *Handler) pageOf(app *fiber.App, path string) string {
	h.getsOnce.Do(func() {
		for _, r := range app.GetRoutes(true) {
			if r.Method == fiber.MethodGet && strings.HasPrefix(r.Path, "/panel") && !strings.ContainsAny(r.Path, "*?+") {
				h.gets = append(h.gets, strings.Split(strings.TrimSuffix(r.Path, "/"), "/"))
			}
		}
	})
	segs := strings.Split(strings.TrimSuffix(path, "/"), "/")
	if len(segs) > 3 && segs[2] == "balance-offers" {
		return "/panel/balances" // (an offer's own actions: its list)
	}
	if len(segs) > 3 && segs[2] == "invitations" {
		return "/panel/users" // (an invitation's: the users page)
	}
	if p, ok := formPages[strings.Join(segs, "/")]; ok {
		return p
	}
	for n := len(segs); n > 2; n-- {
		for _, r := range h.gets {
			if len(r) == n && slices.EqualFunc(r, segs[:n], func(p, s string) bool { return p == s || (strings.HasPrefix(p, ":") && s != "") }) {
				return strings.Join(segs[:n], "/")
			}
		}
	}
	return "/panel/"
}
