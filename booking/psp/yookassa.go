package psp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultYooKassaURL is YooKassa's API base.
const DefaultYooKassaURL = "https://api.yookassa.ru/v3"

// YooKassa speaks YooKassa API v3: HTTP Basic auth with the shop id and
// secret key, an Idempotence-Key header on every POST, payments created
// with capture: false and a redirect confirmation.
type YooKassa struct {
	BaseURL string // default DefaultYooKassaURL
	ShopID  string
	Secret  string
	Client  *http.Client // default: 15 s timeout
}

// Name implements Provider.
func (y *YooKassa) Name() string { return "yookassa" }

type ykAmount struct {
	Value    string `json:"value"`
	Currency string `json:"currency"`
}

type ykPayment struct {
	ID           string   `json:"id"`
	Status       Status   `json:"status"`
	Amount       ykAmount `json:"amount"`
	Refunded     ykAmount `json:"refunded_amount"`
	Confirmation struct {
		Type string `json:"type"`
		URL  string `json:"confirmation_url"`
	} `json:"confirmation"`
	Metadata map[string]string `json:"metadata"`
}

func (p *ykPayment) payment() (*Payment, error) {
	amount, err := minor(p.Amount.Value)
	if err != nil {
		return nil, fmt.Errorf("yookassa: amount %q: %w", p.Amount.Value, ErrUnknown)
	}
	refunded, _ := minor(p.Refunded.Value)
	return &Payment{ID: p.ID, Status: p.Status, Amount: amount, Currency: p.Amount.Currency,
		ConfirmationURL: p.Confirmation.URL, Refunded: refunded, Metadata: p.Metadata}, nil
}

// ykLocales are the languages of YooKassa's payment page, by ours
// (confirmation.locale, ISO/IEC 15897).
var ykLocales = map[string]string{"ru": "ru_RU", "en": "en_US"}

// Create implements Provider.
func (y *YooKassa) Create(ctx context.Context, key string, r CreateRequest) (*Payment, error) {
	confirmation := map[string]string{"type": "redirect", "return_url": r.ReturnURL}
	if l := ykLocales[r.Locale]; l != "" {
		confirmation["locale"] = l
	}
	body := map[string]any{
		"amount":       ykAmount{Value: major(r.Amount), Currency: r.Currency},
		"capture":      false,
		"confirmation": confirmation,
		"description":  r.Description,
		"metadata":     r.Metadata,
	}
	if r.Receipt != nil {
		body["receipt"] = r.Receipt.wire()
	}
	var p ykPayment
	if err := y.do(ctx, http.MethodPost, "/payments", key, body, &p); err != nil {
		return nil, err
	}
	return p.payment()
}

// Get implements Provider.
func (y *YooKassa) Get(ctx context.Context, id string) (*Payment, error) {
	var p ykPayment
	if err := y.do(ctx, http.MethodGet, "/payments/"+id, "", nil, &p); err != nil {
		return nil, err
	}
	return p.payment()
}

