package booking

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// DepositFallback is what a salon's new deposit bookings do while online
// payment is down.
type DepositFallback string

// Deposit fallbacks.
const (
	FallbackRefuse  DepositFallback = "refuse"   // no booking: "online payment is down, try later"
	FallbackInSalon DepositFallback = "in_salon" // booked, the deposit paid in the salon
)

// TopUp says what a move to a larger deposit asks of a client who paid the
// smaller one.
type TopUp string

// Top-up policies.
const (
	TopUpOnline TopUp = "online" // the difference is asked online (a payment of its own)
	TopUpSalon  TopUp = "salon"  // the difference is paid at the visit
)

// RefundPolicy says when a cancelled booking's deposit is returned.
type RefundPolicy string

// Refund policies.
const (
	RefundAlways       RefundPolicy = "always"        // every cancellation refunds
	RefundBeforeCutoff RefundPolicy = "before_cutoff" // refund when cancelled before the cutoff
	RefundNever        RefundPolicy = "never"         // deposits are kept
)

// Salon is a tenant: every other record belongs to exactly one salon, and every
// query is scoped by salon.
type Salon struct {
	ID       int64
	Slug     string
	Name     string
	Timezone string // IANA name, e.g. Europe/Moscow
	Currency string // ISO 4217, e.g. RUB
	Locale   string // ru or en: the default language of the bot and widget
	// Country (ISO 3166 alpha-2) reads phone numbers written in a national
	// format; by default the country of Timezone.
	Country string

	SlotStepMin  int          // grid of offered start times
	MinNoticeMin int          // clients cannot book sooner than this
	HoldMin      int          // how long an unpaid deposit booking holds its slot
	CutoffHours  int          // clients cannot cancel or reschedule later than this before the start
	HorizonDays  int          // clients cannot book further ahead than this
	RefundPolicy RefundPolicy // deposit refund on cancellation
	// DepositFallback is what a new deposit booking does while the payment
	// provider does not answer: refuse it, or book it with the deposit due
	// in the salon.
	DepositFallback DepositFallback
	// DepositTopUp is what a move to a larger deposit asks of a client who
	// paid the smaller one (a move to a smaller one refunds the difference
	// unless the refund policy keeps deposits).
	DepositTopUp TopUp
	// The waitlist: WaitlistMode (WaitlistBroadcast or WaitlistHold), how
	// long a held offer lasts, and how many in line a broadcast reaches.
	WaitlistMode       string
	WaitlistOfferMin   int
	WaitlistBroadcastN int

	// What clients read of the salon: where it is, its phone (E.164), a
	// few words about it, and its privacy policy (an http(s) link), which
	// the booking form shows before a client gives their name and phone.
	Address    string
	Phone      string
	About      string
	PrivacyURL string

	loc *time.Location
}

// Location returns the salon's time zone.
func (s *Salon) Location() *time.Location {
	if s.loc == nil {
		loc, err := loadLocation(s.Timezone)
		if err != nil {
			return time.UTC
		}
		s.loc = loc
	}
	return s.loc
}

// Today returns the salon-local date of t.
func (s *Salon) Today(t time.Time) Date { return DateOf(t.In(s.Location())) }

// Defaults for a new salon's settings. CreateSalon applies those whose zero
// value is not allowed; zero notice and cutoff are honoured, so callers that
// want the defaults set them.
// Lengths of what clients read of a salon.
const (
	MaxAddressLen = 300
	MaxAboutLen   = 1000
	MaxURLLen     = 500
)

const (
	DefaultSlotStepMin  = 15
	DefaultMinNoticeMin = 60
	DefaultHoldMin      = 15
	DefaultCutoffHours  = 3
	DefaultHorizonDays  = 60
)

