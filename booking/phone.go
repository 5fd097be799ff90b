package booking

import (
	"salon/i18n"
	"strconv"
	"strings"
	"sync"

	"github.com/nyaruka/phonenumbers"
)

// NormalizePhone returns phone in E.164 (+79991234567). A number with a
// leading + (or the international prefix) is read as international; any
// other is read in the national format of region, the salon's country
// (ISO 3166 alpha-2, e.g. RU: 8 999 123-45-67 and 999 123-45-67 are both
// +79991234567). Spaces, dashes, dots and parentheses are allowed; the
// number must be one that can be dialled (github.com/nyaruka/phonenumbers).
func NormalizePhone(phone, region string) (string, error) {
	p, _, err := readPhone(phone, region)
	return p, err
}

// ClientPhone is NormalizePhone for a client's own phone, typed for a
// booking, a waiting list or an import: a premium-rate number is no
// client's (a number of another country typed without its code, a US 900
// number in Britain, or a mistake; a message to it would cost the salon).
// A stored number is looked up with NormalizePhone, whatever it is.
func ClientPhone(phone, region string) (string, error) {
	p, premium, err := readPhone(phone, region)
	switch {
	case err == nil && premium && strings.HasPrefix(strings.TrimSpace(phone), "+"):
		return "", i18n.New("a premium-rate number, not a client's")
	case err == nil && premium:
		return "", i18n.New("a premium-rate number, not a client's: a number of another country is written with + and its code, like %s", ExamplePhone(region))
	}
	return p, err
}

// readPhone is a phone in E.164 and whether it is premium-rate,
// remembered.
func readPhone(phone, region string) (string, bool, error) {
	key := region + "\x00" + phone
	if p, ok := phones.get(key); ok {
		return p.e164, p.premium, nil
	}
	p, premium, err := normalizePhone(phone, region)
	if err == nil {
		phones.put(key, readNumber{p, premium})
	}
	return p, premium, err
}

type readNumber struct {
	e164    string
	premium bool
}

// phones remembers numbers already read (a returning client's phone comes
// again and again; reading one takes the library ~10 µs of regular
// expressions).
var phones = &phoneCache{m: map[string]readNumber{}}

type phoneCache struct {
	mu sync.Mutex
	m  map[string]readNumber
}

const phoneCacheSize = 8192

func (c *phoneCache) get(k string) (readNumber, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *phoneCache) put(k string, v readNumber) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= phoneCacheSize {
		clear(c.m) // simple and bounded: the hot numbers come back at once
	}
	c.m[k] = v
}

func normalizePhone(phone, region string) (string, bool, error) {
	phone = strings.TrimSpace(phone)
	if phone == "" {
		return "", false, i18n.New("required")
	}
	if len(phone) > 40 {
		return "", false, i18n.New("too long for a phone number")
	}
	for i, r := range phone {
		switch {
		case r >= '0' && r <= '9':
		case r == '+' && i == 0:
		case r == ' ' || r == '-' || r == '(' || r == ')' || r == '.' || r == '\u00a0':
		default:
			return "", false, i18n.New("a phone number has only digits, spaces, dashes and a leading +")
		}
	}
	n, err := phonenumbers.Parse(phone, strings.ToUpper(region))
	switch {
	case err == nil && phonenumbers.IsValidNumber(n):
	case strings.HasPrefix(phone, "+"):
		// (Its country code is there: its digits are what is wrong.)
		return "", false, i18n.New("not a valid phone number: check its digits")
	default:
		return "", false, i18n.New("not a valid phone number: check its digits, or write it with the country code, like %s", ExamplePhone(region))
	}
	e164 := phonenumbers.Format(n, phonenumbers.E164)
	if len(e164) > maxE164 {
		// The library's metadata knows national numbers longer than E.164
		// allows (Japan's 0078 free-dial numbers: +81 0078...), which no
		// SMS provider or foreign phone can reach.
		return "", false, i18n.New("not a valid phone number: more than 15 digits")
	}
	return e164, phonenumbers.GetNumberType(n) == phonenumbers.PREMIUM_RATE, nil
}

