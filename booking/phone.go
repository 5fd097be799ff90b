package booking

import (
	"errors"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// NormalizePhone returns phone in E.164 (+79991234567). A number with a
// leading + (or the international prefix) is read as international; any
// other is read in the national format of region, the salon's country
// (ISO 3166 alpha-2, e.g. RU: 8 999 123-45-67 and 999 123-45-67 are both
// +79991234567). Spaces, dashes, dots and parentheses are allowed; the
// number must be one that can be dialled (github.com/nyaruka/phonenumbers).
func NormalizePhone(phone, region string) (string, error) {
	phone = strings.TrimSpace(phone)
	if phone == "" {
		return "", errors.New("required")
	}
	if len(phone) > 40 {
		return "", errors.New("too long for a phone number")
	}
	for i, r := range phone {
		switch {
		case r >= '0' && r <= '9':
		case r == '+' && i == 0:
		case r == ' ' || r == '-' || r == '(' || r == ')' || r == '.' || r == '\u00a0':
		default:
			return "", errors.New("a phone number has only digits, spaces, dashes and a leading +")
		}
	}
	n, err := phonenumbers.Parse(phone, strings.ToUpper(region))
	if err != nil || !phonenumbers.IsValidNumber(n) {
		return "", errors.New("not a valid phone number: write it with the country code, like +7 999 123-45-67")
	}
	return phonenumbers.Format(n, phonenumbers.E164), nil
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

// CountryOf returns the country of an IANA time zone (RU for
// Europe/Moscow), or "" when it is not one country's.
func CountryOf(timezone string) string { return zoneCountry[timezone] }