// countryCurrency is the currency a new salon of a country prices in
// when none is given (the countries the platform's salons are likeliest
// in; elsewhere RUB, changed in the panel's settings).
var countryCurrency = map[string]string{
	"RU": "RUB", "BY": "BYN", "KZ": "KZT", "KG": "KGS", "UZ": "UZS", "TJ": "TJS", "AM": "AMD", "AZ": "AZN", "GE": "GEL",
	"MD": "MDL", "UA": "UAH", "TM": "TMT", "MN": "MNT", "TR": "TRY", "AE": "AED", "IL": "ILS", "RS": "RSD", "ME": "EUR",
	"US": "USD", "CA": "CAD", "GB": "GBP", "CH": "CHF", "PL": "PLN", "CZ": "CZK", "HU": "HUF", "SE": "SEK", "NO": "NOK",
	"DK": "DKK", "AU": "AUD", "NZ": "NZD", "TH": "THB", "ID": "IDR", "VN": "VND", "IN": "INR", "CN": "CNY", "JP": "JPY",
	"DE": "EUR", "FR": "EUR", "IT": "EUR", "ES": "EUR", "PT": "EUR", "NL": "EUR", "BE": "EUR", "AT": "EUR", "IE": "EUR",
	"FI": "EUR", "GR": "EUR", "CY": "EUR", "EE": "EUR", "LV": "EUR", "LT": "EUR", "SK": "EUR", "SI": "EUR", "HR": "EUR",
	"LU": "EUR", "MT": "EUR", "BG": "EUR", "RO": "RON", "BR": "BRL", "MX": "MXN", "AR": "ARS",
}

// russianSpeaking are the countries whose new salons speak Russian to
// their clients when no language is given (else English). Not Ukraine:
// its salons are not presumed to want Russian (English until Ukrainian is
// offered; the owner may choose Russian).
var russianSpeaking = map[string]struct{}{"RU": {}, "BY": {}, "KZ": {}, "KG": {}, "UZ": {}, "TJ": {}, "AM": {}, "AZ": {}, "GE": {},
	"MD": {}, "TM": {}}