// ExamplePhone is a phone of the salon's country as people write it,
// for the hints at phone fields.
func (s *Salon) ExamplePhone() string { return ExamplePhone(s.Country) }

// maxE164 is the longest number in E.164: a + and 15 digits.
const maxE164 = 16

// phoneDigits is what of a search for q to look for in stored (E.164)
// phones: the digits of the whole number when q is one, however it is
// typed (8 (915) 123-45-67 is 79151234567 in Russia); else its digits,
// with the country's trunk prefix made its code (8915 -> 7915); "" when
// fewer than 3 digits.
func phoneDigits(q, country string) string {
	if p, err := NormalizePhone(q, country); err == nil {
		return p[1:]
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, q)
	if len(digits) < 3 {
		return ""
	}
	region := strings.ToUpper(country)
	if np := phonenumbers.GetNddPrefixForRegion(region, true); np != "" && !strings.HasPrefix(strings.TrimSpace(q), "+") &&
		strings.HasPrefix(digits, np) && len(digits) > len(np)+2 {
		return strconv.Itoa(phonenumbers.GetCountryCodeForRegion(region)) + digits[len(np):]
	}
	return digits
}

// InternationalPhone reads a number that is international even without its
// leading + (a phone number Telegram shares, 447911123456), into E.164.
func InternationalPhone(phone string) (string, error) {
	phone = strings.TrimSpace(phone)
	if !strings.HasPrefix(phone, "+") {
		phone = "+" + phone
	}
	return NormalizePhone(phone, "ZZ")
}

// VouchedPhone reads, into E.164, a number a chat channel vouches for (a
// Telegram contact shared by its owner: Telegram has seen the SIM). Such a
// number is taken when it is possible (its length fits its country), not
// only when the library's metadata, which lags real allocations, calls it
// valid: +44 7700 900123 is possible, and was asked for again forever.
func VouchedPhone(phone string) (string, error) {
	phone = strings.TrimSpace(phone)
	if !strings.HasPrefix(phone, "+") {
		phone = "+" + phone
	}
	if p, err := NormalizePhone(phone, "ZZ"); err == nil {
		return p, nil
	}
	n, err := phonenumbers.Parse(phone, "ZZ")
	if err != nil || !phonenumbers.IsPossibleNumber(n) {
		return "", i18n.New("not a phone number")
	}
	if e164 := phonenumbers.Format(n, phonenumbers.E164); len(e164) <= maxE164 {
		return e164, nil
	}
	return "", i18n.New("not a phone number: more than 15 digits")
}

// ExamplePhone is a mobile number of the country (ISO 3166 alpha-2) as
// people write it with its country code, for a hint: +7 912 345-67-89 for
// RU. The country of a number (in E.164) can be had with PhoneCountry.
func ExamplePhone(country string) string {
	n := phonenumbers.GetExampleNumberForType(strings.ToUpper(country), phonenumbers.MOBILE)
	if n == nil {
		n = phonenumbers.GetExampleNumberForType("RU", phonenumbers.MOBILE)
	}
	return phonenumbers.Format(n, phonenumbers.INTERNATIONAL)
}

// PhoneCountry is the country of an international number ("" when none
// is known).
func PhoneCountry(phone string) string {
	phone = strings.TrimSpace(phone)
	if !strings.HasPrefix(phone, "+") {
		phone = "+" + phone
	}
	n, err := phonenumbers.Parse(phone, "ZZ")
	if err != nil {
		return ""
	}
	if r := phonenumbers.GetRegionCodeForNumber(n); r != "" && r != "ZZ" {
		return r
	}
	return phonenumbers.GetRegionCodeForCountryCode(int(n.GetCountryCode()))
}

