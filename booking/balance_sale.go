package booking

import (
	"cmp"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"salon/booking/psp"
)

// Packages and certificates sold online. The salon's offers (a
// certificate of an amount, a package of visits, each at a price) are
// bought through the payment provider, a saga of their own beside the
// deposits' (payment.go), with the same rules: the provider is called
// after the transaction that decided the call, with a stable idempotence
// key; a lost answer leaves the sale unknown for the next check; webhooks,
// the buyer's return and the sweep all go through one check that believes
// only the provider's own answer. The payment is created two-stage and
// captured at once when authorized; the balance is credited in the
// transaction that records the capture, once per sale (balance_sales.
// balance_id is unique, and the sale's row is locked first).
//
// The code is made in that transaction, and exists readable in three
// places only: the e-mail to the buyer (sent by the process that made
// it, at once), the buyer's browser (the return page), and that process's
// memory meanwhile. The database keeps its hash (the balance's) and, for
// the return page, the code sealed under the buyer's claim: a secret the
// buyer's browser made and sent with the purchase, of which only the
// hash is kept. The return URL (which the provider keeps) names the sale
// by a reference that shows its state and nothing more. An e-mail that
// did not go is said on the balance's page, where staff send a new code.

// BalanceOffer is what a salon sells online: a certificate of an amount,
// or a package of visits of a service (or of any of a set).
type BalanceOffer struct {
	ID         int64
	SalonID    int64
	Kind       BalanceKind
	Title      string
	ServiceIDs []int64
	// A certificate's amount, or a package's visits.
	Amount Money
	Visits int
	Price  Money
	// ValidDays: how long a balance sold is good for (0: no end).
	ValidDays int
	Active    bool
	// RequestKey, when set, is the one-time key of the form that adds
	// it: the same form sent again adds nothing more (AddBalanceOffer).
	RequestKey string
}

// units is what the offer credits: visits, or minor units.
func (o *BalanceOffer) units() int64 {
	if o.Kind == BalancePackage {
		return int64(o.Visits)
	}
	return int64(o.Amount)
}

// MaxOfferDays is the longest an offer sells a balance good for.
const MaxOfferDays = 3660

// Offer bounds.
const (
	maxOfferTitle   = 120
	maxSalonOffers  = 50
	saleClaimMinLen = 22
	saleClaimMaxLen = 128
)

const balanceOfferColumns = `id, salon_id, kind, title, service_ids, units, price, COALESCE(valid_days, 0), active`

func scanBalanceOffer(r pgx.Row) (BalanceOffer, error) {
	var o BalanceOffer
	var units, price int64
	err := r.Scan(&o.ID, &o.SalonID, &o.Kind, &o.Title, &o.ServiceIDs, &units, &price, &o.ValidDays, &o.Active)
	o.Price = Money(price)
	if o.Kind == BalancePackage {
		o.Visits = int(units)
	} else {
		o.Amount = Money(units)
	}
	return o, err
}

// AddBalanceOffer puts an offer on sale online (owners of the salon).
// Errors: ErrForbidden, ErrInvalid naming the field (a service not of
// the salon's too).
func (s *Service) AddBalanceOffer(ctx context.Context, o BalanceOffer) (*BalanceOffer, error) {
	if err := authorize(ctx, o.SalonID, RoleOwner); err != nil {
		return nil, err
	}
	c, err := s.currentCatalog(ctx, o.SalonID)
	if err != nil {
		return nil, err
	}
	fe := fieldErrors{}
	o.Title = cleanText(fe, "title", o.Title, maxOfferTitle, oneLine, true)
	switch o.Kind {
	case BalanceCertificate:
		if o.Amount <= 0 || o.Amount > MaxCertificate {
			fe.add("amount", "from 0.01 to %s", MaxCertificate.String())
		}
		o.ServiceIDs, o.Visits = []int64{}, 0
	case BalancePackage:
		o.ServiceIDs = c.packageTerms(fe, o.Visits, o.ServiceIDs)
		o.Amount = 0
	default:
		fe.add("kind", "package or certificate")
	}
	switch {
	case o.Price <= 0 || o.Price > MaxCertificate:
		fe.add("price", "from 0.01 to %s", MaxCertificate.String())
	case o.Kind == BalanceCertificate && o.Amount > 0 && o.Price > o.Amount:
		// (A typo, surely: a buyer would pay more than it pays for.)
		fe.add("price", "at most the certificate's amount, %s", o.Amount.String())
	}
	if o.ValidDays < 0 || o.ValidDays > MaxOfferDays {
		fe.add("valid_days", "from 1 to %d, or empty", MaxOfferDays)
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var n int
		var again bool // (its form sent before: said below, whatever the count)
		if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE active), COALESCE(bool_or(request_key = $2), false)
			FROM balance_offers WHERE salon_id = $1`, o.SalonID, o.RequestKey).Scan(&n, &again); err != nil {
			return err
		}
		if n >= maxSalonOffers && !again {
			return conflict("at most %d offers on sale at once", maxSalonOffers)
		}
		err := tx.QueryRow(ctx, `INSERT INTO balance_offers (salon_id, kind, title, service_ids, units, price, valid_days, request_key)
			VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7, 0), NULLIF($8, ''))
			ON CONFLICT (salon_id, request_key) WHERE request_key IS NOT NULL DO NOTHING RETURNING id`, o.SalonID, o.Kind, o.Title, o.ServiceIDs,
			o.units(), int64(o.Price), o.ValidDays, o.RequestKey).Scan(&o.ID)
		if !isNoRows(err) {
			return err
		}
		// Its form was sent before: that offer stands, alone; whether it
		// is what this send asks is said.
		var same bool
		err = tx.QueryRow(ctx, `SELECT id, kind = $3 AND title = $4 AND service_ids = $5 AND units = $6 AND price = $7
			    AND valid_days IS NOT DISTINCT FROM NULLIF($8, 0)
			FROM balance_offers WHERE salon_id = $1 AND request_key = $2`, o.SalonID, o.RequestKey, o.Kind, o.Title, o.ServiceIDs, o.units(),
			int64(o.Price), o.ValidDays).Scan(&o.ID, &same)
		if err == nil && !same {
			return conflict("this form put an offer on sale already: the page has a new form for another")
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("balance offer: %w", dbErr(err))
	}
	o.Active = true
	return &o, nil
}

// SetBalanceOfferActive takes an offer off sale, or puts it back (owners).
// What was sold stays as it was sold. Errors: ErrForbidden, ErrNotFound.
func (s *Service) SetBalanceOfferActive(ctx context.Context, salonID, offerID int64, active bool) error {
	if err := authorize(ctx, salonID, RoleOwner); err != nil {
		return err
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var services []int64
		var was bool
		err := tx.QueryRow(ctx, `SELECT service_ids, active FROM balance_offers WHERE salon_id = $1 AND id = $2 FOR UPDATE`, salonID, offerID).
			Scan(&services, &was)
		if isNoRows(err) {
			return fmt.Errorf("balance offer %d: %w", offerID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if active && !was {
			// Back on sale: as bound as a new offer, of services still sold.
			var onSale int
			var gone bool
			if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM balance_offers WHERE salon_id = $1 AND active),
				    EXISTS (SELECT 1 FROM unnest($2::bigint[]) sid LEFT JOIN services sv ON sv.id = sid AND sv.salon_id = $1
				            WHERE sv.id IS NULL OR NOT sv.active)`, salonID, services).Scan(&onSale, &gone); err != nil {
				return err
			}
			switch {
			case onSale >= maxSalonOffers:
				return conflict("at most %d offers on sale at once", maxSalonOffers)
			case gone:
				return unknown("service_id", "no such service")
			}
		}
		_, err = tx.Exec(ctx, `UPDATE balance_offers SET active = $3 WHERE salon_id = $1 AND id = $2`, salonID, offerID, active)
		return err
	})
	if err != nil {
		return fmt.Errorf("balance offer %d: %w", offerID, dbErr(err))
	}
	return nil
}

// BalanceOffers returns the salon's offers: those on sale to anyone, every
// one to its staff (all). Errors: ErrForbidden.
func (s *Service) BalanceOffers(ctx context.Context, salonID int64, all bool) ([]BalanceOffer, error) {
	if all {
		if err := authorize(ctx, salonID, RoleAdmin); err != nil {
			return nil, err
		}
	} else if err := callerOf(ctx).check(); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+balanceOfferColumns+` FROM balance_offers WHERE salon_id = $1 AND (active OR $2)
		ORDER BY NOT active, kind, price, id LIMIT 200`, salonID, all)
	if err != nil {
		return nil, fmt.Errorf("balance offers: %w", dbErr(err))
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (BalanceOffer, error) { return scanBalanceOffer(r) })
}

// BalancePurchase is a buyer's order of an offer.
type BalancePurchase struct {
	SalonID int64
	OfferID int64
	// Buyer: a package's client (by phone); the e-mail is where the code
	// goes, and is required.
	Buyer ClientInput
	// Claim is a secret the buyer's browser made (22 to 128 characters;
	// "": none): whoever presents it sees the code on the return page.
	Claim string
	// Key is the request's idempotency key ("": none): the same key again
	// returns the first purchase.
	Key string
}

