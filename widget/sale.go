package widget

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
)

// Packages and certificates bought online: the salon's offers, the
// purchase (a payment through the provider), and the buyer's return page,
// which shows the code to the browser that bought it (by the claim it
// made and kept; the return URL, which the provider keeps, names the sale
// only by a reference that shows its state).

type saleOfferJSON struct {
	ID    int64               `json:"id"`
	Kind  booking.BalanceKind `json:"kind"`
	Title string              `json:"title"`
	Price booking.Money       `json:"price"`
	// A certificate's amount, or a package's visits and services.
	Amount     *booking.Money `json:"amount,omitempty"`
	Visits     int            `json:"visits,omitempty"`
	ServiceIDs []int64        `json:"service_ids,omitempty"`
	ValidDays  int            `json:"valid_days,omitempty"`
}

func toSaleOffer(o booking.BalanceOffer) saleOfferJSON {
	out := saleOfferJSON{ID: o.ID, Kind: o.Kind, Title: o.Title, Price: o.Price, Visits: o.Visits, ServiceIDs: o.ServiceIDs, ValidDays: o.ValidDays}
	if o.Kind == booking.BalanceCertificate {
		out.Amount = &o.Amount
	}
	return out
}

func (h *Handler) listOffers(c *fiber.Ctx) error {
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	out := []saleOfferJSON{}
	if h.svc.Provider() != nil {
		list, err := h.svc.BalanceOffers(c.UserContext(), s.ID, false)
		if err != nil {
			return err
		}
		for _, o := range list {
			out = append(out, toSaleOffer(o))
		}
	}
	return c.JSON(out)
}

type purchaseBody struct {
	OfferID *int64      `json:"offer_id"`
	Buyer   *clientBody `json:"buyer"`
	Claim   *string     `json:"claim"`
}

type saleJSON struct {
	ID     int64               `json:"id"`
	Status string              `json:"status"`
	Kind   booking.BalanceKind `json:"kind"`
	Title  string              `json:"title"`
	Price  booking.Money       `json:"price"`
	// A certificate's amount, or a package's visits.
	Amount     *booking.Money `json:"amount,omitempty"`
	Visits     int64          `json:"visits,omitempty"`
	ValidUntil string         `json:"valid_until,omitempty"`
	// Ref is the return page's reference (the purchase's answer only).
	Ref     string       `json:"ref,omitempty"`
	Payment *paymentJSON `json:"payment,omitempty"`
	// Email is where the code was sent, masked (the return page's).
	Email string `json:"email,omitempty"`
	// Mailed: the code's e-mail went; MailFailed: it did not (neither:
	// it is on its way).
	Mailed     bool `json:"mailed,omitempty"`
	MailFailed bool `json:"mail_failed,omitempty"`
	// Code: for the claim that bought it.
	Code string `json:"code,omitempty"`
	// Phone: with the code, a package's client's, as written for people
	// (+7 999 555-60-01): its visits are booked with it.
	Phone string `json:"phone,omitempty"`
	// Refunded: what was paid back, or is on its way back (refunded).
	Refunded *booking.Money `json:"refunded,omitempty"`
	// Remaining: with the code, what it has left to spend (a
	// certificate's amount, or a package's visits).
	Remaining any `json:"remaining,omitempty"`
}

func toSale(x *booking.BalanceSale) saleJSON {
	out := saleJSON{ID: x.ID, Status: saleStatus(x), Kind: x.Kind, Title: x.Title, Price: x.Price, Code: x.Code,
		Mailed: !x.MailedAt.IsZero(), MailFailed: x.MailedAt.IsZero() && x.MailError != ""}
	if x.Phone != "" {
		out.Phone = booking.DisplayPhone(x.Phone)
	}
	if x.Kind == booking.BalanceCertificate {
		m := booking.Money(x.Units)
		out.Amount = &m
	} else {
		out.Visits = x.Units
	}
	if !x.ValidUntil.IsZero() {
		out.ValidUntil = x.ValidUntil.String()
	}
	switch {
	case x.URL != "":
		out.Payment = &paymentJSON{Status: string(x.Status), Amount: x.Price, URL: x.URL}
	case x.Status == booking.PayRegistering || x.Status == booking.PayUnknown:
		// The provider did not answer yet: its payment is asked for again,
		// and the return page offers it once made.
		out.Payment = &paymentJSON{Status: string(booking.PayUnknown), Amount: x.Price}
	}
	if r := x.Refunded + x.Refunding; r > 0 {
		out.Refunded = &r
	}
	switch {
	case x.Code == "":
	case x.Kind == booking.BalanceCertificate:
		out.Remaining = booking.Money(x.Left)
	default:
		out.Remaining = x.Left
	}
	return out
}

