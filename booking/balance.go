package booking

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// Prepaid balances: a package (a number of visits of a service, or of any
// of a set, for one client) or a gift certificate (an amount, spendable by
// whoever holds its code). A balance is the sum of its ledger
// (balance_entries): every credit, reservation, spend, release and refund
// is an entry, never an edit, and the database keeps remaining equal to
// that sum and never below zero (a CHECK the entries' trigger meets: an
// entry that would overdraw is refused, whatever path writes it). The code
// is the credential of a certificate (and, with it, of a package); only
// its SHA-256 is stored.

// BalanceKind is what a balance holds.
type BalanceKind string

// Balance kinds.
const (
	BalancePackage     BalanceKind = "package"     // visits
	BalanceCertificate BalanceKind = "certificate" // money
)

// Balance entry types.
const (
	EntryCredit  = "credit"  // sold, or topped up
	EntryReserve = "reserve" // a booking holds a visit or an amount
	EntrySpend   = "spend"   // the visit took place: what was reserved is used
	EntryRelease = "release" // the booking was cancelled: given back
	EntryRefund  = "refund"  // what was left paid back
)

// BalanceIssue asks for a new package or certificate.
type BalanceIssue struct {
	SalonID int64
	Kind    BalanceKind
	// A certificate's amount.
	Amount Money
	// A package's services (a visit of any of them), visits and client.
	ServiceIDs []int64
	Visits     int
	Client     ClientInput
	// ValidUntil is the last day it is good for (zero: no end).
	ValidUntil Date
	// Price is what the client paid for it in the salon (0: not said):
	// what a refund of what is left pays back is its share of it.
	Price Money
	// RequestKey, when given, makes the sale once per key (a panel form's
	// one-time key): the same key again is *SoldAlready.
	RequestKey string
}

// SoldAlready is IssueBalance's answer to a request key it sold under
// before (a form sent twice): nothing more is sold, and the balance sold
// the first time is BalanceID (its code was shown then, and only then).
// It is ErrConflict.
type SoldAlready struct {
	BalanceID int64
	// Differs: the first sale was not what this request asks (the form
	// sent again with other values: a second sale meant, not a repeat).
	Differs bool
}

func (e *SoldAlready) Error() string {
	return fmt.Sprintf("balance %d was sold under this request already", e.BalanceID)
}

// Is makes a SoldAlready an ErrConflict.
func (e *SoldAlready) Is(target error) bool { return target == ErrConflict }

// Balance is a package or a certificate.
type Balance struct {
	ID         int64
	SalonID    int64
	Kind       BalanceKind
	Hint       string // the code's last characters
	ClientID   int64  // a package's client
	ServiceIDs []int64
	// Total and Remaining: a package's visits, a certificate's minor units.
	Total, Remaining int64
	ExpiresOn        Date // zero: no end
	CreatedAt        time.Time
	// Code is returned by IssueBalance only: whoever holds it spends it.
	Code string
}

// BalanceEntry is a line of a balance's ledger.
type BalanceEntry struct {
	ID        int64
	Type      string
	Delta     int64
	BookingID int64
	Actor     string
	CreatedAt time.Time
	// After is what the balance had left after the entry.
	After int64
	// Spent is a spend's: what of its booking's reservation it consumed
	// (a spend moves nothing: the reservation took it); BookingStatus why
	// (completed, no-show, or a cancellation the policy kept it of).
	Spent         int64
	BookingStatus Status
	// PaidBack is a refund's money paid back at the desk (a balance sold
	// in the salon for a price; 0: none, or through the provider).
	PaidBack Money
}

// Balance bounds.
const (
	MaxPackageVisits   = 100
	MaxCertificate     = Money(100_000_000) // 1,000,000.00
	maxBalanceServices = 20
)