// BalanceSale is a purchase of an offer, as its buyer and the salon see it.
type BalanceSale struct {
	ID       int64
	SalonID  int64
	OfferID  int64
	Kind     BalanceKind
	Title    string
	Units    int64 // visits, or minor units
	Price    Money
	Currency string
	Status   PaymentStatus
	// URL is where the buyer pays (only while they may).
	URL string
	// Ref is the return page's reference.
	Ref       string
	BalanceID int64
	Email     string
	// MailedAt: when the code's e-mail went; MailError why it did not.
	MailedAt  time.Time
	MailError string
	// LastError: why the last check with the provider failed ("" : it
	// did not), e.g. a refund the provider refused.
	LastError string
	// RefundCancelled: the provider cancelled the sale's refund; the money
	// is owed, and RetrySaleRefund asks for it again.
	RefundCancelled bool
	// RefundToCheck: whether the sale's refund was made is for a person to
	// check at the provider (the checks cannot tell, and do not risk a
	// second one); if it was not, RetrySaleRefund asks for it again.
	RefundToCheck bool
	// Refunded is what the sale's refunds paid back so far; Refunding the
	// refund on its way (while the sale is refunding).
	Refunded, Refunding Money
	// Left is what its balance has left to spend (visits, or minor units).
	Left      int64
	CreatedAt time.Time
	// ValidUntil is the balance's last day (once credited; zero: no end).
	ValidUntil Date
	// Code is set only where the buyer's claim reveals it (SaleCode).
	Code string
	// Phone is a package's client's (E.164), set with Code: the phone its
	// visits are booked with.
	Phone string
}

// Paid reports whether the balance was credited.
func (b *BalanceSale) Paid() bool {
	return b.Status == PayCompleted || b.Status == PayRefunding || b.Status == PayRefunded
}

const saleColumns = `s.id, s.salon_id, s.offer_id, s.kind, s.title, s.units, s.price, s.currency, s.status,
	COALESCE(s.confirmation_url, ''), s.return_ref, COALESCE(s.balance_id, 0), s.email, s.mailed_at, s.mail_error,
	s.refunded,
	CASE WHEN s.status = 'refunding' THEN COALESCE(s.refund_amount, 0) ELSE 0 END, COALESCE(b.remaining, 0), s.created_at, b.expires_on, s.last_error`

const saleFrom = ` FROM balance_sales s LEFT JOIN balances b ON b.id = s.balance_id `

func scanSale(r pgx.Row) (*BalanceSale, error) {
	var x BalanceSale
	var price, refunded, refunding int64
	var mailed, expires *time.Time
	if err := r.Scan(&x.ID, &x.SalonID, &x.OfferID, &x.Kind, &x.Title, &x.Units, &price, &x.Currency, &x.Status, &x.URL, &x.Ref,
		&x.BalanceID, &x.Email, &mailed, &x.MailError, &refunded, &refunding, &x.Left, &x.CreatedAt, &expires, &x.LastError); err != nil {
		return nil, err
	}
	x.Price, x.Refunded, x.Refunding = Money(price), Money(refunded), Money(refunding)
	x.RefundCancelled = x.Status == PayRefunding && x.LastError == refundCancelled
	x.RefundToCheck = refundToCheck(x.Status, x.LastError)
	if mailed != nil {
		x.MailedAt = *mailed
	}
	if expires != nil {
		x.ValidUntil = DateOf(*expires)
	}
	if x.Status != PayRegistered {
		x.URL = "" // paid, or beyond paying
	}
	return &x, nil
}

// BuyBalance starts the purchase of an offer: the sale is written (with
// the buyer's client record) in one transaction, then the provider is
// asked for the payment, the buyer sent back to back(ref) after paying.
// Anyone may buy. Errors: ErrInvalid naming the field, ErrNotFound (the
// offer, not on sale), ErrConflict (the salon sells nothing online).
// When the provider does not answer, the sale is returned awaiting its
// payment (PayUnknown, no URL): the sweep asks the provider again, the
// return page offers the payment once it is made, and the same key finds
// the sale.
func (s *Service) BuyBalance(ctx context.Context, in BalancePurchase, back ReturnLink) (*BalanceSale, error) {
	caller := callerOf(ctx)
	if err := caller.check(); err != nil {
		return nil, err
	}
	if caller.kind == callerStaff && caller.user.SalonID != in.SalonID {
		return nil, fmt.Errorf("salon %d: %w", in.SalonID, ErrNotFound)
	}
	if s.psp == nil {
		return nil, conflict("packages and certificates are sold in the salon")
	}
	c, err := s.currentCatalog(ctx, in.SalonID)
	if err != nil {
		return nil, err
	}
	fe := fieldErrors{}
	in.Buyer.normalize(fe, "buyer.", c.salon.Country)
	if _, bad := fe["buyer.email"]; !bad && in.Buyer.Email == "" {
		fe.add("buyer.email", "required")
	}
	if in.Claim != "" && (len(in.Claim) < saleClaimMinLen || len(in.Claim) > saleClaimMaxLen) {
		fe.add("claim", "from %d to %d characters", saleClaimMinLen, saleClaimMaxLen)
	}
	if len(in.Key) > 200 {
		fe.add("idempotency_key", "at most %d characters", 200)
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	var claimHash, claimKey []byte
	if in.Claim != "" {
		claimHash = tokenHash(in.Claim)
		k, err := claimPrivate(in.Claim)
		if err != nil {
			return nil, fmt.Errorf("buy balance: %w", err)
		}
		claimKey = k.PublicKey().Bytes()
	}
	var id int64
	var fresh bool // the provider is to be asked for the payment now
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		fresh = false
		if in.Key != "" {
			// A retry: the same purchase (offer, buyer, claim) finds its
			// sale; another with the same key is refused.
			var first []byte
			var offer int64
			var email, phone string
			var status PaymentStatus
			err := tx.QueryRow(ctx, `SELECT s.id, s.claim_hash, s.offer_id, s.email, s.status, COALESCE(c.phone, '')
				FROM balance_sales s JOIN clients c ON c.salon_id = s.salon_id AND c.id = s.client_id
				WHERE s.salon_id = $1 AND s.request_key = $2`, in.SalonID, in.Key).Scan(&id, &first, &offer, &email, &status, &phone)
			if err == nil {
				if subtle.ConstantTimeCompare(first, claimHash) != 1 || offer != in.OfferID || email != in.Buyer.Email || phone != in.Buyer.Phone {
					return fmt.Errorf("balance sale: %w", ErrKeyReused)
				}
				// Its payment not made yet at the provider: try again now.
				fresh = status == PayRegistering || status == PayUnknown
				return nil
			}
			if !isNoRows(err) {
				return err
			}
		}
		o, err := scanBalanceOffer(tx.QueryRow(ctx, `SELECT `+balanceOfferColumns+` FROM balance_offers WHERE salon_id = $1 AND id = $2 AND active`,
			in.SalonID, in.OfferID))
		if isNoRows(err) {
			return unknown("offer_id", "no such offer")
		}
		if err != nil {
			return err
		}
		client, err := clientByPhone(ctx, tx, in.SalonID, in.Buyer)
		if err != nil {
			return err
		}
		ref := newToken()
		var receipt []byte
		if s.receipts {
			r, err := saleReceipt(ctx, tx, &o, in.Buyer, c.salon.Currency)
			if err != nil {
				return err
			}
			if receipt, err = json.Marshal(r); err != nil {
				return err
			}
		}
		returnURL := ""
		if back != nil {
			returnURL = back(ref)
		}
		err = tx.QueryRow(ctx, `INSERT INTO balance_sales (salon_id, offer_id, kind, title, service_ids, units, price, currency, valid_days,
			    client_id, email, lang, provider, status, idempotence_key, request_key, return_url, return_ref, claim_hash, claim_key, receipt)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULLIF($9, 0), $10, $11, $12, $13, 'registering', $14, NULLIF($15, ''), $16, $17, $18, $19, $20)
			RETURNING id`, in.SalonID, o.ID, o.Kind, o.Title, o.ServiceIDs, o.units(), int64(o.Price), c.salon.Currency, o.ValidDays,
			client, in.Buyer.Email, in.Buyer.Lang, s.psp.Name(), "sale-"+randomHex(16), in.Key, returnURL, ref, claimHash, claimKey, receipt).Scan(&id)
		fresh = err == nil
		return err
	})
	if violated(err, "balance_sales_request") {
		return nil, fmt.Errorf("balance sale: %w", ErrInProgress)
	}
	if err != nil {
		return nil, fmt.Errorf("buy balance: %w", dbErr(err))
	}
	if fresh && providerCallsAllowed(ctx) {
		// The provider not answering is no failure of the purchase: it is
		// written, its payment is asked for again by the sweep, and its
		// return page offers it once made (the same key finds it too).
		if _, err := s.checkSale(ctx, id); err != nil && !errors.Is(err, ErrUnavailable) {
			return nil, err
		}
	}
	return s.sale(ctx, `s.id = $1`, id)
}