// saleStatus is a sale's state as the buyer reads it: pending (paying),
// paid (the balance is theirs), failed (nothing was charged), refunded.
func saleStatus(x *booking.BalanceSale) string {
	switch x.Status {
	case booking.PayCompleted:
		return "paid"
	case booking.PayRefunding, booking.PayRefunded:
		return "refunded"
	case booking.PayCanceled, booking.PayFailed:
		return "failed"
	}
	return "pending"
}

func (h *Handler) createPurchase(c *fiber.Ctx) error {
	s, err := h.salon(c)
	if err != nil {
		return err
	}
	var body purchaseBody
	if err := decode(c, &body, false); err != nil {
		return err
	}
	fields := map[string]i18n.Text{}
	in := booking.BalancePurchase{SalonID: s.ID}
	if key, ok := header(c, "Idempotency-Key"); ok {
		if key == "" {
			fields["idempotency_key"] = i18n.New("must not be empty (omit the header for none)")
		}
		in.Key = key
	}
	if body.OfferID == nil {
		fields["offer_id"] = i18n.New("required")
	} else {
		in.OfferID = *body.OfferID
	}
	if body.Buyer == nil {
		fields["buyer"] = i18n.New("required")
	} else {
		in.Buyer = readClient(c, fields, body.Buyer)
	}
	if body.Claim != nil {
		in.Claim = *body.Claim
	}
	if len(fields) > 0 {
		return &booking.ValidationError{Fields: fields}
	}
	x, err := h.svc.BuyBalance(c.UserContext(), in, h.boughtURL(c, s, in.Buyer.Lang))
	if err != nil {
		return err
	}
	out := toSale(x)
	out.Ref = x.Ref
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fiber.StatusCreated).JSON(out)
}

// boughtURL is where the payment page sends the buyer back: the widget's
// page of the sale's return reference, in the buyer's language.
func (h *Handler) boughtURL(c *fiber.Ctx, s *booking.Salon, lang string) booking.ReturnLink {
	base := strings.TrimRight(h.publicBase(c), "/") + "/w/" + s.Slug + "/bought/"
	query := ""
	if lang == "ru" || lang == "en" {
		query = "?lang=" + lang
	}
	return func(ref string) string { return base + ref + query }
}

type saleViewBody struct {
	Claim *string `json:"claim"`
}

// viewPurchase is the return page's read: the sale's state by its
// reference, and its code for the buyer's claim (in the body, never in a
// URL).
func (h *Handler) viewPurchase(c *fiber.Ctx) error {
	var body saleViewBody
	if err := decode(c, &body, true); err != nil {
		return err
	}
	claim := ""
	if body.Claim != nil {
		claim = *body.Claim
	}
	x, err := h.svc.SaleReturn(c.UserContext(), strings.Clone(c.Params("ref")), claim)
	if err != nil {
		return err
	}
	out := toSale(x)
	out.Email = x.Email
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(out)
}

// giftPage is the page where a client buys a certificate or a package;
// boughtPage the one they come back to from paying.
func (h *Handler) giftPage(c *fiber.Ctx) error { return h.salePage(c, "gift") }

func (h *Handler) boughtPage(c *fiber.Ctx) error { return h.salePage(c, "bought") }

type salePageData struct {
	Salon      *booking.Salon
	SalonPhone string
	Lang       string
	OtherLang  string
	T          map[string]string
	Mode       string
	Offers     []saleOffer
	// Packages: a package is on sale (whose buyer's phone is its client's).
	Packages bool
	Config   salePageConfig
}

