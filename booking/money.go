package booking

import (
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"salon/i18n"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// Money is an amount in minor units (kopecks, cents) of the salon's currency.
// It scans from and encodes to PostgreSQL numeric(12,2) without floating point.
type Money int64

// moneySpaces are the spaces people write between thousands: plain,
// no-break, narrow no-break and thin.
var moneySpaces = strings.NewReplacer(" ", "", "\u00a0", "", "\u202f", "", "\u2009", "")

// thousands match an amount written in groups of three digits between
// thousands separators.
var thousands = map[string]*regexp.Regexp{
	",": regexp.MustCompile(`^-?[1-9][0-9]{0,2}(,[0-9]{3})+$`),
	".": regexp.MustCompile(`^-?[1-9][0-9]{0,2}(\.[0-9]{3})+$`),
}

// currencyInfo is how a currency is written: its sign as pages show it
// (before the amount or after it; none: its code after it), and the
// marks people type beside an amount of it (its code is one too).
type currencyInfo struct {
	sign   string
	before bool
	marks  []string
}

// currencies are the currencies whose signs are known. A mark shared by
// several ("$", "¥", "kr") is read as the salon's own when it is one of
// its marks.
var currencies = map[string]currencyInfo{
	"RUB": {"₽", false, []string{"₽", "руб.", "руб", "р.", "р"}},
	"KZT": {"₸", false, []string{"₸", "тг"}},
	"UAH": {"₴", false, []string{"₴", "грн", "грн."}},
	"BYN": {"Br", false, []string{"Br", "р.", "р", "руб.", "руб"}},
	"GEL": {"₾", false, []string{"₾"}},
	"AZN": {"₼", false, []string{"₼"}},
	"AMD": {"֏", false, []string{"֏"}},
	"PLN": {"zł", false, []string{"zł"}},
	"CZK": {"Kč", false, []string{"Kč"}},
	"SEK": {"kr", false, []string{"kr", "kr."}},
	"NOK": {"kr", false, []string{"kr", "kr."}},
	"DKK": {"kr", false, []string{"kr", "kr."}},
	"VND": {"₫", false, []string{"₫"}},
	"USD": {"$", true, []string{"$", "US$"}},
	"EUR": {"€", true, []string{"€"}},
	"GBP": {"£", true, []string{"£"}},
	"INR": {"₹", true, []string{"₹", "Rs", "Rs."}},
	"JPY": {"¥", true, []string{"¥", "円"}},
	"CNY": {"CN¥", true, []string{"CN¥", "¥", "元"}},
	"AUD": {"A$", true, []string{"A$", "AU$", "$"}},
	"CAD": {"CA$", true, []string{"CA$", "C$", "$"}},
	"NZD": {"NZ$", true, []string{"NZ$", "$"}},
	"HKD": {"HK$", true, []string{"HK$", "$"}},
	"SGD": {"S$", true, []string{"S$", "$"}},
	"MXN": {"MX$", true, []string{"MX$", "$"}},
	"BRL": {"R$", true, []string{"R$"}},
	"TRY": {"₺", true, []string{"₺"}},
	"ILS": {"₪", true, []string{"₪"}},
	"KRW": {"₩", true, []string{"₩"}},
	"PHP": {"₱", true, []string{"₱"}},
	"THB": {"฿", true, []string{"฿"}},
	// Written by their codes, but typed with a shared sign too.
	"ISK": {"ISK", false, []string{"kr", "kr."}},
	"ARS": {"ARS", false, []string{"$"}},
	"CLP": {"CLP", false, []string{"$"}},
	"COP": {"COP", false, []string{"$"}},
	"PKR": {"PKR", false, []string{"Rs", "Rs."}},
	"LKR": {"LKR", false, []string{"Rs", "Rs."}},
	"NPR": {"NPR", false, []string{"Rs", "Rs."}},
}

// CurrencySign is how pages write currency beside an amount: its sign,
// and whether it goes before the amount ("$", true; "₽", false); a
// currency without a known sign is written by its code, after.
func CurrencySign(currency string) (sign string, before bool) {
	if c, ok := currencies[currency]; ok {
		return c.sign, c.before
	}
	return currency, false
}

// isMarkOf reports whether mark (as typed beside an amount) is one of
// currency's: its code or one of its marks, in any case.
func isMarkOf(mark, currency string) bool {
	if strings.EqualFold(mark, currency) {
		return true
	}
	return slices.ContainsFunc(currencies[currency].marks, func(m string) bool { return strings.EqualFold(m, mark) })
}

// currencyOf is the currency mark names: a known one's code, sign or
// mark (when several share it, the one whose sign it is, "$": USD, else
// the first code in order), or any other code ("AED"); "" for none.
func currencyOf(mark string) string {
	if c := knownCurrencyOf(mark); c != "" {
		return c
	}
	if len(mark) == 3 && strings.IndexFunc(mark, func(r rune) bool { return r < 'A' || r > 'Z' }) < 0 {
		return mark // a code: "AED"
	}
	return ""
}

// knownCurrencyOf is currencyOf among the currencies whose signs are
// known.
func knownCurrencyOf(mark string) string {
	codes := slices.Sorted(maps.Keys(currencies))
	for _, code := range codes {
		if strings.EqualFold(mark, code) || currencies[code].sign == mark {
			return code
		}
	}
	for _, code := range codes {
		if isMarkOf(mark, code) {
			return code
		}
	}
	return ""
}

// moneyMarks splits an amount as typed (its spaces removed) into what
// stands before its first digit, the amount, and what stands after its
// last: "$", "2,500", "" or "", "2500", "руб.".
func moneyMarks(s string) (lead, num, trail string) {
	i := strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' })
	if i < 0 {
		return s, "", ""
	}
	j := strings.LastIndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' }) + 1
	return s[:i], s[i:j], s[j:]
}

// ParseMoneyIn reads an amount of the salon's currency as people write
// it (ParseMoney), with the currency's own sign or code beside it, or
// none: "₹2,500" or "2500 INR" in a salon of rupees; another currency's
// ("$25" there) is refused, not read as rupees.
func ParseMoneyIn(s, currency string) (Money, error) {
	m, err := parseMoney(s, currency)
	if err == nil {
		return m, nil
	}
	// Refused: named by the other currency when a mark is one's.
	lead, _, trail := moneyMarks(moneySpaces.Replace(strings.TrimSpace(s)))
	for _, mark := range []string{lead, trail} {
		if other := currencyOf(mark); mark != "" && !isMarkOf(mark, currency) && other != "" {
			return 0, i18n.New("%q is in %s, and this salon's prices are in %s", s, other, currency)
		}
	}
	return 0, err
}

// ParseMoney reads an amount in major units as people write it and as the
// panel shows it: "1500", "1500.5", "1 500,50", "2 500 ₽", "1.500,50"
// (with both separators the last is the decimal point), "2500 руб.".
// The sign or code of any known currency may stand before or after it.
func ParseMoney(s string) (Money, error) { return parseMoney(s, "") }

// parseMoney is ParseMoney, with only currency's marks beside the amount
// ("": any currency's).
func parseMoney(in, currency string) (Money, error) {
	lead, s, trail := moneyMarks(moneySpaces.Replace(strings.TrimSpace(in)))
	for _, mark := range []string{lead, trail} {
		if mark == "-" && mark == lead {
			s = mark + s // (refused below, as a negative amount)
			continue
		}
		if mark != "" && (currency != "" && !isMarkOf(mark, currency) || currency == "" && knownCurrencyOf(mark) == "") {
			return 0, i18n.New("%q is not an amount like 1500 or 1500.50", in)
		}
	}
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
	c, ok := currencies[currency]
	switch {
	case !ok:
		return n + "\u00a0" + currency
	case c.before:
		// (The minus before the sign: -£50, as a negative amount reads.)
		if rest, neg := strings.CutPrefix(n, "-"); neg {
			return "-" + c.sign + rest
		}
		return c.sign + n
	}
	return n + "\u00a0" + c.sign
}