// codeAlphabet has no letters or digits people confuse (0/O, 1/I/L).
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// newBalanceCode returns a code of 12 characters in three groups
// (ABCD-EFGH-JKMN): about 59 bits, read out over the phone or typed.
func newBalanceCode() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	var out strings.Builder
	for i, x := range b {
		if i > 0 && i%4 == 0 {
			out.WriteByte('-')
		}
		out.WriteByte(codeAlphabet[int(x)%len(codeAlphabet)])
	}
	return out.String()
}

// normalizeCode is a code as stored: upper case, without spaces and
// dashes of any kind, Cyrillic letters that look like Latin ones read as
// those (a Russian keyboard types "К" for "K").
func normalizeCode(code string) string {
	return strings.Map(func(r rune) rune {
		if isDash(r) {
			return -1
		}
		return foldCode(r)
	}, code)
}

// isDash reports whether r splits a code's groups as typed: a space, a
// dash of any kind, a minus sign.
func isDash(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Pd, r) || r == '\u2212' }

// foldCode is r as a code's character: Latin letters in upper case, a
// Cyrillic letter that looks like one of the code's as that one.
func foldCode(r rune) rune {
	if r >= 'a' && r <= 'z' {
		return r - 'a' + 'A'
	}
	if l, ok := cyrillicLookalikes[unicode.ToUpper(r)]; ok {
		return l
	}
	return r
}

// codeWord is a word of a text read for a code: its characters in the
// code's alphabet's case, and whether Cyrillic look-alikes were read as
// Latin in it.
type codeWord struct {
	s      string
	folded bool
}

// codeWords are text's words as a code's would be: a word all of the
// code's characters (foldCode: Latin, digits, Cyrillic look-alikes)
// folded; of any other word, its runs of Latin letters and digits (a
// Russian word, "Запишите", reads as nothing).
func codeWords(text string) []codeWord {
	var out []codeWord
	notCode := func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') }
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		upper, folded := strings.ToUpper(tok), strings.Map(foldCode, tok)
		if strings.IndexFunc(folded, notCode) < 0 {
			out = append(out, codeWord{s: folded, folded: folded != upper})
			continue
		}
		for _, piece := range strings.FieldsFunc(upper, notCode) {
			out = append(out, codeWord{s: piece})
		}
	}
	return out
}

// cyrillicLookalikes are the Cyrillic capitals that look like a Latin
// letter or a digit, and that letter or digit.
var cyrillicLookalikes = map[rune]rune{'А': 'A', 'В': 'B', 'Е': 'E', 'З': '3', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O',
	'Р': 'P', 'С': 'C', 'Т': 'T', 'У': 'Y', 'Х': 'X'}

// FindCode returns the balance code text holds, as stored (upper case,
// without dashes), and whether it holds one: its twelve characters in any
// case, whole or in groups split by spaces, dashes or other signs, alone
// or inside a sentence, typed with Cyrillic look-alikes or not. It asks
// for a letter, so a phone never reads as one (a code of digits alone,
// fewer than one in ten million, is missed), and, of twelve characters
// spread over words, for the code's own grouping (one word, or three of
// four) or, of words all Latin, for a digit; so plain words, and Russian
// ones whose letters look Latin ("на 28 марта"), rarely do. A text that
// is nothing but twelve of the code's characters, however split, is one.
func FindCode(text string) (string, bool) {
	words := codeWords(text)
	for i := range words {
		joined, lens, folded := "", []int{}, false
		for j := i; j < len(words) && len(joined) < 12; j++ {
			joined, lens, folded = joined+words[j].s, append(lens, len(words[j].s)), folded || words[j].folded
		}
		if !isCode(joined) {
			continue
		}
		if grouped := len(lens) == 1 || (len(lens) == 3 && lens[0] == 4 && lens[1] == 4); grouped || (!folded && strings.ContainsAny(joined, "23456789")) {
			return joined, true
		}
	}
	// The whole text a code, split otherwise ("ABCDEF GHJKMN"): Latin
	// only (Cyrillic words are read above, by their grouping).
	whole := strings.Map(func(r rune) rune {
		if isDash(r) {
			return -1
		}
		return unicode.ToUpper(r)
	}, text)
	if isCode(whole) {
		return whole, true
	}
	return "", false
}