// zoneOfCity is the time zone named after city ("london", "New York":
// Europe/London, America/New_York), or "".
func zoneOfCity(city string) string {
	city = strings.ReplaceAll(strings.TrimSpace(city), " ", "_")
	if city == "" {
		return ""
	}
	for _, z := range slices.Sorted(maps.Keys(zoneCountry)) {
		if _, c, ok := strings.Cut(z, "/"); ok && strings.EqualFold(c[strings.LastIndexByte(c, '/')+1:], city) {
			return z
		}
	}
	return ""
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,62}$`)

func (s *Salon) normalize() error {
	fe := fieldErrors{}
	s.Slug = strings.TrimSpace(strings.ToLower(s.Slug))
	s.Name = cleanText(fe, "name", s.Name, MaxTitleLen, oneLine, true)
	s.Timezone = strings.TrimSpace(s.Timezone)
	s.Currency = strings.ToUpper(strings.TrimSpace(s.Currency))
	s.Locale = strings.ToLower(strings.TrimSpace(s.Locale))
	s.Country = strings.ToUpper(strings.TrimSpace(s.Country))
	setDefault(&s.Country, cmpOr(CountryOf(s.Timezone), "RU"))
	// A new salon's money and language follow its country unless given.
	setDefault(&s.Currency, cmpOr(countryCurrency[s.Country], "RUB"))
	if _, ok := russianSpeaking[s.Country]; ok {
		setDefault(&s.Locale, "ru")
	}
	setDefault(&s.Locale, "en")
	setDefault(&s.SlotStepMin, DefaultSlotStepMin)
	setDefault(&s.HoldMin, DefaultHoldMin)
	setDefault(&s.HorizonDays, DefaultHorizonDays)
	setDefault(&s.RefundPolicy, RefundBeforeCutoff)
	setDefault(&s.DepositFallback, FallbackRefuse)
	setDefault(&s.DepositTopUp, TopUpOnline)
	setDefault(&s.WaitlistMode, WaitlistBroadcast)
	setDefault(&s.WaitlistOfferMin, 15)
	setDefault(&s.WaitlistBroadcastN, 3)

	if !slugRE.MatchString(s.Slug) {
		fe.add("slug", "use 2-63 lowercase latin letters, digits and dashes")
	}
	if s.Timezone == "" || s.Timezone == "Local" || !strings.Contains(s.Timezone, "/") && s.Timezone != "UTC" {
		if z := zoneOfCity(s.Timezone); z != "" {
			fe.add("timezone", "use an IANA time zone: %s?", z) // ("London": Europe/London)
		} else {
			fe.add("timezone", "use an IANA time zone like Europe/Moscow")
		}
	} else if loc, err := loadLocation(s.Timezone); err != nil {
		fe.add("timezone", "unknown time zone %s", s.Timezone)
	} else {
		s.loc = loc
	}
	if len(s.Currency) != 3 {
		fe.add("currency", "use a three-letter ISO code like RUB")
	}
	if len(s.Country) != 2 || s.Country[0] < 'A' || s.Country[0] > 'Z' || s.Country[1] < 'A' || s.Country[1] > 'Z' {
		fe.add("country", "use a two-letter ISO code like RU")
	}
	if s.Locale != "ru" && s.Locale != "en" {
		fe.add("locale", "ru or en")
	}
	checkRange(fe, "slot_step_min", s.SlotStepMin, 5, 240)
	checkRange(fe, "min_notice_min", s.MinNoticeMin, 0, 10080)
	checkRange(fe, "hold_min", s.HoldMin, 1, 1440)
	checkRange(fe, "cutoff_hours", s.CutoffHours, 0, 720)
	checkRange(fe, "horizon_days", s.HorizonDays, 1, 366)
	switch s.RefundPolicy {
	case RefundAlways, RefundBeforeCutoff, RefundNever:
	default:
		fe.add("refund_policy", "always, before_cutoff or never")
	}
	if s.DepositFallback != FallbackRefuse && s.DepositFallback != FallbackInSalon {
		fe.add("deposit_fallback", "refuse or in_salon")
	}
	if s.DepositTopUp != TopUpOnline && s.DepositTopUp != TopUpSalon {
		fe.add("deposit_topup", "online or salon")
	}
	if s.WaitlistMode != WaitlistBroadcast && s.WaitlistMode != WaitlistHold {
		fe.add("waitlist_mode", "broadcast or hold")
	}
	checkRange(fe, "waitlist_offer_min", s.WaitlistOfferMin, 1, 1440)
	checkRange(fe, "waitlist_broadcast_n", s.WaitlistBroadcastN, 1, 50)
	s.Address = cleanText(fe, "address", s.Address, MaxAddressLen, oneLine, false)
	s.About = cleanText(fe, "about", s.About, MaxAboutLen, multiLine, false)
	if s.Phone = strings.TrimSpace(s.Phone); s.Phone != "" {
		if p, err := NormalizePhone(s.Phone, s.Country); err != nil {
			fe.addErr("phone", err)
		} else {
			s.Phone = p
		}
	}
	if s.PrivacyURL = strings.TrimSpace(s.PrivacyURL); s.PrivacyURL != "" {
		u, err := url.Parse(s.PrivacyURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(s.PrivacyURL) > MaxURLLen {
			fe.add("privacy_url", "a link like https://example.com/privacy")
		}
	}
	return fe.err()
}

func setDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

func checkRange(fe fieldErrors, field string, v, lo, hi int) {
	if v < lo || v > hi {
		fe.add(field, "must be between %d and %d", lo, hi)
	}
}

// CreateSalon creates a salon. Zero slot step, hold, horizon, currency,
// locale and refund policy take the defaults; zero notice and cutoff mean none.
// Only the platform creates salons (ErrForbidden).
// Errors: ErrInvalid (a field, or the slug is taken).
func (s *Service) CreateSalon(ctx context.Context, in Salon) (*Salon, error) {
	if err := onlySystem(ctx); err != nil {
		return nil, err
	}
	if err := in.normalize(); err != nil {
		return nil, err
	}
	if err := s.inTx(ctx, func(tx pgx.Tx) error { return in.insert(ctx, tx) }); err != nil {
		return nil, err
	}
	return &in, nil
}

// CreateSalonWithOwner creates a salon and its first owner, both or
// neither (salon init). Only the platform creates salons (ErrForbidden).
// Errors: ErrInvalid (a field of either; the slug or the email is taken).
func (s *Service) CreateSalonWithOwner(ctx context.Context, in Salon, email, password string) (*Salon, *User, error) {
	if err := onlySystem(ctx); err != nil {
		return nil, nil, err
	}
	if err := in.normalize(); err != nil {
		return nil, nil, err
	}
	u, hash, err := s.newUser(ctx, 0, email, password, RoleOwner)
	if err != nil {
		return nil, nil, err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := in.insert(ctx, tx); err != nil {
			return err
		}
		u.SalonID = in.ID
		return u.insert(ctx, tx, hash)
	})
	if err != nil {
		return nil, nil, err
	}
	return &in, u, nil
}

// CheckNewSalon checks a salon and its owner's e-mail as
// CreateSalonWithOwner would, before a password is asked for: every
// field at fault, a taken link name or e-mail too (salon init asks again
// for each). Only the platform creates salons (ErrForbidden).
// Errors: ErrInvalid.
func (s *Service) CheckNewSalon(ctx context.Context, in Salon, email string) error {
	if err := onlySystem(ctx); err != nil {
		return err
	}
	fe := fieldErrors{}
	if err := in.normalize(); err != nil {
		var ve *ValidationError
		if !errors.As(err, &ve) {
			return err
		}
		maps.Copy(fe, ve.Fields)
	}
	email = staffEmail(fe, email)
	var slugTaken, emailTaken bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM salons WHERE slug = $1), EXISTS (SELECT 1 FROM users WHERE email = $2)`,
		in.Slug, email).Scan(&slugTaken, &emailTaken); err != nil {
		return fmt.Errorf("check salon: %w", dbErr(err))
	}
	if slugTaken {
		fe.add("slug", "already taken") // (add keeps a field's first problem)
	}
	if emailTaken {
		fe.add("email", "a user with this email exists")
	}
	return fe.err()
}