// List implements Lister: GET /payments?created_at.gte=...&limit=100, page
// by page with next_cursor.
func (y *YooKassa) List(ctx context.Context, since time.Time, cursor string) ([]Payment, string, error) {
	q := url.Values{"created_at.gte": {since.UTC().Format("2006-01-02T15:04:05.000Z")}, "limit": {"100"}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var page struct {
		Items      []ykPayment `json:"items"`
		NextCursor string      `json:"next_cursor"`
	}
	if err := y.do(ctx, http.MethodGet, "/payments?"+q.Encode(), "", nil, &page); err != nil {
		return nil, "", err
	}
	out := make([]Payment, 0, len(page.Items))
	for i := range page.Items {
		p, err := page.Items[i].payment()
		if err != nil {
			return nil, "", err
		}
		out = append(out, *p)
	}
	return out, page.NextCursor, nil
}

// Capture implements Provider.
func (y *YooKassa) Capture(ctx context.Context, key, id string, amount int64, currency string) (*Payment, error) {
	var p ykPayment
	if err := y.do(ctx, http.MethodPost, "/payments/"+id+"/capture", key,
		map[string]any{"amount": ykAmount{Value: major(amount), Currency: currency}}, &p); err != nil {
		return nil, err
	}
	return p.payment()
}

// Cancel implements Provider.
func (y *YooKassa) Cancel(ctx context.Context, key, id string) (*Payment, error) {
	var p ykPayment
	if err := y.do(ctx, http.MethodPost, "/payments/"+id+"/cancel", key, map[string]any{}, &p); err != nil {
		return nil, err
	}
	return p.payment()
}

// ykRefund is a refund as YooKassa sends it.
type ykRefund struct {
	ID        string   `json:"id"`
	Status    string   `json:"status"`
	Amount    ykAmount `json:"amount"`
	CreatedAt string   `json:"created_at"`
}

func (r *ykRefund) refund() *Refund {
	a, _ := minor(r.Amount.Value)
	at, _ := time.Parse(time.RFC3339Nano, r.CreatedAt)
	return &Refund{ID: r.ID, Status: r.Status, Amount: a, CreatedAt: at}
}

// Refund implements Provider.
func (y *YooKassa) Refund(ctx context.Context, key, paymentID string, amount int64, currency string, receipt *Receipt) (*Refund, error) {
	var r ykRefund
	body := map[string]any{"payment_id": paymentID, "amount": ykAmount{Value: major(amount), Currency: currency}}
	if receipt != nil {
		body["receipt"] = receipt.wire()
	}
	if err := y.do(ctx, http.MethodPost, "/refunds", key, body, &r); err != nil {
		return nil, err
	}
	return r.refund(), nil
}

// GetRefund implements RefundGetter: GET /refunds/{id}.
func (y *YooKassa) GetRefund(ctx context.Context, id string) (*Refund, error) {
	var r ykRefund
	if err := y.do(ctx, http.MethodGet, "/refunds/"+id, "", nil, &r); err != nil {
		return nil, err
	}
	return r.refund(), nil
}

// ListRefunds implements RefundLister: GET /refunds?payment_id=...&limit=100,
// page by page with next_cursor.
func (y *YooKassa) ListRefunds(ctx context.Context, paymentID, cursor string) ([]Refund, string, error) {
	q := url.Values{"payment_id": {paymentID}, "limit": {"100"}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var page struct {
		Items      []ykRefund `json:"items"`
		NextCursor string     `json:"next_cursor"`
	}
	if err := y.do(ctx, http.MethodGet, "/refunds?"+q.Encode(), "", nil, &page); err != nil {
		return nil, "", err
	}
	out := make([]Refund, 0, len(page.Items))
	for i := range page.Items {
		out = append(out, *page.Items[i].refund())
	}
	return out, page.NextCursor, nil
}

// do sends one request. Transport failures, timeouts and 5xx are
// ErrUnknown; other 4xx a *RejectedError; 404 on a GET a *RejectedError
// with code not_found.
func (y *YooKassa) do(ctx context.Context, method, path, key string, body, out any) error {
	base := strings.TrimRight(y.BaseURL, "/")
	if base == "" {
		base = DefaultYooKassaURL
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("yookassa: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return fmt.Errorf("yookassa: %w", err)
	}
	req.SetBasicAuth(y.ShopID, y.Secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotence-Key", key)
	}
	client := y.Client
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("yookassa %s %s: %v: %w", method, path, err, ErrUnknown)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("yookassa %s %s: %v: %w", method, path, err, ErrUnknown)
	}
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return fmt.Errorf("yookassa %s %s: %d: %w", method, path, resp.StatusCode, ErrUnknown)
	case resp.StatusCode >= 400:
		var e struct {
			Code        string `json:"code"`
			Description string `json:"description"`
		}
		_ = json.Unmarshal(raw, &e)
		if resp.StatusCode == http.StatusNotFound {
			e.Code = "not_found"
		}
		return &RejectedError{Code: e.Code, Message: e.Description}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("yookassa %s %s: %v: %w", method, path, err, ErrUnknown)
	}
	return nil
}

// major writes minor units as YooKassa's "500.00".
func major(v int64) string { return fmt.Sprintf("%d.%02d", v/100, v%100) }

// minor reads "500.00" (or "500", "500.5") as minor units.
func minor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, err
	}
	for len(frac) < 2 {
		frac += "0"
	}
	if len(frac) > 2 {
		return 0, errors.New("more than two decimals")
	}
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, err
	}
	return w*100 + f, nil
}

// SendReceipt implements Receipter: POST /receipts (a settlement receipt).
func (y *YooKassa) SendReceipt(ctx context.Context, key string, r Receipt) error {
	var out struct {
		ID string `json:"id"`
	}
	return y.do(ctx, http.MethodPost, "/receipts", key, r.wire(), &out)
}

// wire is the receipt as YooKassa's API takes it: amounts as {value,
// currency}.
func (r *Receipt) wire() map[string]any {
	items := make([]map[string]any, len(r.Items))
	for i, it := range r.Items {
		items[i] = map[string]any{"description": it.Description, "quantity": it.Quantity,
			"amount": ykAmount{Value: major(it.Amount), Currency: it.Currency}, "vat_code": it.VatCode,
			"payment_subject": it.PaymentSubject, "payment_mode": it.PaymentMode}
	}
	customer := map[string]string{}
	if r.Customer.Email != "" {
		customer["email"] = r.Customer.Email
	}
	if r.Customer.Phone != "" {
		customer["phone"] = r.Customer.Phone
	}
	out := map[string]any{"customer": customer, "items": items}
	if r.TaxSystem != 0 {
		out["tax_system_code"] = r.TaxSystem
	}
	if r.Type != "" {
		settlements := make([]map[string]any, len(r.Settlements))
		for i, st := range r.Settlements {
			settlements[i] = map[string]any{"type": st.Type, "amount": ykAmount{Value: major(st.Amount), Currency: st.Currency}}
		}
		out["type"], out["payment_id"], out["send"], out["settlements"] = r.Type, r.PaymentID, r.Send, settlements
	}
	return out
}