// isCode reports whether s is twelve of the code's characters, a letter
// among them.
func isCode(s string) bool {
	return len(s) == 12 && strings.Trim(s, codeAlphabet) == "" && strings.ContainsAny(s, codeAlphabet[:23])
}

// LooksLikeCode reports whether text holds a balance's code (FindCode): a
// front end keeps such text out of what it stores and does not echo it.
func LooksLikeCode(text string) bool {
	_, ok := FindCode(text)
	return ok
}

// IssueBalance sells a package or a certificate, recorded as paid in the
// salon: the balance and its credit in one transaction. Staff of the
// salon (admins and owners) and the platform. It returns the balance with
// its code, which is shown this once. Errors: ErrForbidden, ErrNotFound
// (the salon), ErrInvalid (naming the field: a service not the salon's
// too), *SoldAlready (its request key was sold under before).
func (s *Service) IssueBalance(ctx context.Context, in BalanceIssue) (*Balance, error) {
	if err := authorize(ctx, in.SalonID, RoleAdmin); err != nil {
		return nil, err
	}
	c, err := s.currentCatalog(ctx, in.SalonID)
	if err != nil {
		return nil, err
	}
	fe := fieldErrors{}
	b := &Balance{SalonID: in.SalonID, Kind: in.Kind, ExpiresOn: in.ValidUntil, ServiceIDs: []int64{}}
	switch in.Kind {
	case BalanceCertificate:
		if in.Amount <= 0 || in.Amount > MaxCertificate {
			fe.add("amount", "from 0.01 to %s", MaxCertificate.String())
		}
		// Whoever holds its code spends it: what a package has (a client,
		// visits, services) is refused, not dropped without a word.
		if strings.TrimSpace(in.Client.Phone) != "" {
			fe.add("client.phone", "a certificate is whoever holds its code: it has no client's phone")
		}
		if strings.TrimSpace(in.Client.Name) != "" {
			fe.add("client.name", "a certificate is whoever holds its code: it has no client's name")
		}
		if in.Visits != 0 {
			fe.add("visits", "a certificate holds an amount, not visits")
		}
		if len(in.ServiceIDs) > 0 {
			fe.add("service_id", "a certificate holds an amount, not visits")
		}
		if in.Amount > 0 && in.Price > in.Amount {
			fe.add("price", "at most the certificate's amount, %s", in.Amount.String())
		}
		b.Total = int64(in.Amount)
	case BalancePackage:
		if in.Amount != 0 {
			fe.add("amount", "a package holds visits, not an amount")
		}
		b.ServiceIDs = c.packageTerms(fe, in.Visits, in.ServiceIDs)
		if strings.TrimSpace(in.Client.Name) == "" {
			// A client the salon knows by the phone is not asked the name
			// again: theirs stands.
			if p, err := NormalizePhone(in.Client.Phone, c.salon.Country); err == nil {
				err := s.pool.QueryRow(ctx, `SELECT name FROM clients WHERE salon_id = $1 AND phone = $2`, in.SalonID, p).Scan(&in.Client.Name)
				if err != nil && !isNoRows(err) {
					return nil, fmt.Errorf("issue balance: %w", dbErr(err))
				}
			}
		}
		in.Client.normalize(fe, "client.", c.salon.Country)
		b.Total = int64(in.Visits)
	default:
		fe.add("kind", "package or certificate")
	}
	if in.Price < 0 || in.Price > MaxCertificate {
		fe.add("price", "from 0.01 to %s, or empty", MaxCertificate.String())
	}
	if !in.ValidUntil.IsZero() && in.ValidUntil.Before(c.salon.Today(s.now())) {
		fe.add("valid_until", "this date has passed")
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	b.Code = newBalanceCode()
	norm := normalizeCode(b.Code)
	b.Hint = norm[len(norm)-4:]
	var expires *time.Time
	if !in.ValidUntil.IsZero() {
		d := in.ValidUntil.dbDate()
		expires = &d
	}
	actor := callerOf(ctx).auditName()
	err = s.inTx(ctx, func(tx pgx.Tx) error { // (audited under the caller's name)
		var client *int64
		if in.Kind == BalancePackage {
			if b.ClientID, err = clientByPhone(ctx, tx, in.SalonID, in.Client); err != nil {
				return err
			}
			client = &b.ClientID
		}
		var key *string
		if in.RequestKey != "" {
			key = &in.RequestKey
		}
		if err := tx.QueryRow(ctx, `INSERT INTO balances (salon_id, kind, code_hash, code_hint, client_id, service_ids, total, expires_on, request_key)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id, created_at`, in.SalonID, in.Kind, tokenHash(norm), b.Hint, client,
			b.ServiceIDs, b.Total, expires, key).Scan(&b.ID, &b.CreatedAt); err != nil {
			return err
		}
		if in.Price > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO balance_prices (balance_id, salon_id, price) VALUES ($1, $2, $3)`,
				b.ID, in.SalonID, int64(in.Price)); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO balance_entries (balance_id, salon_id, type, delta, actor) VALUES ($1, $2, 'credit', $3, $4)`,
			b.ID, in.SalonID, b.Total, actor)
		return err
	})
	if violated(err, "balances_request") {
		// Sold under this key already: that sale stands, alone; whether
		// it is what this request asks is said.
		var first Balance
		var phone string
		var until *time.Time
		var price Money
		if err := s.pool.QueryRow(ctx, `SELECT b.id, b.kind, b.total, b.service_ids, b.expires_on, COALESCE(c.phone, ''),
			    COALESCE((SELECT p.price FROM balance_prices p WHERE p.balance_id = b.id), 0)
			FROM balances b LEFT JOIN clients c ON c.salon_id = b.salon_id AND c.id = b.client_id
			WHERE b.salon_id = $1 AND b.request_key = $2`, in.SalonID, in.RequestKey).
			Scan(&first.ID, &first.Kind, &first.Total, &first.ServiceIDs, &until, &phone, &price); err != nil {
			return nil, fmt.Errorf("issue balance: %w", dbErr(err))
		}
		same := first.Kind == b.Kind && first.Total == b.Total && slices.Equal(first.ServiceIDs, b.ServiceIDs) && price == in.Price &&
			(until == nil) == b.ExpiresOn.IsZero() && (until == nil || DateOf(*until) == b.ExpiresOn) &&
			(b.Kind != BalancePackage || phone == in.Client.Phone || phone == "") // (erased since: not told apart)
		return nil, &SoldAlready{BalanceID: first.ID, Differs: !same}
	}
	if err != nil {
		return nil, fmt.Errorf("issue balance: %w", dbErr(err))
	}
	b.Remaining = b.Total
	return b, nil
}