// SMSReaches tells whether a salon of country (ISO 3166 alpha-2) sends an
// SMS to phone (E.164): to numbers of its own country, or of one sharing
// its country code (+7: Russia and Kazakhstan), but not across +1's many
// countries. The salon pays for every SMS, and an SMS abroad is what costs
// most, and what a flood of made-up bookings would have it pay for.
func SMSReaches(phone, country string) bool {
	n, err := phonenumbers.Parse(phone, "ZZ")
	if err != nil {
		return false
	}
	country = strings.ToUpper(country)
	if r := phonenumbers.GetRegionCodeForNumber(n); r == country {
		return true
	}
	code := phonenumbers.GetCountryCodeForRegion(country)
	return code > 1 && int(n.GetCountryCode()) == code
}

// CountryOf returns the country of an IANA time zone (RU for
// Europe/Moscow; its old names too: US for US/Eastern), or "" when it is
// not one country's.
func CountryOf(timezone string) string {
	if c, ok := zoneCountry[timezone]; ok {
		return c
	}
	if c, ok := oldZoneCountry[timezone]; ok {
		return c
	}
	// Country/Region names (US/Eastern, Canada/Pacific, Brazil/East, …).
	area, _, _ := strings.Cut(timezone, "/")
	return oldAreaCountry[area]
}

// oldZoneCountry are the countries of zone names the database keeps as
// links to the current ones (its "backward" file), which systems and
// people still write.
var oldZoneCountry = map[string]string{
	"Europe/Kiev": "UA", "Europe/Uzhgorod": "UA", "Europe/Zaporozhye": "UA", "Asia/Calcutta": "IN", "Asia/Saigon": "VN",
	"Asia/Katmandu": "NP", "Asia/Rangoon": "MM", "Asia/Dacca": "BD", "Asia/Ulan_Bator": "MN", "Asia/Thimbu": "BT",
	"Asia/Ashkhabad": "TM", "Asia/Chungking": "CN", "Asia/Macao": "MO", "Asia/Istanbul": "TR", "Asia/Tel_Aviv": "IL",
	"Europe/Belfast": "GB", "Europe/Nicosia": "CY", "Europe/Tiraspol": "MD", "America/Buenos_Aires": "AR",
	"America/Indianapolis": "US", "America/Louisville": "US", "America/Fort_Wayne": "US", "America/Knox_IN": "US",
	"America/Montreal": "CA", "America/Shiprock": "US", "Atlantic/Faeroe": "FO", "Pacific/Samoa": "AS",
	"Pacific/Truk": "FM", "Pacific/Ponape": "FM", "Pacific/Enderbury": "KI", "Africa/Asmera": "ER", "Africa/Timbuktu": "ML",
	"GB": "GB", "GB-Eire": "GB", "Eire": "IE", "W-SU": "RU", "Turkey": "TR", "Israel": "IL", "Egypt": "EG", "Iran": "IR",
	"Japan": "JP", "ROK": "KR", "PRC": "CN", "ROC": "TW", "Hongkong": "HK", "Singapore": "SG", "Poland": "PL",
	"Portugal": "PT", "Iceland": "IS", "Jamaica": "JM", "Cuba": "CU", "Libya": "LY", "NZ": "NZ", "Navajo": "US",
}

// oldAreaCountry are the countries of the old Country/Region zone names.
var oldAreaCountry = map[string]string{"US": "US", "Canada": "CA", "Brazil": "BR", "Chile": "CL", "Mexico": "MX",
	"Australia": "AU"}

// DisplayPhone is a number in E.164 as people write it (+7 912 345-67-89);
// what is not one is returned as it is.
func DisplayPhone(e164 string) string {
	n, err := phonenumbers.Parse(e164, "ZZ")
	if err != nil {
		return e164
	}
	return phonenumbers.Format(n, phonenumbers.INTERNATIONAL)
}