// insert writes the salon (its ID is set).
func (s *Salon) insert(ctx context.Context, tx pgx.Tx) error {
	err := tx.QueryRow(ctx, `
		INSERT INTO salons (slug, name, timezone, currency, locale, slot_step_min, min_notice_min,
		                    hold_min, cutoff_hours, horizon_days, refund_policy, country, deposit_fallback,
		                    address, phone, about, privacy_url, deposit_topup, waitlist_mode, waitlist_offer_min, waitlist_broadcast_n)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
		RETURNING id`,
		s.Slug, s.Name, s.Timezone, s.Currency, s.Locale, s.SlotStepMin, s.MinNoticeMin,
		s.HoldMin, s.CutoffHours, s.HorizonDays, s.RefundPolicy, s.Country, s.DepositFallback,
		s.Address, s.Phone, s.About, s.PrivacyURL, s.DepositTopUp, s.WaitlistMode, s.WaitlistOfferMin, s.WaitlistBroadcastN).Scan(&s.ID)
	if pgCode(err) == pgUniqueViolation {
		return Invalid("slug", "already taken")
	}
	if err != nil {
		return fmt.Errorf("create salon: %w", err)
	}
	return nil
}

const salonColumns = `id, slug, name, timezone, currency, locale, slot_step_min, min_notice_min,
	hold_min, cutoff_hours, horizon_days, refund_policy, country, deposit_fallback, address, phone, about, privacy_url,
	deposit_topup, waitlist_mode, waitlist_offer_min, waitlist_broadcast_n`

func scanSalon(row pgx.Row) (*Salon, error) {
	var s Salon
	if err := row.Scan(s.dest()...); err != nil {
		return nil, err
	}
	if err := s.resolveZone(); err != nil {
		return nil, err
	}
	return &s, nil
}