const balanceColumns = `id, salon_id, kind, code_hint, COALESCE(client_id, 0), service_ids, total, remaining, expires_on, created_at`

// scanBalance reads a row of balanceColumns, and into more the columns
// after them.
func scanBalance(r pgx.Row, more ...any) (*Balance, error) {
	var b Balance
	var expires *time.Time
	if err := r.Scan(append([]any{&b.ID, &b.SalonID, &b.Kind, &b.Hint, &b.ClientID, &b.ServiceIDs, &b.Total, &b.Remaining, &expires,
		&b.CreatedAt}, more...)...); err != nil {
		return nil, err
	}
	if expires != nil {
		b.ExpiresOn = DateOf(*expires)
	}
	return &b, nil
}

// BalanceByCode returns the balance a code names at the salon: anyone who
// holds the code may read what is left (the code is the credential). An
// unknown code, or another salon's, is ErrNotFound.
func (s *Service) BalanceByCode(ctx context.Context, salonID int64, code string) (*Balance, error) {
	if err := callerOf(ctx).check(); err != nil {
		return nil, err
	}
	norm := normalizeCode(code)
	if len(norm) < 8 || len(norm) > 32 {
		return nil, fmt.Errorf("balance: %w", ErrNotFound)
	}
	b, err := scanBalance(s.pool.QueryRow(ctx, `SELECT `+balanceColumns+` FROM balances WHERE code_hash = $1 AND salon_id = $2`,
		tokenHash(norm), salonID))
	if isNoRows(err) {
		return nil, fmt.Errorf("balance: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("balance: %w", dbErr(err))
	}
	return b, nil
}

// BalanceUse is what a code would pay for, asked before booking with it
// (the widget's code field): a visit of one of ServiceIDs, for the client
// of Phone (as typed; either may be empty: not asked).
type BalanceUse struct {
	ServiceIDs []int64
	Phone      string
}

// PhoneMissesADay is how many phones not its client's (each counted once)
// a package's code is tried with within 24 hours of the first (CheckBalance,
// or a booking) before it is locked until those 24 hours end
// (balances.code_locked_until): then it refuses every phone, its client's
// too (errCodeLocked).
const PhoneMissesADay = 5

// errCodeLocked refuses a package's code tried with too many phones
// today, whichever phone comes with it: the one answer its holder gets
// for any phone, so trying phones tells nothing.
func errCodeLocked() error {
	return Invalid("pay_with", "this code was tried with too many other phones today: book without it, or ask the salon")
}

// CheckBalance is BalanceByCode, refusing, as a booking with it would, a
// package that is another client's or is not for any of use's services
// (ErrInvalid on pay_with). Whether nothing is left, or the day is past
// its end, is the caller's to read from the balance.
//
// A phone not the package's client's is counted (checkPhone, under the
// code's lock, as a booking's is): past PhoneMissesADay of them within 24
// hours the code is locked, and refuses every phone alike (errCodeLocked), here
// and when booking, so a code's holder cannot learn, trying phones, whose
// package it is.
func (s *Service) CheckBalance(ctx context.Context, salonID int64, code string, use BalanceUse) (*Balance, error) {
	b, err := s.BalanceByCode(ctx, salonID, code)
	if err != nil || b.Kind != BalancePackage {
		return b, err
	}
	if use.Phone != "" {
		c, err := s.catalogAt(ctx, s.pool, salonID, 0) // (its country reads the phone)
		if err != nil {
			return nil, err
		}
		if phone, err := NormalizePhone(use.Phone, c.salon.Country); err == nil { // (else the phone's own field says what is wrong)
			if err := s.checkPhone(ctx, b, tokenHash(normalizeCode(code)), phone); err != nil {
				return nil, err
			}
		}
	}
	if len(use.ServiceIDs) > 0 && !slices.ContainsFunc(use.ServiceIDs, func(id int64) bool { return slices.Contains(b.ServiceIDs, id) }) {
		return nil, Invalid("pay_with", "the package is not for this service")
	}
	return b, nil
}

// checkPhone refuses phone for package b, named by the code of hash, as
// a booking would: when the code is locked, or, the miss counted, when
// phone is not its client's. It holds the code's lock (codeLockKey) while
// it reads and counts.
func (s *Service) checkPhone(ctx context.Context, b *Balance, hash []byte, phone string) error {
	var refused error
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var theirs, locked bool
		batch := &pgx.Batch{}
		batch.Queue(`SELECT set_config('lock_timeout', $1::bigint::text, true)`, max(s.lockWait.Milliseconds(), 1))
		batch.Queue(codeLockSQL, codeLockKey(hash))
		batch.Queue(`SELECT EXISTS (SELECT 1 FROM clients WHERE salon_id = $1 AND id = $2 AND phone = $3),
			    COALESCE((SELECT code_locked_until > now() FROM balances WHERE id = $4), false)`,
			b.SalonID, b.ClientID, phone, b.ID).QueryRow(func(row pgx.Row) error { return row.Scan(&theirs, &locked) })
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return err
		}
		switch {
		case locked:
			refused = errCodeLocked()
		case !theirs:
			batch = &pgx.Batch{}
			c := queueMissCount(batch, &phoneMiss{balanceID: b.ID, salonID: b.SalonID}, phone, nil)
			if err := tx.SendBatch(ctx, batch).Close(); err != nil {
				return err
			}
			refused = c.refusal() // (committed: the next try reads it)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("balance: %w", dbErr(err))
	}
	return refused
}

