package booking

import (
	"fmt"
	"math/big"
	"regexp"
	"salon/i18n"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// Money is an amount in minor units (kopecks, cents) of the salon's currency.
// It scans from and encodes to PostgreSQL numeric(12,2) without floating point.
type Money int64

// moneyNoise is what people write around an amount: spaces between
// thousands (plain, no-break, thin) and the currency.
var moneyNoise = strings.NewReplacer(" ", "", "\u00a0", "", "\u202f", "", "\u2009", "", "₽", "", "руб.", "", "руб", "",
	"р.", "", "RUB", "", "rub", "", "$", "", "USD", "", "€", "", "EUR", "", "£", "", "GBP", "", "₸", "", "KZT", "", "₴", "", "UAH", "")

// thousands match an amount written in groups of three digits between
// thousands separators.
var thousands = map[string]*regexp.Regexp{
	",": regexp.MustCompile(`^-?[1-9][0-9]{0,2}(,[0-9]{3})+$`),
	".": regexp.MustCompile(`^-?[1-9][0-9]{0,2}(\.[0-9]{3})+$`),
}

// ParseMoney reads an amount in major units as people write it and as the
// panel shows it: "1500", "1500.5", "1 500,50", "2 500 ₽", "1.500,50"
// (with both separators the last is the decimal point), "2500 руб.".
func ParseMoney(s string) (Money, error) {
	in := s
	s = moneyNoise.Replace(strings.TrimSpace(s))
	switch i, j := strings.LastIndex(s, ","), strings.LastIndex(s, "."); {
	case i >= 0 && j >= 0 && i > j:
		s = strings.ReplaceAll(s[:i], ".", "") + "." + s[i+1:]
	case i >= 0 && j >= 0:
		s = strings.ReplaceAll(s[:j], ",", "") + s[j:]
	default:
		// One kind of separator: between thousands when the amount is
		// written in groups of three after a first group of one to three
		// digits (an amount has at most two decimals: 2,500 and 1.500 are
		// thousands; 0.001 is no amount), else the decimal point.
		for _, sep := range []string{",", "."} {
			if thousands[sep].MatchString(s) {
				s = strings.ReplaceAll(s, sep, "")
			}
		}
		s = strings.ReplaceAll(s, ",", ".")
	}
	if s == "" {
		return 0, i18n.New("empty amount")
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || strings.ContainsAny(whole, "+-") || (hasFrac && (len(frac) == 0 || len(frac) > 2)) {
		return 0, i18n.New("%q is not an amount like 1500 or 1500.50", in)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > 9_999_999_999 {
		return 0, i18n.New("%q is not an amount like 1500 or 1500.50", in)
	}
	var f int64
	if hasFrac {
		if len(frac) == 1 {
			frac += "0"
		}
		f, err = strconv.ParseInt(frac, 10, 64)
		if err != nil || f < 0 {
			return 0, i18n.New("%q is not an amount like 1500 or 1500.50", in)
		}
	}
	return Money(w*100 + f), nil
}

// String formats m in major units with two decimals, or none when whole: "1500", "1500.50".
func (m Money) String() string {
	sign := ""
	v := int64(m)
	if v < 0 {
		sign, v = "-", -v
	}
	if v%100 == 0 {
		return sign + strconv.FormatInt(v/100, 10)
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// MarshalJSON writes m as a JSON number in major units (1500.5 for 1500.50).
func (m Money) MarshalJSON() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalJSON reads a JSON number in major units.
func (m *Money) UnmarshalJSON(b []byte) error {
	v, err := ParseMoney(strings.Trim(string(b), `"`))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// ScanNumeric implements pgtype.NumericScanner.
func (m *Money) ScanNumeric(n pgtype.Numeric) error {
	if !n.Valid || n.NaN || n.InfinityModifier != pgtype.Finite {
		*m = 0
		return nil
	}
	v := new(big.Int).Set(n.Int)
	exp := n.Exp + 2 // minor units
	ten := big.NewInt(10)
	for ; exp > 0; exp-- {
		v.Mul(v, ten)
	}
	for ; exp < 0; exp++ {
		var r big.Int
		v.QuoRem(v, ten, &r)
		if r.Sign() != 0 {
			return i18n.New("amount has more than two decimals")
		}
	}
	if !v.IsInt64() {
		return i18n.New("amount out of range")
	}
	*m = Money(v.Int64())
	return nil
}

// NumericValue implements pgtype.NumericValuer.
func (m Money) NumericValue() (pgtype.Numeric, error) {
	return pgtype.Numeric{Int: big.NewInt(int64(m)), Exp: -2, Valid: true}, nil
}

// Format renders m for people in the salon's currency and language:
// "2 500 ₽", "$1,500.50".
func (m Money) Format(currency, lang string) string {
	whole, frac, _ := strings.Cut(m.String(), ".")
	sep, dec := ",", "."
	if lang == "ru" {
		sep, dec = "\u00a0", ","
	}
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && r != '-' && (len(whole)-i)%3 == 0 && whole[i-1] != '-' {
			b.WriteString(sep)
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString(dec + frac)
	}
	n := b.String()
	switch currency {
	case "RUB":
		return n + "\u00a0₽"
	case "KZT":
		return n + "\u00a0₸"
	case "UAH":
		return n + "\u00a0₴"
	case "USD":
		return "$" + n
	case "EUR":
		return "€" + n
	case "GBP":
		return "£" + n
	}
	return n + "\u00a0" + currency
}