// sale reads one sale.
func (s *Service) sale(ctx context.Context, where string, args ...any) (*BalanceSale, error) {
	x, err := scanSale(s.pool.QueryRow(ctx, `SELECT `+saleColumns+saleFrom+`WHERE `+where, args...))
	if isNoRows(err) {
		return nil, fmt.Errorf("balance sale: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("balance sale: %w", dbErr(err))
	}
	return x, nil
}

// OnlinePaymentActor begins the actor of a balance's credit by an online
// sale's payment (the provider's id of it follows).
const OnlinePaymentActor = "online: payment "

// saleReceipt is the fiscal receipt a sale is paid with: a certificate is
// an advance (54-FZ: what it buys is not yet known), a package the full
// prepayment of its services; either at the calculated VAT rate
// (receiptItem). What a visit uses of it is settled by a receipt of its
// own (sendBalanceSettlements).
func saleReceipt(ctx context.Context, tx pgx.Tx, o *BalanceOffer, buyer ClientInput, currency string) (*psp.Receipt, error) {
	var vat, tax int
	if err := tx.QueryRow(ctx, `SELECT receipt_vat_code, COALESCE(receipt_tax_system, 0) FROM salons WHERE id = $1`, o.SalonID).
		Scan(&vat, &tax); err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	subject, mode := "service", "full_prepayment"
	if o.Kind == BalanceCertificate {
		subject, mode = "payment", "advance"
	}
	return &psp.Receipt{
		Customer:  psp.ReceiptCustomer{Email: buyer.Email, Phone: strings.TrimPrefix(buyer.Phone, "+")},
		TaxSystem: tax,
		Items:     []psp.ReceiptItem{receiptItem(o.Title, o.Price, currency, vat, subject, mode)},
	}, nil
}

// saleState is what a check reads of a sale.
type saleState struct {
	id, salonID     int64
	status          PaymentStatus
	provider        string
	key, externalID string
	price           int64
	currency        string
	returnURL       string
	receipt         []byte
	refundAmount    int64 // the refund under way (or last made)
	refunded        int64 // what the refunds made paid back
	refundKey       string
	refundID        string    // the provider's, once it answered
	refundAskedAt   time.Time // when it was asked under refundKey
	checks          int
	createdAt       time.Time
	title           string
	kind            BalanceKind
	balance         int64
	lastError       string
	lang            string // the buyer's (else the salon's)
}

func (s *Service) readSale(ctx context.Context, q querier, id int64, lock string) (*saleState, error) {
	var x saleState
	err := q.QueryRow(ctx, `SELECT s.id, s.salon_id, s.status, s.provider, s.idempotence_key, COALESCE(s.external_id, ''), s.price, s.currency,
		    s.return_url, s.receipt, COALESCE(s.refund_amount, 0), COALESCE(s.refund_key, ''), COALESCE(s.refund_id, ''),
		    COALESCE(s.refund_asked_at, s.updated_at), s.checks, s.created_at, s.title, s.kind, COALESCE(s.balance_id, 0), s.last_error, s.refunded,
		    COALESCE(NULLIF(s.lang, ''), (SELECT locale FROM salons WHERE id = s.salon_id))
		FROM balance_sales s WHERE s.id = $1 `+lock, id).Scan(&x.id, &x.salonID, &x.status, &x.provider, &x.key, &x.externalID, &x.price, &x.currency,
		&x.returnURL, &x.receipt, &x.refundAmount, &x.refundKey, &x.refundID, &x.refundAskedAt, &x.checks, &x.createdAt, &x.title, &x.kind, &x.balance,
		&x.lastError, &x.refunded, &x.lang)
	if isNoRows(err) {
		return nil, fmt.Errorf("balance sale %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("balance sale %d: %w", id, dbErr(err))
	}
	return &x, nil
}

// CheckSale brings a sale up to date with the provider (the platform:
// the sweep, and tests). Errors: ErrForbidden, ErrNotFound, ErrUnavailable.
func (s *Service) CheckSale(ctx context.Context, saleID int64) (*BalanceSale, error) {
	if err := onlySystem(ctx); err != nil {
		return nil, err
	}
	if _, err := s.checkSale(ctx, saleID); err != nil {
		return nil, err
	}
	return s.sale(ctx, `s.id = $1`, saleID)
}

// checkSale is the sale's saga step: the provider's answer first (a
// create, with the sale's own key, while the payment may not exist yet),
// then what it asks for: the capture of an authorization, the credit of a
// capture (one transaction), the refund asked. It reports whether the
// sale moved.
func (s *Service) checkSale(ctx context.Context, id int64) (bool, error) {
	x, err := s.readSale(ctx, s.pool, id, "")
	if err != nil {
		return false, err
	}
	if s.psp == nil || x.provider != s.psp.Name() {
		// Sold through a provider this server does not speak to now: its
		// payment waits for a server that does.
		return false, fmt.Errorf("balance sale %d: its provider %q is not configured here: %w", id, x.provider, ErrUnavailable)
	}
	cctx, cancel := context.WithTimeout(ctx, providerCall)
	defer cancel()
	var p *psp.Payment
	switch x.status {
	case PayRegistering, PayUnknown:
		var receipt *psp.Receipt
		if x.receipt != nil {
			receipt = &psp.Receipt{}
			if err := json.Unmarshal(x.receipt, receipt); err != nil {
				return false, fmt.Errorf("balance sale %d: receipt: %w", id, err)
			}
		}
		p, err = s.psp.Create(cctx, x.key, psp.CreateRequest{Amount: x.price, Currency: x.currency,
			Description: truncate(x.title, 128), ReturnURL: x.returnURL, Locale: x.lang,
			Metadata: map[string]string{"sale_id": strconv.FormatInt(id, 10)}, Receipt: receipt})
		if psp.IsRejected(err) {
			return s.moveSale(ctx, id, x.status, PayFailed, nil, err.Error())
		}
	case PayRegistered, PayAuthorized, PayCompleted, PayFailed, PayRefunding:
		if x.externalID == "" {
			return false, nil
		}
		p, err = s.psp.Get(cctx, x.externalID)
	default:
		return false, nil // canceled, refunded: nothing moves by the provider's word (a refunded one is refunded again by staff: refundSaleOf)
	}
	if err != nil {
		s.saleCheckFailed(ctx, x, err)
		if x.status == PayRegistering {
			_, _ = s.moveSale(ctx, id, PayRegistering, PayUnknown, nil, err.Error())
		}
		return false, fmt.Errorf("the payment provider did not answer: %w", ErrUnavailable)
	}
	if (p.Status == psp.WaitingForCapture || p.Status == psp.Succeeded) && (p.Amount != x.price || p.Currency != x.currency) {
		// Not what was sold: nothing is captured or credited; a person looks.
		why := fmt.Sprintf("the provider's payment is %d %s, the sale %d %s", p.Amount, p.Currency, x.price, x.currency)
		s.saleCheckFailed(ctx, x, errors.New(why))
		return false, fmt.Errorf("balance sale %d: %s: %w", id, why, ErrConflict)
	}
	if p.Status == psp.WaitingForCapture {
		if _, err := s.moveSale(ctx, id, x.status, PayAuthorized, p, ""); err != nil {
			return false, err
		}
		x.status, x.checks = PayAuthorized, 0
		kctx, kcancel := context.WithTimeout(ctx, providerCall)
		c, err := s.psp.Capture(kctx, "sale-capture-"+strconv.FormatInt(id, 10), p.ID, x.price, x.currency)
		kcancel()
		if err != nil {
			s.saleCheckFailed(ctx, x, err)
			return true, fmt.Errorf("the payment provider did not answer: %w", ErrUnavailable)
		}
		p = c
	}
	switch p.Status {
	case psp.Pending:
		if x.status == PayRegistering || x.status == PayUnknown {
			return s.moveSale(ctx, id, x.status, PayRegistered, p, "")
		}
		if x.status == PayRegistered && s.now().Sub(x.createdAt) > paymentGiveUp {
			return s.moveSale(ctx, id, PayRegistered, PayFailed, p, "not paid within a day")
		}
		s.saleUnchanged(ctx, x)
		return false, nil
	case psp.Canceled:
		if x.status.Terminal() && x.status != PayFailed {
			return false, nil
		}
		return s.moveSale(ctx, id, x.status, PayCanceled, p, "the payment was declined or cancelled")
	case psp.Succeeded:
		moved := false
		if !(x.status == PayCompleted || x.status == PayRefunding) {
			mail, err := s.creditSale(ctx, id, p)
			if err != nil {
				return false, err
			}
			if mail != nil {
				s.mailSale(context.WithoutCancel(ctx), mail)
			}
			moved = true
		}
		if x.status == PayRefunding || moved {
			if x2, err := s.readSale(ctx, s.pool, id, ""); err == nil && x2.status == PayRefunding {
				return true, s.refundSale(ctx, x2)
			}
		}
		if !moved {
			s.saleUnchanged(ctx, x)
		}
		return moved, nil
	}
	return false, nil
}

// moveSale moves a sale from from to to (with the provider's payment, if
// given), scheduling its next check by state.
func (s *Service) moveSale(ctx context.Context, id int64, from, to PaymentStatus, p *psp.Payment, why string) (bool, error) {
	var ext, url *string
	if p != nil {
		ext = &p.ID
		if p.ConfirmationURL != "" {
			url = &p.ConfirmationURL
		}
	}
	tag, err := s.pool.Exec(ctx, `UPDATE balance_sales SET status = $3, external_id = COALESCE($4, external_id),
		confirmation_url = COALESCE($5, confirmation_url), last_error = $6, next_check_at = $7, checks = 0, updated_at = now()
		WHERE id = $1 AND status = $2`, id, from, to, ext, url, why, s.now().Add(checkDelay(to, to == PayRegistered, 0)))
	if err != nil {
		return false, fmt.Errorf("balance sale %d: %w", id, dbErr(err))
	}
	return tag.RowsAffected() == 1, nil
}

// saleUnchanged and saleCheckFailed put the next check later (backing off).
func (s *Service) saleUnchanged(ctx context.Context, x *saleState) { s.saleLater(ctx, x, "") }

func (s *Service) saleCheckFailed(ctx context.Context, x *saleState, cause error) {
	s.log.Warn("balance sale: check", "sale", x.id, "status", x.status, "err", cause)
	s.saleLater(ctx, x, cause.Error())
}

func (s *Service) saleLater(ctx context.Context, x *saleState, why string) {
	next := s.now().Add(checkDelay(x.status, x.status == PayRegistered, x.checks+1))
	// (Only while the sale is as the check read it: a sale moved on
	// meanwhile, by staff say, keeps its own word.)
	if _, err := s.pool.Exec(context.WithoutCancel(ctx), `UPDATE balance_sales SET checks = checks + 1, next_check_at = $2,
		last_error = $3, updated_at = now() WHERE id = $1 AND status = $4`, x.id, next, why, x.status); err != nil {
		s.log.Warn("balance sale: reschedule", "sale", x.id, "err", err)
	}
}

// creditSale records the capture: the balance, its code and its credit,
// and the sale completed, in one transaction under the sale's row lock;
// once (a sale already credited returns nil). It returns the code's
// e-mail to send.
func (s *Service) creditSale(ctx context.Context, id int64, p *psp.Payment) (*SaleMail, error) {
	var mail *SaleMail
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		mail = nil
		var salonID, clientID, units int64
		var kind BalanceKind
		var services []int64
		var days int
		var status PaymentStatus
		var claim []byte
		var m SaleMail
		if err := tx.QueryRow(ctx, `SELECT s.salon_id, s.client_id, s.kind, s.service_ids, s.units, COALESCE(s.valid_days, 0), s.status, s.claim_key,
			    s.email, s.lang, CASE WHEN s.kind = 'package' THEN COALESCE(c.phone, '') ELSE '' END
			FROM balance_sales s LEFT JOIN clients c ON c.salon_id = s.salon_id AND c.id = s.client_id WHERE s.id = $1 FOR UPDATE OF s`, id).
			Scan(&salonID, &clientID, &kind, &services, &units, &days, &status, &claim, &m.To, &m.Lang, &m.Phone); err != nil {
			return err
		}
		if status == PayCompleted || status == PayRefunding || status == PayRefunded || status == PayCanceled {
			return nil
		}
		c, err := s.catalogAt(ctx, tx, salonID, 0)
		if err != nil {
			return err
		}
		code := newBalanceCode()
		norm := normalizeCode(code)
		var expires *time.Time
		if days > 0 {
			d := c.salon.Today(s.now()).AddDays(days - 1).dbDate()
			expires = &d
			m.ValidUntil = DateOf(d)
		}
		var client *int64
		if kind == BalancePackage {
			client = &clientID
		}
		var balanceID int64
		if err := tx.QueryRow(ctx, `INSERT INTO balances (salon_id, kind, code_hash, code_hint, client_id, service_ids, total, expires_on, paid_via)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'online') RETURNING id`, salonID, kind, tokenHash(norm), norm[len(norm)-4:], client,
			services, units, expires).Scan(&balanceID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO balance_entries (balance_id, salon_id, type, delta, actor) VALUES ($1, $2, 'credit', $3, $4)`,
			balanceID, salonID, units, OnlinePaymentActor+p.ID); err != nil {
			return err
		}
		var sealed []byte
		if claim != nil {
			if sealed, err = sealCode(claim, id, code); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE balance_sales SET status = 'completed', balance_id = $2, code_sealed = $3, external_id = $4,
			last_error = '', next_check_at = $5, checks = 0, updated_at = now() WHERE id = $1`,
			id, balanceID, sealed, p.ID, s.now().Add(checkDelay(PayCompleted, false, 0))); err != nil {
			return err
		}
		m.SaleID, m.BalanceID, m.Salon, m.Kind, m.Code, m.Units = id, balanceID, c.salon, kind, code, units
		for _, sid := range services {
			m.Services = append(m.Services, c.services[sid].Name)
		}
		if m.Lang == "" {
			m.Lang = c.salon.Locale
		}
		mail = &m
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("balance sale %d: credit: %w", id, dbErr(err))
	}
	return mail, nil
}

// The code is sealed to the claim's public key (X25519: an ephemeral key
// agreed with it, then AES-256-GCM, the sale's id bound in): the process
// that credits the sale has only the public key, and the stored row opens
// nothing; the buyer's claim derives the private key again.

// claimPrivate is the private key a claim derives.
func claimPrivate(claim string) (*ecdh.PrivateKey, error) {
	seed := sha256.Sum256(append([]byte("salon balance code key\x00"), claim...))
	return ecdh.X25519().NewPrivateKey(seed[:])
}

// sealCode seals a code of sale id to a claim's public key: the ephemeral
// public key, the nonce, the ciphertext.
func sealCode(claimKey []byte, id int64, code string) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(claimKey)
	if err != nil {
		return nil, err
	}
	eph, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	shared, err := eph.ECDH(pub)
	if err != nil {
		return nil, err
	}
	g, err := codeCipher(shared, eph.PublicKey().Bytes(), claimKey)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, g.NonceSize())
	_, _ = rand.Read(nonce)
	out := append(eph.PublicKey().Bytes(), nonce...)
	return g.Seal(out, nonce, []byte(code), []byte(strconv.FormatInt(id, 10))), nil
}