// phoneMiss is a package named by its code for a phone not its client's
// (the refusal, "another client's", which a booking returns as it is when
// nothing counts it).
type phoneMiss struct{ balanceID, salonID int64 }

func (m *phoneMiss) Error() string { return m.refusal().Error() }
func (m *phoneMiss) Unwrap() error { return m.refusal() }
func (m *phoneMiss) refusal() error {
	return Invalid("pay_with", "this package is another client's")
}

// codeLockKey is the advisory lock's key of a code (by its hash): a
// client's every try of a code takes it, waiting at most the lock wait,
// before the master's lock and before reading the balance, and holds it
// until its miss, if it is one, is counted (in the same transaction). So
// a code's tries are decided in turn, whoever's phone each names, and
// tries sent at once learn no more than as many sent one by one.
func codeLockKey(hash []byte) string { return "balance-code:" + hex.EncodeToString(hash) }

// codeLockSQL takes the lock of the code $1 names (codeLockKey), waiting
// at most the transaction's lock_timeout.
const codeLockSQL = `SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))`

// missCount is a phone miss counted by queueMissCount.
type missCount struct {
	miss   *phoneMiss
	misses int
}

// queueMissCount queues the count of m, of phone (as stored), in the
// transaction that holds the code's lock and read the miss, and, when
// claim is not nil, the removal of its idempotency key's claim: the
// transaction then commits the count alone (it wrote nothing else).
func queueMissCount(batch *pgx.Batch, m *phoneMiss, phone string, claim *keyClaim) *missCount {
	if claim != nil {
		batch.Queue(`DELETE FROM idempotency_keys WHERE salon_id = $1 AND scope = $2 AND key_hash = $3`,
			claim.salonID, claim.scope, keyHash(claim.key))
	}
	// (The balance's row is locked first, as a new code for it locks it
	// before forgetting its misses: never the other way round.)
	c := &missCount{miss: m}
	batch.Queue(`
		WITH b AS (SELECT id FROM balances WHERE id = $1 FOR UPDATE),
		m AS (
		    INSERT INTO balance_phone_misses AS x (balance_id, salon_id, misses, since, phones) SELECT $1, $2, 1, now(), ARRAY[$4::bytea] FROM b
		    ON CONFLICT (balance_id) DO UPDATE SET
		        misses = CASE WHEN x.since <= now() - interval '1 day' THEN 1
		                      WHEN $4 = ANY (x.phones) THEN x.misses ELSE x.misses + 1 END,
		        phones = CASE WHEN x.since <= now() - interval '1 day' THEN ARRAY[$4::bytea]
		                      WHEN $4 = ANY (x.phones) THEN x.phones ELSE x.phones || $4::bytea END,
		        since = CASE WHEN x.since <= now() - interval '1 day' THEN now() ELSE x.since END
		    RETURNING misses, since),
		l AS (UPDATE balances SET code_locked_until = (SELECT since FROM m) + interval '1 day'
		      WHERE id = $1 AND (SELECT misses FROM m) > $3)
		SELECT COALESCE((SELECT misses FROM m), 0)`, m.balanceID, m.salonID, PhoneMissesADay, tokenHash(phone)).QueryRow(func(row pgx.Row) error {
		return row.Scan(&c.misses)
	})
	return c
}