// dest is where the columns of salonColumns scan to.
func (s *Salon) dest() []any {
	return []any{&s.ID, &s.Slug, &s.Name, &s.Timezone, &s.Currency, &s.Locale, &s.SlotStepMin,
		&s.MinNoticeMin, &s.HoldMin, &s.CutoffHours, &s.HorizonDays, &s.RefundPolicy, &s.Country, &s.DepositFallback,
		&s.Address, &s.Phone, &s.About, &s.PrivacyURL, &s.DepositTopUp, &s.WaitlistMode, &s.WaitlistOfferMin, &s.WaitlistBroadcastN}
}

// resolveZone loads the salon's time zone after a scan.
func (s *Salon) resolveZone() error {
	loc, err := loadLocation(s.Timezone)
	if err != nil {
		return fmt.Errorf("salon %d: time zone %q: %w", s.ID, s.Timezone, err)
	}
	s.loc = loc
	return nil
}

// zones caches loaded time zones: time.LoadLocation reads and parses the
// zone file on every call, and every booking needs its salon's zone.
var zones sync.Map // name -> *time.Location

func loadLocation(name string) (*time.Location, error) {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, loc)
	return loc, nil
}

// SalonBySlug returns the salon with that slug, to a caller who may read it
// (see mayRead). Errors: ErrNotFound, ErrForbidden (nobody asks).
func (s *Service) SalonBySlug(ctx context.Context, slug string) (*Salon, error) {
	c, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	slug = strings.ToLower(strings.TrimSpace(slug))
	if !slugRE.MatchString(slug) {
		return nil, fmt.Errorf("salon %q: %w", slug, ErrNotFound)
	}
	sal, err := scanSalon(s.pool.QueryRow(ctx, `SELECT `+salonColumns+` FROM salons WHERE slug = $1`, slug))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("salon %q: %w", slug, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("salon %q: %w", slug, dbErr(err))
	}
	if (c.kind == callerStaff || c.kind == callerImport) && c.user.SalonID != sal.ID {
		return nil, fmt.Errorf("salon %q: %w", slug, ErrNotFound)
	}
	return sal, nil
}

// Salon returns the salon with that id, to a caller who may read it (see
// mayRead). Errors: ErrNotFound, ErrForbidden (nobody asks).
func (s *Service) Salon(ctx context.Context, id int64) (*Salon, error) {
	if err := mayRead(ctx, id); err != nil {
		return nil, err
	}
	return getSalon(ctx, s.pool, id)
}

// Settings returns the salon as its owner edits it (UpdateSalon): its
// owners only, an admin is ErrForbidden. Errors: ErrNotFound,
// ErrForbidden.
func (s *Service) Settings(ctx context.Context, id int64) (*Salon, error) {
	return s.salonAs(ctx, id, RoleOwner)
}

func getSalon(ctx context.Context, q querier, id int64) (*Salon, error) {
	sal, err := scanSalon(q.QueryRow(ctx, `SELECT `+salonColumns+` FROM salons WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("salon %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("salon %d: %w", id, dbErr(err))
	}
	return sal, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Window is the days on which clients may book at now: from today to the
// end of the salon's horizon. Front ends offer days from it and never
// compute a horizon of their own.
func (s *Salon) Window(now time.Time) (first Date, days int) {
	return s.Today(now), s.HorizonDays
}

// TimeZones lists the IANA zones a salon may be in (those of a country,
// and UTC): Russia's first, then the rest, each by name.
func TimeZones() []string {
	zones := make([]string, 0, len(zoneCountry)+1)
	for z := range zoneCountry {
		zones = append(zones, z)
	}
	zones = append(zones, "UTC")
	slices.SortFunc(zones, func(a, b string) int {
		return cmp.Or(-cmp.Compare(boolInt(zoneCountry[a] == "RU"), boolInt(zoneCountry[b] == "RU")), cmp.Compare(a, b))
	})
	return zones
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