// openCode opens a sealed code of sale id with the buyer's claim.
func openCode(claim string, id int64, sealed []byte) (string, error) {
	priv, err := claimPrivate(claim)
	if err != nil {
		return "", err
	}
	if len(sealed) < 32+12 {
		return "", errors.New("sealed code: too short")
	}
	eph, err := ecdh.X25519().NewPublicKey(sealed[:32])
	if err != nil {
		return "", err
	}
	shared, err := priv.ECDH(eph)
	if err != nil {
		return "", err
	}
	g, err := codeCipher(shared, sealed[:32], priv.PublicKey().Bytes())
	if err != nil {
		return "", err
	}
	rest := sealed[32:]
	out, err := g.Open(nil, rest[:g.NonceSize()], rest[g.NonceSize():], []byte(strconv.FormatInt(id, 10)))
	return string(out), err
}

// codeCipher is the AEAD of an agreed secret and the two public keys.
func codeCipher(shared, ephPub, claimPub []byte) (cipher.AEAD, error) {
	h := sha256.New()
	h.Write([]byte("salon balance code\x00"))
	h.Write(shared)
	h.Write(ephPub)
	h.Write(claimPub)
	b, err := aes.NewCipher(h.Sum(nil))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// SaleMail is the e-mail that delivers a balance bought online, or tells
// its buyer of a refund of it.
type SaleMail struct {
	// Refund, when not 0, is a refund made of it: the e-mail says so
	// (what went back to the card, and what is left: Units), and holds
	// no code, but the purchase's Title.
	Refund            Money
	Title             string
	SaleID, BalanceID int64
	To, Lang          string
	Salon             Salon
	Kind              BalanceKind
	Code              string
	// Units: a package's visits, a certificate's minor units (of a
	// refund's e-mail: what it has left).
	Units int64
	// Of a refund's e-mail: what the sale's refunds paid back in all, of
	// its Price, and what bookings still hold of it (Units' kind).
	Refunded, Price Money
	Held            int64
	Services        []string // a package's
	// Phone is a package's client's (E.164): bookings it pays are theirs.
	Phone      string
	ValidUntil Date // zero: no end
}

// SaleCourier is an e-mail courier that also delivers a sale's code.
type SaleCourier interface {
	DeliverSale(ctx context.Context, m *SaleMail) (Sent, error)
}

// NoMailer is why a code's e-mail did not go from a server that sends no
// e-mail (BalanceSale.MailError).
const NoMailer = "this server sends no e-mail"

// mailSale sends the code's e-mail and records how it went (its words
// are not kept: they hold the code; the mail server's are, without the
// buyer's address).
func (s *Service) mailSale(ctx context.Context, m *SaleMail) {
	why := ""
	if err := s.deliverSale(ctx, m); err != nil {
		why = redactAddresses(err.Error())
		s.log.Warn("balance sale: the code's e-mail did not go", "sale", m.SaleID, "err", why)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE balance_sales SET mailed_at = CASE WHEN $2 = '' THEN $3::timestamptz END, mail_error = $2
		WHERE id = $1`, m.SaleID, why, s.now()); err != nil {
		s.log.Warn("balance sale: record the e-mail", "sale", m.SaleID, "err", err)
	}
}

// errNoMailer is deliverSale's error on a server that sends no e-mail.
var errNoMailer = errors.New(NoMailer)

// deliverSale sends m by the e-mail courier, in its turn among the
// replicas. Errors: errNoMailer, ErrDeliveryRefused (the mail server
// will not take it), ErrDeliveryUnknown (no answer in time: it may have
// gone), or why nothing went.
func (s *Service) deliverSale(ctx context.Context, m *SaleMail) error {
	c, ok := s.couriers[ChannelEmail].(SaleCourier)
	if !ok {
		return errNoMailer
	}
	if err := s.turn(ctx, ChannelEmail); err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	_, err := c.DeliverSale(sctx, m)
	if err != nil && sctx.Err() != nil && !errors.Is(err, ErrDeliveryUnknown) {
		err = fmt.Errorf("%w: %w", ErrDeliveryUnknown, err)
	}
	return err
}

// SaleRefundMailArgs is the job that tells a sale's buyer, by e-mail, of
// a refund of it made: written by the statement that records the refund
// (saleRefundMade), so that the buyer hears of every refund recorded,
// whichever replica recorded it and whether or not the mail server
// answered then. It is sent as the booking messages are: tried again,
// backing off, while nothing went (saleMailAttempts in all), never again
// once the mail server refused it or may have taken it.
type SaleRefundMailArgs struct {
	SalonID int64 `json:"salon_id"` // (0 in a job written before it was carried)
	SaleID  int64 `json:"sale_id"`
	Amount  Money `json:"amount"`
	Part    int   `json:"part"` // the sale's refund it tells of, from 1
	// Left is what the balance had left once the refund was recorded, and
	// Held what bookings held of it then (a package's visits, a
	// certificate's minor units); Refunded what the sale's refunds paid
	// back in all, of its Price.
	Left     int64 `json:"left"`
	Held     int64 `json:"held"`
	Refunded Money `json:"refunded"`
	Price    Money `json:"price"`
}

// Kind implements river.JobArgs.
func (SaleRefundMailArgs) Kind() string { return "sale_refund_mail" }

// saleMailAttempts is how many times a sale's e-mail that no mail server
// took is tried: with River's backoff (the attempt's fourth power, in
// seconds) about two hours in all.
const saleMailAttempts = 8

// saleRefundMailSQL is the job, for the sale updated by a relation u (id,
// salon_id, email, refund_amount, refunds, balance_id, refunded, price): none when
// the buyer left no e-mail. What the balance has left, and what bookings
// hold of it, are read in the statement that records the refund (the
// refund's entry was written before it, when the refund was decided).
var saleRefundMailSQL = `INSERT INTO river_job (kind, args, max_attempts)
	SELECT 'sale_refund_mail', jsonb_build_object('salon_id', u.salon_id, 'sale_id', u.id, 'amount', round(u.refund_amount / 100.0, 2),
	       'part', u.refunds,
	       'left', COALESCE((SELECT b.remaining FROM balances b WHERE b.salon_id = u.salon_id AND b.id = u.balance_id), 0),
	       'held', COALESCE((SELECT sum(h.units) FROM balance_holds h WHERE h.salon_id = u.salon_id AND h.balance_id = u.balance_id), 0),
	       'refunded', round(u.refunded / 100.0, 2), 'price', round(u.price / 100.0, 2)), ` + strconv.Itoa(saleMailAttempts) + `
	FROM u WHERE u.email <> '' AND u.refund_amount > 0`

type saleRefundMailWorker struct {
	river.WorkerDefaults[SaleRefundMailArgs]
	s *Service
}

// saleMailWaitsForAMailer is how long a sale's e-mail that a replica with
// no mailer took waits for one that has one (River's snoozes count no
// attempt): past it, no replica sends e-mail, and it is cancelled.
const saleMailWaitsForAMailer = 24 * time.Hour

// Work sends the refund's e-mail. Nothing went: an error, for River to
// try again (a replica with no mailer snoozes it, for one that has one,
// for a day at most). Refused, or perhaps taken: cancelled, not tried
// again.
func (w *saleRefundMailWorker) Work(ctx context.Context, job *river.Job[SaleRefundMailArgs]) error {
	err := w.s.mailSaleRefund(ctx, job.Args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errNoMailer) && time.Since(job.CreatedAt) < saleMailWaitsForAMailer: // (CreatedAt is the database's clock: real time)
		return river.JobSnooze(time.Minute)
	case errors.Is(err, errNoMailer):
		w.s.log.Warn("balance sale: the refund's e-mail did not go: no replica sends e-mail", "sale", job.Args.SaleID, "part", job.Args.Part)
		return river.JobCancel(err)
	case errors.Is(err, ErrDeliveryRefused), errors.Is(err, ErrDeliveryUnknown):
		w.s.log.Warn("balance sale: the refund's e-mail did not go, and is not tried again", "sale", job.Args.SaleID, "part", job.Args.Part,
			"err", redactAddresses(err.Error()))
		return river.JobCancel(errors.New(redactAddresses(err.Error())))
	}
	// (River keeps the error: the buyer's address goes from it.)
	return errors.New(redactAddresses(err.Error()))
}

// mailSaleRefund tells a sale's buyer of its refund a. A sale whose
// buyer's e-mail was erased since tells no one: nil.
func (s *Service) mailSaleRefund(ctx context.Context, a SaleRefundMailArgs) error {
	m := SaleMail{Refund: a.Amount, Units: a.Left, Held: a.Held, Refunded: a.Refunded, Price: a.Price}
	var salonID int64
	err := s.pool.QueryRow(ctx, `SELECT s.id, s.salon_id, s.email, s.lang, s.kind, s.title, COALESCE(s.balance_id, 0)
		FROM balance_sales s WHERE s.id = $1 AND (s.salon_id = $2 OR $2 = 0)`, a.SaleID, a.SalonID).
		Scan(&m.SaleID, &salonID, &m.To, &m.Lang, &m.Kind, &m.Title, &m.BalanceID)
	switch {
	case isNoRows(err), err == nil && (m.To == "" || m.Refund <= 0):
		return nil // (the sale or the buyer's e-mail erased: no one to tell)
	case err != nil:
		return fmt.Errorf("balance sale %d: the refund's e-mail: %w", a.SaleID, err)
	}
	c, err := s.catalogAt(ctx, s.pool, salonID, 0)
	if err != nil {
		return fmt.Errorf("balance sale %d: the refund's e-mail: %w", a.SaleID, err)
	}
	m.Salon, m.Lang = c.salon, cmpOr(m.Lang, c.salon.Locale)
	if err := s.deliverSale(ctx, &m); err != nil {
		return fmt.Errorf("balance sale %d: the refund's e-mail: %w", a.SaleID, err)
	}
	s.log.Info("balance sale: the refund's e-mail went", "sale", a.SaleID, "part", a.Part)
	return nil
}

// addressRE finds e-mail addresses in a mail server's words.
var addressRE = regexp.MustCompile(`[^\s<>"'(),;:]+@[^\s<>"'(),;:]+`)

// redactAddresses is a mail server's words without the addresses in them
// (what may be kept of a failed send).
func redactAddresses(s string) string { return addressRE.ReplaceAllString(s, "…@…") }

// SaleReturn is what the buyer back from paying sees, by the sale's
// return reference (any caller, for ReturnRefTTL): its state, checked with
// the provider first (at most every few seconds), and, when claim is the
// buyer's own, the code while it has anything left to spend (paid, or
// refunded in part). What is left is the claim's to see, with the code
// (Left is zero for anyone else). Errors: ErrNotFound, ErrInvalid (a
// claim of a length no purchase takes).
func (s *Service) SaleReturn(ctx context.Context, ref, claim string) (*BalanceSale, error) {
	if err := callerOf(ctx).check(); err != nil {
		return nil, err
	}
	if ref == "" || len(ref) > 100 {
		return nil, fmt.Errorf("balance sale: %w", ErrNotFound)
	}
	if claim != "" && (len(claim) < saleClaimMinLen || len(claim) > saleClaimMaxLen) {
		return nil, Invalid("claim", "from %d to %d characters", saleClaimMinLen, saleClaimMaxLen) // as BuyBalance takes it
	}
	var id int64
	var status PaymentStatus
	err := s.pool.QueryRow(ctx, `SELECT id, status FROM balance_sales WHERE return_ref = $1 AND created_at > $2`, ref, s.now().Add(-ReturnRefTTL)).
		Scan(&id, &status)
	if isNoRows(err) {
		return nil, fmt.Errorf("balance sale: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("balance sale: %w", dbErr(err))
	}
	if (status == PayRegistered || status == PayUnknown || status == PayAuthorized || status == PayRegistering) && s.checkDue(ctx, "balance_sales", id) {
		if _, err := s.checkSale(ctx, id); err != nil && !errors.Is(err, ErrUnavailable) {
			return nil, err
		}
	}
	x, err := s.sale(ctx, `s.id = $1`, id)
	if err != nil {
		return nil, err
	}
	x.Email = maskEmail(x.Email)
	left := x.Left
	x.Left = 0
	if claim == "" || !(x.Status == PayCompleted || (x.Status == PayRefunded && left > 0)) {
		return x, nil
	}
	var sealed []byte
	if err := s.pool.QueryRow(ctx, `SELECT code_sealed FROM balance_sales WHERE salon_id = $1 AND id = $2`, x.SalonID, id).Scan(&sealed); err != nil {
		return nil, fmt.Errorf("balance sale: %w", dbErr(err))
	}
	if sealed == nil {
		return x, nil
	}
	code, err := openCode(claim, id, sealed)
	if err != nil {
		return x, nil // (not the buyer's claim)
	}
	x.Code, x.Left = code, left
	if x.Kind == BalancePackage {
		if err := s.pool.QueryRow(ctx, `SELECT COALESCE(c.phone, '') FROM balances b JOIN clients c ON c.salon_id = b.salon_id AND c.id = b.client_id
			WHERE b.salon_id = $1 AND b.id = $2`, x.SalonID, x.BalanceID).Scan(&x.Phone); err != nil && !isNoRows(err) {
			return nil, fmt.Errorf("balance sale: %w", dbErr(err))
		}
	}
	return x, nil
}

// maskEmail is an address as a page shows it to whoever holds a link:
// a***@example.com.
func maskEmail(e string) string {
	at := strings.LastIndexByte(e, '@')
	if at < 1 {
		return ""
	}
	return e[:1] + "***" + e[at:]
}

// saleNotified handles the provider's notification of a sale's payment
// (believed only as far as the provider's own answer). Unknown payments
// are ErrNotFound.
func (s *Service) saleNotified(ctx context.Context, provider, externalID string) error {
	var id int64
	err := s.pool.QueryRow(ctx, `SELECT id FROM balance_sales WHERE provider = $1 AND external_id = $2`, provider, externalID).Scan(&id)
	if isNoRows(err) {
		return fmt.Errorf("payment %s: %w", externalID, ErrNotFound)
	}
	if err != nil {
		return dbErr(err)
	}
	if !s.noticeDue(ctx, "balance_sales", id) {
		return nil
	}
	_, err = s.checkSale(ctx, id)
	return err
}

// refundSale asks the provider for a sale's refund (decided, with its
// amount and key, in the transaction that wrote the balance's refund
// entry), and records it done when the provider says so. A refund the
// provider answered is read by its id from then on; one it never
// answered (or one a provider cannot read by its id) is asked again under
// its key only within the provider's memory of the key (refundKeyLife):
// past it, it is looked for among the payment's refunds at the provider
// (findSaleRefund), and asked under a new key only if it is not there. A
// refund the provider cancelled is not asked again by itself: the sale
// owes it, and a person sees why (RetrySaleRefund asks anew).
func (s *Service) refundSale(ctx context.Context, x *saleState) error {
	cctx, cancel := context.WithTimeout(ctx, providerCall)
	defer cancel()
	var r *psp.Refund
	var err error
	read := false // read by its id
	if x.refundID != "" {
		r, err = psp.GetRefund(cctx, s.psp, x.refundID)
		read = !errors.Is(err, psp.ErrCannotGetRefund)
	}
	switch {
	case read:
	case s.now().Before(x.refundAskedAt.Add(refundKeyLife)):
		// (Asked again under its key, the provider answers with the refund
		// it made under it, if it did.)
		r, err = s.askRefund(cctx, x)
	default:
		r, err = s.findSaleRefund(cctx, x)
	}
	switch {
	case errors.Is(err, errRefundKeyMoved), errors.Is(err, errRefundLater):
		// Another path moved the refund on, or a POST under its key may
		// still land: the next check reads it again.
		s.saleUnchanged(ctx, x)
		return nil
	case refundForAPerson(err):
		s.saleCheckFailed(ctx, x, err)
		return fmt.Errorf("balance sale %d: %v: %w", x.id, err, ErrConflict)
	case err != nil:
		s.saleCheckFailed(ctx, x, err)
		return fmt.Errorf("the payment provider did not answer: %w", ErrUnavailable)
	}
	if r.ID != "" && r.ID != x.refundID {
		if _, err := s.pool.Exec(ctx, `UPDATE balance_sales SET refund_id = $3 WHERE id = $1 AND refund_key = $2`, x.id, x.refundKey, r.ID); err != nil {
			return fmt.Errorf("balance sale %d: %w", x.id, dbErr(err))
		}
	}
	switch r.Status {
	case "succeeded":
		_, err := s.saleRefundMade(ctx, s.pool, x.id, x.refundKey)
		return err
	case "canceled":
		// The refund entry stands (the balance was paid out of the
		// ledger): the money is owed still, and a person sees why. The
		// sweep leaves it.
		s.log.Warn("balance sale: refund", "sale", x.id, "refund", r.ID, "err", refundCancelled)
		if _, err := s.pool.Exec(ctx, `UPDATE balance_sales SET last_error = $2, next_check_at = 'infinity', updated_at = now()
			WHERE id = $1 AND status = 'refunding' AND refund_key = $3`, x.id, refundCancelled, x.refundKey); err != nil {
			return fmt.Errorf("balance sale %d: %w", x.id, dbErr(err))
		}
		return fmt.Errorf("balance sale %d: %s: %w", x.id, refundCancelled, ErrConflict)
	}
	s.saleUnchanged(ctx, x)
	return nil
}

// askRefund asks the provider for x's refund under its key, the POST
// recorded first (claimRefundPost: errRefundKeyMoved, and nothing asked,
// when the key moved on or is nearly forgotten).
func (s *Service) askRefund(ctx context.Context, x *saleState) (*psp.Refund, error) {
	if err := s.claimRefundPost(ctx, "balance_sales", x.id, x.refundKey); err != nil {
		return nil, err
	}
	return s.postRefund(ctx, x)
}

// postRefund is the POST of x's refund under its key (recorded by the
// caller: claimRefundPost, or the key's renewal).
func (s *Service) postRefund(ctx context.Context, x *saleState) (*psp.Refund, error) {
	var receipt *psp.Receipt
	if x.receipt != nil {
		var r psp.Receipt
		if err := json.Unmarshal(x.receipt, &r); err != nil {
			return nil, fmt.Errorf("balance sale %d: receipt: %w", x.id, err)
		}
		receipt = refundReceipt(&r, Money(x.refundAmount))
	}
	return s.psp.Refund(ctx, x.refundKey, x.externalID, x.refundAmount, x.currency, receipt)
}

// renewRefundKey gives x's refund, cancelled by the provider, a key of its
// own, asked from now (nothing posted under it yet), its checks starting
// over, in one statement: the one before it is not asked again. (A POST under the old key still on its way is answered
// with the cancelled refund: it is made only while the provider remembers
// the key, and takes far less than the margin left.)
func (s *Service) renewRefundKey(ctx context.Context, x *saleState) error {
	key := fmt.Sprintf("sale-refund-%d-%d", x.id, s.now().UnixMilli())
	tag, err := s.pool.Exec(ctx, `UPDATE balance_sales SET refund_key = $3, refund_id = NULL, refund_asked_at = $4, refund_posted_at = NULL,
		next_check_at = $4, checks = 0, last_error = '', updated_at = now() WHERE id = $1 AND status = 'refunding' AND refund_key = $2`,
		x.id, x.refundKey, key, s.now())
	if err != nil {
		return fmt.Errorf("balance sale %d: %w", x.id, dbErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("balance sale %d: its refund moved meanwhile: %w", x.id, ErrConflict)
	}
	x.refundKey, x.refundID, x.refundAskedAt = key, "", s.now()
	return nil
}

// findSaleRefund looks for x's refund at the provider (lookForRefund:
// after the refunds the sale made before it), and asks for it under a new
// key when it was not made.
func (s *Service) findSaleRefund(ctx context.Context, x *saleState) (*psp.Refund, error) {
	key := fmt.Sprintf("sale-refund-%d-%d", x.id, s.now().UnixMilli())
	r, renewed, err := s.lookForRefund(ctx, owedRefund{table: "balance_sales", id: x.id, paymentID: x.externalID,
		key: x.refundKey, refundID: x.refundID, accounted: x.refunded, amount: x.refundAmount}, key)
	if !renewed {
		return r, err
	}
	x.refundKey, x.refundID, x.refundAskedAt = key, "", s.now()
	return s.postRefund(ctx, x)
}

// RetrySaleRefund asks the provider again for the refund it cancelled of
// the sale of balance balanceID (staff of the salon), or for one the
// checks left to a person (RefundToCheck: staff found at the provider
// that it was not made), under a new key. A refund the provider has
// made after all (its word had not reached the sale yet) is recorded
// instead, and the sale returned refunded; one the provider's payment
// shows refunded otherwise (made there by hand) is not asked again, as
// a second refund would be paid too: staff record it (MarkSaleRefunded).
// Errors: ErrForbidden, ErrNotFound, ErrConflict (no refund is owed, the
// one asked is on its way, or the payment shows a refund already),
// ErrUnavailable (the provider did not answer, or reads no refund by its
// id).
func (s *Service) RetrySaleRefund(ctx context.Context, salonID, balanceID int64) (*BalanceSale, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	var id int64
	err := s.pool.QueryRow(ctx, `SELECT id FROM balance_sales WHERE salon_id = $1 AND balance_id = $2`, salonID, balanceID).Scan(&id)
	if isNoRows(err) {
		return nil, fmt.Errorf("balance %d: %w", balanceID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("balance %d: %w", balanceID, dbErr(err))
	}
	x, err := s.readSale(ctx, s.pool, id, "")
	if err != nil {
		return nil, err
	}
	if x.status != PayRefunding {
		return nil, conflict("no refund is owed")
	}
	if s.psp == nil || x.provider != s.psp.Name() || !providerCallsAllowed(ctx) {
		return nil, fmt.Errorf("balance sale %d: the payment provider is not reachable from here: %w", id, ErrUnavailable)
	}
	cctx, cancel := context.WithTimeout(ctx, providerCall)
	r, err := s.refundState(cctx, x)
	cancel()
	if err != nil {
		return nil, err
	}
	switch {
	case r != nil && r.Status == "succeeded":
		if _, err := s.saleRefundMade(ctx, s.pool, id, x.refundKey); err != nil {
			return nil, err
		}
		return s.sale(ctx, `s.id = $1`, id)
	case r != nil && r.Status == "canceled":
	case r == nil && refundToCheck(x.status, x.lastError):
		// The provider could not tell whether it was made: the person who
		// checked there says it was not.
	default:
		return nil, conflict("the refund is on its way: the provider has not cancelled it")
	}
	// (What the sale's earlier refunds paid back is all the payment may
	// show refunded.)
	if err := s.refundNotMadeElsewhere(ctx, x.provider, x.externalID, Money(x.refunded)); err != nil {
		return nil, fmt.Errorf("balance sale %d: %w", id, err)
	}
	if err := s.renewRefundKey(ctx, x); err != nil {
		return nil, err
	}
	if err := s.refundSale(ctx, x); err != nil && !errors.Is(err, ErrUnavailable) {
		return nil, err
	}
	return s.sale(ctx, `s.id = $1`, id)
}

// saleRefund is what recording a sale's refund reads of it.
type saleRefund struct {
	id                         int64
	status                     PaymentStatus
	lastError, key, kind, hint string
	provider, paymentID        string
	amount, before             Money // the refund's, and what the refunds before it made
	posted                     *time.Time
}

// read reads the refund of the sale of balance balanceID of the salon
// (lock: "" or a locking clause).
func (r *saleRefund) read(ctx context.Context, q querier, salonID, balanceID int64, lock string) error {
	err := q.QueryRow(ctx, `SELECT s.id, s.status, s.last_error, COALESCE(s.refund_key, ''), s.kind, COALESCE(b.code_hint, ''),
		    s.provider, COALESCE(s.external_id, ''), COALESCE(s.refund_amount, 0), s.refunded, s.refund_posted_at
		FROM balance_sales s LEFT JOIN balances b ON b.id = s.balance_id
		WHERE s.salon_id = $1 AND s.balance_id = $2 `+lock, salonID, balanceID).
		Scan(&r.id, &r.status, &r.lastError, &r.key, &r.kind, &r.hint, &r.provider, &r.paymentID, &r.amount, &r.before, &r.posted)
	if isNoRows(err) {
		return fmt.Errorf("balance %d: %w", balanceID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("balance %d: %w", balanceID, dbErr(err))
	}
	return nil
}

// MarkSaleRefunded records the refund of the sale of balance balanceID as
// made, as staff say having found it made at the provider, when the
// checks will not: the provider cancelled it (and it was made there
// since, by hand), or they left it to a person (RefundToCheck). Only
// what the provider's payment shows is recorded (refundShown). Nothing is
// asked of the provider; the sale is refunded, with an audit row naming
// who said so. Admins and owners. Errors: ErrForbidden, ErrNotFound,
// ErrConflict (no refund is owed, the checks follow it, it was asked of
// the provider a moment ago, or the provider's payment does not show it),
// ErrUnavailable (the provider did not answer).
func (s *Service) MarkSaleRefunded(ctx context.Context, salonID, balanceID int64) (*BalanceSale, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	caller, err := s.asked(ctx)
	if err != nil {
		return nil, err
	}
	// The provider's payment must show it, after what the sale's refunds
	// before it made: read first, outside the transaction, then recorded
	// only if the refund is still the one read.
	var id int64
	var made Money // the refund recorded
	var seen saleRefund
	if err := seen.read(ctx, s.pool, salonID, balanceID, ""); err != nil {
		return nil, err
	}
	if err := s.refundRecordable(seen.status, seen.lastError, seen.posted); err != nil {
		return nil, err
	}
	shown, err := s.refundShown(ctx, seen.provider, seen.paymentID, seen.before, seen.amount)
	if err != nil {
		return nil, fmt.Errorf("balance %d: %w", balanceID, err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var now saleRefund
		if err := now.read(ctx, tx, salonID, balanceID, "FOR UPDATE OF s"); err != nil {
			return err
		}
		if err := s.refundRecordable(now.status, now.lastError, now.posted); err != nil {
			return err
		}
		if now.key != seen.key {
			return conflict("the refund moved on meanwhile: look at it again")
		}
		id = now.id
		// Made by hand for more than was owed (the whole price for the
		// visits left, say): what the payment shows is recorded, so that
		// the sale says what the provider paid back.
		if _, err := tx.Exec(ctx, `UPDATE balance_sales SET refund_amount = GREATEST(refund_amount, LEAST($2 - refunded, price - refunded))
			WHERE id = $1`, id, shown); err != nil {
			return err
		}
		var err error
		if made, err = s.saleRefundMade(ctx, tx, id, now.key); err != nil || made == 0 {
			return cmp.Or(err, conflict("the refund moved on meanwhile: look at it again"))
		}
		_, err = tx.Exec(ctx, `INSERT INTO audit_log (salon_id, actor, action, entity, entity_id, old, new)
			VALUES ($1, $2, 'refund_recorded', 'balance', $3, jsonb_build_object('kind', $4::text, 'code_hint', $5::text, 'payment', 'refunding'),
			        jsonb_build_object('kind', $4::text, 'code_hint', $5::text, 'payment', 'refunded'))`,
			salonID, cmpOr(caller.auditName(), "system"), balanceID, now.kind, now.hint)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("balance %d: %w", balanceID, dbErr(err))
	}
	return s.sale(ctx, `s.id = $1`, id)
}

// refundState is the provider's refund of x as it stands, read by its id
// (nil: none answered yet). A provider that reads no refund by its id is
// ErrUnavailable: a read is never made by asking for the refund again.
func (s *Service) refundState(ctx context.Context, x *saleState) (*psp.Refund, error) {
	if x.refundID == "" {
		return nil, nil
	}
	r, err := psp.GetRefund(ctx, s.psp, x.refundID)
	if errors.Is(err, psp.ErrCannotGetRefund) {
		return nil, fmt.Errorf("balance sale %d: the payment provider reads no refund by its id: %w", x.id, ErrUnavailable)
	}
	if err != nil {
		return nil, fmt.Errorf("the payment provider did not answer: %w", ErrUnavailable)
	}
	return r, nil
}

// refundSaleOf, in the transaction of a balance's refund entry, turns the
// refund of what is left of balance b into the refund of its sale's money,
// if it was sold online: the left share of the price (a certificate: what
// is left; a package: the price of the visits left). A sale refunded
// before (what a booking held then came back since, its booking
// cancelled) is refunded again, a part of its own under a key of its own;
// each part is the share of every unit refunded so far less what the
// parts before it paid back, so that they add up to the price. It returns
// the sale to follow up (0: none).
func refundSaleOf(ctx context.Context, tx pgx.Tx, b *Balance, now time.Time) (int64, Money, error) {
	var id, price, units, refunded, gone int64
	var parts int
	var status PaymentStatus
	err := tx.QueryRow(ctx, `SELECT id, price, units, refunded, refunds, status FROM balance_sales WHERE balance_id = $1 FOR UPDATE`, b.ID).
		Scan(&id, &price, &units, &refunded, &parts, &status)
	if isNoRows(err) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	switch status {
	case PayCompleted, PayRefunded:
	case PayRefunding:
		return 0, 0, conflict("a refund of it is on its way: what is left can be refunded once it is made")
	default:
		return 0, 0, conflict("its payment is not complete")
	}
	// Every unit refunded so far, this refund's (its entry written) with
	// the rest.
	var used saleUse
	if err := tx.QueryRow(ctx, `SELECT (SELECT COALESCE(-sum(delta), 0) FROM balance_entries WHERE balance_id = $1 AND type = 'refund'), `+saleUseSQL("$2"),
		b.ID, id).Scan(&gone, &used.spent, &used.settled, &used.priced); err != nil {
		return 0, 0, err
	}
	amount := saleRefundShare(price, units, refunded, gone, used)
	if amount <= 0 {
		return 0, 0, nil
	}
	key := "sale-refund-" + strconv.FormatInt(id, 10)
	if parts > 0 {
		key += "-part-" + strconv.Itoa(parts)
	}
	_, err = tx.Exec(ctx, `UPDATE balance_sales SET status = 'refunding', refund_amount = $2, refund_key = $3, next_check_at = $4,
		refund_asked_at = $4, refund_id = NULL, refund_posted_at = NULL, checks = 0, last_error = '', updated_at = now() WHERE id = $1`,
		id, amount, key, now)
	return id, Money(amount), err
}

// saleRefundShare is what a sale of units at price pays back when gone
// units of it are refunded in all, refunded of its price paid back before:
// the share of the price of every unit refunded, less what was (the parts
// add up to the price). A refund that leaves nothing of the sale unspent
// or unrefunded, once every spend's settlement is priced, pays back the
// rest of the price instead: the settlements and the refunds add up to
// what was paid (a package of 3 for 10000.00, one visit settled at
// 3333.33: the two left are 6666.67, not 6666.66).
func saleRefundShare(price, units, refunded, gone int64, used saleUse) int64 {
	if units <= 0 {
		return 0
	}
	share := min(price*min(gone, units)/units, price) - refunded
	if used.priced && used.spent+gone >= units {
		share = max(share, price-used.settled-refunded)
	}
	return share
}

// saleUse is what the spends of a sale sold with a receipt used of it:
// spent units, settled of its price (their settlements, priced), priced
// when every settlement is (the sweep prices them in their order).
type saleUse struct {
	spent, settled int64
	priced         bool
}

// saleUseSQL selects the saleUse of the sale whose id is the expression
// sale.
func saleUseSQL(sale string) string {
	return `(SELECT COALESCE(sum(units), 0) FROM balance_settlements WHERE sale_id = ` + sale + `),
	(SELECT COALESCE(sum(amount), 0) FROM balance_settlements WHERE sale_id = ` + sale + `),
	NOT EXISTS (SELECT 1 FROM balance_settlements WHERE sale_id = ` + sale + ` AND amount IS NULL)`
}

// saleRefundMade records the refund of sale id asked under key as made
// (the provider says it succeeded): what it paid back is added to the
// sale's, the sale is refunded, and the buyer's e-mail of it is queued
// (SaleRefundMailArgs). It returns that refund's amount (0: the refund
// had moved on, nothing recorded).
func (s *Service) saleRefundMade(ctx context.Context, q querier, id int64, key string) (Money, error) {
	var amount int64
	err := q.QueryRow(ctx, `WITH u AS (UPDATE balance_sales SET status = 'refunded', refunded = LEAST(refunded + refund_amount, price),
		    refunds = refunds + 1, last_error = '', next_check_at = $3, checks = 0, updated_at = now()
		    WHERE id = $1 AND status = 'refunding' AND refund_key = $2 RETURNING id, salon_id, email, refund_amount, refunds, balance_id, refunded, price),
		j AS (`+saleRefundMailSQL+`)
		SELECT refund_amount FROM u`,
		id, key, s.now().Add(checkDelay(PayRefunded, false, 0))).Scan(&amount)
	if isNoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("balance sale %d: %w", id, dbErr(err))
	}
	return Money(amount), nil
}

// sweepSales follows up the sales whose time came (SweepPayments runs it):
// as the payments' sweep, shared by replicas with SKIP LOCKED and a lease.
func (s *Service) sweepSales(ctx context.Context) int {
	seen := []int64{}
	for len(seen) < sweepBatch && ctx.Err() == nil {
		now := s.now()
		var id int64
		err := s.pool.QueryRow(ctx, `UPDATE balance_sales SET lease_until = $2
			WHERE id = (SELECT id FROM balance_sales
			            WHERE status IN ('registering', 'registered', 'unknown', 'authorized', 'refunding')
			              AND next_check_at <= $1 AND (lease_until IS NULL OR lease_until < $1) AND id <> ALL($3)
			            ORDER BY next_check_at LIMIT 1 FOR UPDATE SKIP LOCKED)
			RETURNING id`, now, now.Add(paymentLease), seen).Scan(&id)
		if err != nil {
			if !isNoRows(err) {
				s.log.Warn("balance sales sweep", "err", err)
			}
			break
		}
		seen = append(seen, id)
		if _, err := s.checkSale(ctx, id); err != nil && !errors.Is(err, ErrUnavailable) {
			s.log.Warn("balance sales sweep", "sale", id, "err", err)
		}
		_, _ = s.pool.Exec(context.WithoutCancel(ctx), `UPDATE balance_sales SET lease_until = NULL WHERE id = $1`, id)
	}
	return len(seen)
}

// BalanceSales returns the salon's latest sales, newest first (staff).
func (s *Service) BalanceSales(ctx context.Context, salonID int64) ([]BalanceSale, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+saleColumns+saleFrom+`WHERE s.salon_id = $1 ORDER BY s.id DESC LIMIT $2`, salonID, maxBalanceRows)
	if err != nil {
		return nil, fmt.Errorf("balance sales: %w", dbErr(err))
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (BalanceSale, error) {
		x, err := scanSale(r)
		if err != nil {
			return BalanceSale{}, err
		}
		return *x, nil
	})
}

// SaleOfBalance returns the online sale that made a balance (staff).
// Errors: ErrNotFound (sold in the salon), ErrForbidden.
func (s *Service) SaleOfBalance(ctx context.Context, salonID, balanceID int64) (*BalanceSale, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	return s.sale(ctx, `s.salon_id = $1 AND s.balance_id = $2`, salonID, balanceID)
}

// ResendBalanceCode gives a balance sold online a new code and e-mails it
// to its buyer (staff: when the first e-mail did not go, or the code was
// lost). The old code stops working. Errors: ErrNotFound, ErrForbidden,
// ErrConflict (nothing left on it).
func (s *Service) ResendBalanceCode(ctx context.Context, salonID, balanceID int64) (*BalanceSale, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	var m SaleMail
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var remaining int64
		var expires *time.Time
		var services []int64
		err := tx.QueryRow(ctx, `SELECT s.id, s.email, s.lang, b.kind, b.remaining, b.expires_on, b.service_ids, COALESCE(c.phone, '')
			FROM balance_sales s JOIN balances b ON b.id = s.balance_id
			LEFT JOIN clients c ON c.salon_id = b.salon_id AND c.id = b.client_id
			WHERE s.salon_id = $1 AND s.balance_id = $2 FOR UPDATE OF b, s`,
			salonID, balanceID).Scan(&m.SaleID, &m.To, &m.Lang, &m.Kind, &remaining, &expires, &services, &m.Phone)
		if isNoRows(err) {
			return fmt.Errorf("balance %d: %w", balanceID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if remaining == 0 {
			return conflict("nothing is left on it")
		}
		if m.To == "" {
			return conflict("the buyer's e-mail was erased")
		}
		c, err := s.catalogAt(ctx, tx, salonID, 0)
		if err != nil {
			return err
		}
		m.Code = newBalanceCode()
		norm := normalizeCode(m.Code)
		if _, err := tx.Exec(ctx, `UPDATE balances SET code_hash = $2, code_hint = $3, code_locked_until = NULL WHERE id = $1`, balanceID, tokenHash(norm), norm[len(norm)-4:]); err != nil {
			return err
		}
		if err := forgetPhoneMisses(ctx, tx, balanceID); err != nil {
			return err
		}
		// The old code sealed for the return page opens nothing now.
		if _, err := tx.Exec(ctx, `UPDATE balance_sales SET code_sealed = NULL WHERE id = $1`, m.SaleID); err != nil {
			return err
		}
		m.BalanceID, m.Salon, m.Units = balanceID, c.salon, remaining
		if expires != nil {
			m.ValidUntil = DateOf(*expires)
		}
		for _, sid := range services {
			m.Services = append(m.Services, c.services[sid].Name)
		}
		if m.Lang == "" {
			m.Lang = c.salon.Locale
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resend balance code: %w", dbErr(err))
	}
	// The old code is dead: the new one goes, whatever happens to the
	// request meanwhile.
	s.mailSale(context.WithoutCancel(ctx), &m)
	return s.sale(context.WithoutCancel(ctx), `s.id = $1`, m.SaleID)
}

// ErrRenewedAlready: the form asking for a balance's new code made one
// already (RenewBalanceCode), shown then, once. It unwraps to ErrConflict.
var ErrRenewedAlready = fmt.Errorf("this form made a new code already: %w", ErrConflict)

// RenewBalanceCode gives a balance sold in the salon a new code, in place
// of one lost (its client lost the paper, or the page that showed it once
// was left before it was noted): the old code no longer pays. The new one
// is returned, to be shown this once. A balance bought online gets its
// new code by e-mail to its buyer (ResendBalanceCode). Staff (admins and
// owners); the audit log names who did it. key is the asking form's
// one-time key: the same key again makes no second code
// (ErrRenewedAlready). Errors: ErrNotFound, ErrConflict (nothing left on
// it, or bought online).
func (s *Service) RenewBalanceCode(ctx context.Context, salonID, balanceID int64, key string) (*Balance, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	var b *Balance
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		var lastKey string
		b, err = scanBalance(tx.QueryRow(ctx, `SELECT `+balanceColumns+`, COALESCE(code_key, '') FROM balances WHERE salon_id = $1 AND id = $2
			FOR UPDATE`, salonID, balanceID), &lastKey)
		if isNoRows(err) {
			return fmt.Errorf("balance %d: %w", balanceID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if key != "" && key == lastKey {
			return ErrRenewedAlready
		}
		var online bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM balance_sales WHERE salon_id = $1 AND balance_id = $2)`, salonID, balanceID).Scan(&online); err != nil {
			return err
		}
		switch {
		case online:
			return conflict("bought online: e-mail a new code to its buyer")
		case b.Remaining == 0:
			return conflict("nothing is left on it")
		}
		b.Code = newBalanceCode()
		norm := normalizeCode(b.Code)
		old := b.Hint
		b.Hint = norm[len(norm)-4:]
		// The new code is audited once, as what it is (below), not also
		// as a change of the row's columns.
		if _, err := tx.Exec(ctx, `SELECT set_config('salon.actor', '', true)`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE balances SET code_hash = $3, code_hint = $4, code_key = NULLIF($5, ''), code_locked_until = NULL
			WHERE salon_id = $1 AND id = $2`,
			salonID, balanceID, tokenHash(norm), b.Hint, key); err != nil {
			return err
		}
		if err := forgetPhoneMisses(ctx, tx, balanceID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT set_config('salon.actor', $1, true)`, callerOf(ctx).auditName()); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO audit_log (salon_id, actor, action, entity, entity_id, old, new)
			VALUES ($1, $2, 'code_renewed', 'balance', $3, jsonb_build_object('kind', $4::text, 'code_hint', $5::text),
			        jsonb_build_object('kind', $4::text, 'code_hint', $6::text))`,
			salonID, cmpOr(callerOf(ctx).auditName(), "system"), balanceID, b.Kind, old, b.Hint)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("renew balance code: %w", dbErr(err))
	}
	return b, nil
}

// saleAttentionAfter is how long a sale may be on its way (money held,
// an answer unknown, a refund asked) before a person is shown it.
const saleAttentionAfter = 15 * time.Minute

// SalesNeedingAttention returns the salon's online sales a person should
// look at (staff): money held or a create unanswered for longer than
// saleAttentionAfter, a refund not made, a code not e-mailed, or a
// provider's refusal; newest first. Errors: ErrForbidden.
func (s *Service) SalesNeedingAttention(ctx context.Context, salonID int64) ([]BalanceSale, error) {
	if err := authorize(ctx, salonID, RoleAdmin); err != nil {
		return nil, err
	}
	now := s.now()
	rows, err := s.pool.Query(ctx, `SELECT `+saleColumns+saleFrom+`WHERE s.salon_id = $1 AND (
		    (s.status IN ('registering', 'unknown', 'authorized', 'refunding') AND s.updated_at < $2)
		 OR (s.status IN ('authorized', 'refunding') AND s.last_error <> '')
		 OR (s.status = 'completed' AND s.mailed_at IS NULL AND (s.mail_error <> '' OR s.updated_at < $3)))
		ORDER BY s.id DESC LIMIT $4`, salonID, now.Add(-saleAttentionAfter), now.Add(-time.Minute), maxBalanceRows)
	if err != nil {
		return nil, fmt.Errorf("sales needing attention: %w", dbErr(err))
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (BalanceSale, error) {
		x, err := scanSale(r)
		if err != nil {
			return BalanceSale{}, err
		}
		return *x, nil
	})
}