// refusal is the answer to the counted miss: "another client's", or, past
// PhoneMissesADay phones within 24 hours of the first (each counted
// once), the code locked until those 24 hours end.
func (c *missCount) refusal() error {
	if c.misses > PhoneMissesADay {
		return errCodeLocked()
	}
	return c.miss.refusal()
}

// forgetPhoneMisses starts a balance's count of phones missed anew (its
// code renewed: the old one opens nothing).
func forgetPhoneMisses(ctx context.Context, tx pgx.Tx, balanceID int64) error {
	_, err := tx.Exec(ctx, `DELETE FROM balance_phone_misses WHERE balance_id = $1`, balanceID)
	return err
}

// BalanceLedger returns a balance's entries, oldest first (staff of its
// salon). Errors: ErrNotFound, ErrForbidden.
func (s *Service) BalanceLedger(ctx context.Context, salonID, balanceID int64) ([]BalanceEntry, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT e.id, e.type, e.delta, COALESCE(e.booking_id, 0), e.actor, e.created_at, COALESCE(e.balance_after, 0),
		    CASE WHEN e.type = 'spend' THEN (SELECT -sum(x.delta) FROM balance_entries x WHERE x.balance_id = e.balance_id
		                                     AND x.booking_id = e.booking_id AND x.type IN ('reserve', 'release')) ELSE 0 END,
		    COALESCE(k.status, ''), COALESCE(e.paid_back, 0)
		FROM balance_entries e JOIN balances b ON b.id = e.balance_id LEFT JOIN bookings k ON k.id = e.booking_id
		WHERE b.salon_id = $1 AND b.id = $2 ORDER BY e.id LIMIT 1000`,
		salonID, balanceID)
	if err != nil {
		return nil, fmt.Errorf("balance ledger: %w", dbErr(err))
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (BalanceEntry, error) {
		var e BalanceEntry
		err := r.Scan(&e.ID, &e.Type, &e.Delta, &e.BookingID, &e.Actor, &e.CreatedAt, &e.After, &e.Spent, &e.BookingStatus, &e.PaidBack)
		return e, err
	})
}

// BalanceMoney is money that changed hands over a package or certificate:
// its sale (in the salon, at the price the desk gave, or online) or its
// refund (paid back at the desk, or through the provider).
type BalanceMoney struct {
	At        time.Time
	BalanceID int64
	Kind      BalanceKind
	Hint      string // the code's last characters
	Refund    bool   // paid back; else taken
	Online    bool   // through the provider; else at the desk
	Amount    Money
}

// BalanceMoneyOf lists a day's money of the salon's packages and
// certificates (staff of its salon), on the salon's clock, oldest first.
// A sale in the salon whose price the desk did not give took no money
// this can say, and is not listed.
func (s *Service) BalanceMoneyOf(ctx context.Context, salonID int64, day Date) ([]BalanceMoney, error) {
	salon, err := s.salonAs(ctx, salonID, RoleAdmin)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT e.created_at, b.id, b.kind, b.code_hint, e.type = 'refund', s.id IS NOT NULL,
			CASE WHEN e.type = 'credit' THEN COALESCE(p.price, s.price) ELSE COALESCE(e.paid_back, s.refund_amount) END AS amount
		FROM balance_entries e JOIN balances b ON b.id = e.balance_id
		LEFT JOIN balance_prices p ON p.balance_id = b.id LEFT JOIN balance_sales s ON s.balance_id = b.id
		WHERE e.salon_id = $1 AND e.type IN ('credit', 'refund') AND e.created_at >= $2 AND e.created_at < $3
		  AND CASE WHEN e.type = 'credit' THEN COALESCE(p.price, s.price) ELSE COALESCE(e.paid_back, s.refund_amount) END > 0
		ORDER BY e.created_at, e.id LIMIT 1000`, salonID, day.Start(salon.Location()), day.AddDays(1).Start(salon.Location()))
	if err != nil {
		return nil, fmt.Errorf("balance money: %w", dbErr(err))
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (BalanceMoney, error) {
		var m BalanceMoney
		err := r.Scan(&m.At, &m.BalanceID, &m.Kind, &m.Hint, &m.Refund, &m.Online, &m.Amount)
		return m, err
	})
}