type saleOffer struct {
	ID                int64
	Title, Price, For string
	Package           bool // (its buyer's phone is the package's client's)
}

type salePageConfig struct {
	Slug     string            `json:"slug"`
	Lang     string            `json:"lang"`
	Currency string            `json:"currency"`
	Sign     string            `json:"sign"` // (as pageConfig's)
	Before   bool              `json:"signBefore"`
	Ref      string            `json:"ref,omitempty"`
	I18n     map[string]string `json:"i18n"`
}

func (h *Handler) salePage(c *fiber.Ctx, mode string) error {
	ctx := c.UserContext()
	s, err := h.svc.SalonBySlug(ctx, c.Params("slug"))
	if err != nil {
		return h.pageError(c, err)
	}
	lang, other := salonPageLang(c, s)
	t := messages[lang]
	d := salePageData{Salon: s, SalonPhone: booking.DisplayPhone(s.Phone), Lang: lang, OtherLang: other, T: t, Mode: mode,
		Config: salePageConfig{Slug: s.Slug, Lang: lang, Currency: s.Currency, I18n: t}}
	d.Config.Sign, d.Config.Before = booking.CurrencySign(s.Currency)
	if mode == "bought" {
		d.Config.Ref = strings.Clone(c.Params("ref"))
		if err := h.svc.ReturnAt(ctx, s.ID, d.Config.Ref); err != nil {
			return h.pageError(c, err)
		}
	} else if h.svc.Provider() != nil {
		offers, err := h.svc.BalanceOffers(ctx, s.ID, false)
		if err != nil {
			return h.pageError(c, err)
		}
		names := map[int64]string{}
		if list, err := h.svc.Services(ctx, s.ID); err == nil {
			for _, sv := range list {
				names[sv.ID] = sv.Name
			}
		}
		for _, o := range offers {
			so := saleOffer{ID: o.ID, Title: keepTogether(o.Title), Price: o.Price.Format(s.Currency, lang)}
			if o.Kind == booking.BalanceCertificate {
				so.For = fmt.Sprintf(t["gift_cert_for"], o.Amount.Format(s.Currency, lang))
			} else {
				var svc []string
				for _, id := range o.ServiceIDs {
					svc = append(svc, names[id])
				}
				so.For = fmt.Sprintf(t[pluralKey("gift_pkg_for", lang, o.Visits)], o.Visits, strings.Join(svc, ", "))
				so.Package, d.Packages = true, true
			}
			if o.ValidDays > 0 {
				so.For += " · " + fmt.Sprintf(t[pluralKey("gift_valid_days", lang, o.ValidDays)], o.ValidDays)
			}
			d.Offers = append(d.Offers, so)
		}
	}
	var out bytes.Buffer
	if err := pages.ExecuteTemplate(&out, "gift.html", d); err != nil {
		return h.pageError(c, err)
	}
	setPageHeaders(c)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	if mode == "bought" {
		c.Set(fiber.HeaderCacheControl, "no-store")
	}
	return c.Send(out.Bytes())
}

// pluralKey is the text key whose noun agrees with n in lang: key for
// many (5 визитов, 5 дней), key_one (1, 21 визит; 1 day), key_few (2
// визита, 3 дня).
func pluralKey(key, lang string, n int) string {
	return key + [...]string{"_one", "_few", ""}[i18n.Plural(lang, int64(n))]
}

// amountSpaceRE finds a plain space inside an amount as people type it:
// between groups of digits ("3 000") and before a currency ("3000 ₽").
var amountSpaceRE = regexp.MustCompile(`(\d) (\d{3}\b|₽|руб|RUB|USD|EUR|€|\$)`)

// keepTogether is text an owner typed (an offer's title) with the spaces
// inside its amounts made no-break: "Сертификат на 3 000 ₽" never leaves
// "₽" or "000" alone on a line of a phone's screen.
func keepTogether(s string) string {
	for { // (overlapping runs: "10 000 000")
		t := amountSpaceRE.ReplaceAllString(s, "${1}\u00a0${2}")
		if t == s {
			return s
		}
		s = t
	}
}