// BalanceRow is a balance as the panel lists it: with its client.
type BalanceRow struct {
	Balance
	ClientName, Phone string
	// DeskPrice is what it was sold for in the salon, when the desk said
	// (0: not said, or sold online).
	DeskPrice Money
	// SalePrice is what it was bought for online (0: sold in the salon).
	SalePrice Money
	// CodeLockedUntil: while its code is locked (tried with more than
	// PhoneMissesADay phones not its client's within a day), until when;
	// else zero. The desk still spends it; a new code ends the lock.
	CodeLockedUntil time.Time
}

// maxBalanceRows bounds a list of balances: the latest.
const maxBalanceRows = 200

// Balances returns the salon's latest balances, newest first (staff of the
// salon).
func (s *Service) Balances(ctx context.Context, salonID int64) ([]BalanceRow, error) {
	return s.balances(ctx, salonID, 0, 0)
}

// ClientPackages returns the packages of the salon's client clientID,
// newest first, those used up or past their day too (staff of the salon).
func (s *Service) ClientPackages(ctx context.Context, salonID, clientID int64) ([]BalanceRow, error) {
	if clientID == 0 { // (not every balance: a client's, of no one)
		return nil, authorize(ctx, salonID, RoleAdmin)
	}
	return s.balances(ctx, salonID, 0, clientID)
}

// BalanceOf returns one of the salon's balances (staff of the salon).
// Errors: ErrNotFound, ErrForbidden.
func (s *Service) BalanceOf(ctx context.Context, salonID, id int64) (*BalanceRow, error) {
	list, err := s.balances(ctx, salonID, id, 0)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("balance %d: %w", id, ErrNotFound)
	}
	return &list[0], nil
}

// balances reads the salon's latest balances (only id, when not 0; only
// client's, when not 0).
func (s *Service) balances(ctx context.Context, salonID, id, client int64) ([]BalanceRow, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT b.id, b.salon_id, b.kind, b.code_hint, COALESCE(b.client_id, 0), b.service_ids, b.total, b.remaining,
		    b.expires_on, b.created_at, COALESCE(c.name, ''), COALESCE(c.phone, ''), COALESCE(p.price, 0),
		    COALESCE(sa.price, 0), CASE WHEN b.code_locked_until > now() THEN b.code_locked_until END
		FROM balances b LEFT JOIN clients c ON c.id = b.client_id LEFT JOIN balance_prices p ON p.balance_id = b.id
		LEFT JOIN balance_sales sa ON sa.balance_id = b.id
		WHERE b.salon_id = $1 AND ($3 = 0 OR b.id = $3)
		  AND ($4 = 0 OR b.client_id = $4)
		ORDER BY b.id DESC LIMIT $2`, salonID, maxBalanceRows, id, client)
	if err != nil {
		return nil, fmt.Errorf("balances: %w", dbErr(err))
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (BalanceRow, error) {
		var row BalanceRow
		var locked *time.Time
		b, err := scanBalance(scanPrefix{row: r, rest: []any{&row.ClientName, &row.Phone, &row.DeskPrice, &row.SalePrice, &locked}})
		if err == nil {
			row.Balance = *b
		}
		if locked != nil {
			row.CodeLockedUntil = *locked
		}
		return row, err
	})
}

// packageTerms checks a package's visits and services (sold in the salon
// or offered online) and returns its services sorted, each once: a
// problem with the visits, the list or a service that is not sold (not
// the salon's, or off sale) is named in fe.
func (c *catalog) packageTerms(fe fieldErrors, visits int, services []int64) []int64 {
	if visits < 1 || visits > MaxPackageVisits {
		fe.add("visits", "from 1 to %d", MaxPackageVisits)
	}
	switch {
	case len(services) == 0:
		fe.add("service_id", "required")
	case len(services) > maxBalanceServices:
		fe.add("service_id", "at most %d services", maxBalanceServices)
	}
	for _, id := range services {
		if sv, ok := c.services[id]; !ok || !sv.Active {
			// (A field of the form, not a page that is not there: the
			// form is shown again, saying so.)
			fe.add("service_id", "no such service")
			break
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(services)))
}
