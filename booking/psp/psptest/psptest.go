// Package psptest is a fake YooKassa (API v3) for tests: payments created
// with capture: false, idempotence keys, capture, cancel and refunds (read
// by id, listed by payment), the client's Pay and Decline, notifications
// to a webhook, and faults the tests control (delays, 500s, answers lost
// after the work was done). It counts every call and keeps the money's
// truth, which tests compare with the ledger. As YooKassa, a payment's
// refunded_amount counts only the refunds that succeeded: a pending one
// adds to it when it settles, a canceled one never.
package psptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"salon/booking/psp"
)

// Fault is what the server does to one call.
type Fault int

// Faults.
const (
	None   Fault = iota
	Error        // answer 500 before doing anything
	Lost         // do the work, then answer 500 (the answer is lost)
	Slow         // wait Delay before answering (the client may time out)
	Reject       // answer 400: the provider refuses
)

// Server is a fake YooKassa.
type Server struct {
	*httptest.Server
	ShopID, Secret string
	// Fault, when set, decides the fault of each call (method and path).
	Fault func(method, path string) Fault
	// Delay is how long a Slow call waits.
	Delay time.Duration
	// RefundsPending makes new refunds pending (as YooKassa's may be) until
	// SettleRefunds: meanwhile the payment's refunded_amount does not count
	// them (the refund list and GET /refunds/{id} show them).
	RefundsPending bool
	// RequireReceipts refuses a payment or a refund without a fiscal
	// receipt YooKassa would accept (54-FZ), as a shop with receipts on.
	RequireReceipts bool
	// RefundsCanceled makes new refunds canceled (as YooKassa's may be:
	// the shop's balance, the bank): nothing goes back.
	RefundsCanceled bool
	// Now is the fake's clock (nil: the time): an idempotence key is
	// remembered for psp.KeyWindow of it, then a call under it is new.
	Now func() time.Time

	mu       sync.Mutex
	payments map[string]*payment
	byKey    map[string]keyed // idempotence key -> payment or refund id
	refunds  map[string]*refund
	calls    map[string]int // "POST /payments" -> count
	receipts []Receipt
	seq      int
}

// Receipt is a fiscal receipt the fake accepted: with a payment, a refund,
// or on its own (a settlement), once per idempotence key.
type Receipt struct {
	Kind      string // payment, refund, settlement
	PaymentID string
	Body      map[string]any
}

// Receipts returns the receipts accepted so far.
func (s *Server) Receipts() []Receipt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Receipt(nil), s.receipts...)
}

type payment struct {
	ID          string            `json:"id"`
	Status      string            `json:"status"`
	Amount      amount            `json:"amount"`
	Refunded    amount            `json:"refunded_amount"`
	Description string            `json:"description"`
	Metadata    map[string]string `json:"metadata"`
	Paid        bool              `json:"paid"`
	CreatedAt   string            `json:"created_at"`
	Captured    int64             `json:"-"`
	ReturnURL   string            `json:"-"`
	Locale      string            `json:"-"` // confirmation.locale, as asked
	Confirm     struct {
		Type string `json:"type"`
		URL  string `json:"confirmation_url,omitempty"`
	} `json:"confirmation"`
}

// keyed is what an idempotence key made, and when.
type keyed struct {
	id string
	at time.Time
}

// made is what key made within the window.
func (s *Server) made(key string) (string, bool) {
	k, ok := s.byKey[key]
	if !ok || !s.now().Before(k.at.Add(psp.KeyWindow)) {
		return "", false
	}
	return k.id, true
}

func (s *Server) remember(key, id string) { s.byKey[key] = keyed{id: id, at: s.now()} }

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

type refund struct {
	ID        string `json:"id"`
	PaymentID string `json:"payment_id"`
	Status    string `json:"status"`
	Amount    amount `json:"amount"`
	CreatedAt string `json:"created_at"`
	seq       int    // the order of creation
}

type amount struct {
	Value    string `json:"value"`
	Currency string `json:"currency"`
}

// New starts a fake YooKassa; it stops when the test ends.
func New(t interface{ Cleanup(func()) }) *Server {
	s := &Server{ShopID: "shop-1", Secret: "test-secret", payments: map[string]*payment{}, byKey: map[string]keyed{},
		refunds: map[string]*refund{}, calls: map[string]int{}, Delay: 3 * time.Second}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Calls returns how many times "METHOD /path-pattern" was called
// (patterns: POST /payments, GET /payments (the list), GET /payments/{id}, POST /payments/{id}/capture,
// POST /payments/{id}/cancel, POST /refunds, GET /refunds (the list of a payment's), GET /refunds/{id}).
func (s *Server) Calls(what string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[what]
}

// Payments returns how many payments exist.
func (s *Server) Payments() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.payments)
}

// Refunds returns how many refunds the fake made, whatever became of them
// (pending, succeeded or canceled): each is a refund the shop asked for.
func (s *Server) Refunds() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.refunds)
}

// Totals returns the money captured and refunded (by refunds that
// succeeded), in minor units, over every payment: the truth the ledger
// must equal.
func (s *Server) Totals() (captured, refunded int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.payments {
		captured += p.Captured
		refunded += minor(p.Refunded.Value)
	}
	return captured, refunded
}

// Held returns the money authorised and neither captured nor released, in
// minor units: what a client has held at the provider.
func (s *Server) Held() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, p := range s.payments {
		if p.Status == "waiting_for_capture" {
			n += minor(p.Amount.Value)
		}
	}
	return n
}

// Status returns a payment's status ("" when there is none).
func (s *Server) Status(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.payments[id]; ok {
		return p.Status
	}
	return ""
}

// Description returns what a payment's payer reads of it ("" when there
// is no such payment).
func (s *Server) Description(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.payments[id]; ok {
		return p.Description
	}
	return ""
}

// Locale returns the language a payment's page was asked in
// (confirmation.locale: "ru_RU", "en_US", "" when not asked).
func (s *Server) Locale(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.payments[id]; ok {
		return p.Locale
	}
	return ""
}

// IDs returns every payment id.
func (s *Server) IDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id := range s.payments {
		out = append(out, id)
	}
	return out
}

// SettleRefunds makes every pending refund succeeded (the money reached
// the client): its payment's refunded_amount counts it from now.
func (s *Server) SettleRefunds() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.refunds {
		if r.Status == "pending" {
			r.Status = "succeeded"
			p := s.payments[r.PaymentID]
			p.Refunded.Value = majorOf(minor(p.Refunded.Value) + minor(r.Amount.Value))
		}
	}
}

// Pay is the client paying: the payment is authorized (waiting_for_capture).
func (s *Server) Pay(id string) bool { return s.move(id, "pending", "waiting_for_capture") }

// Decline is the client (or the bank) declining: the payment is canceled.
func (s *Server) Decline(id string) bool { return s.move(id, "pending", "canceled") }

// Expire is an authorization that ran out at the provider: canceled.
func (s *Server) Expire(id string) bool { return s.move(id, "waiting_for_capture", "canceled") }

// ExpireUnpaid is the provider's own time for unpaid payments running out
// (YooKassa cancels a pending payment nobody paid): every pending payment
// is canceled. It returns how many.
func (s *Server) ExpireUnpaid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.payments {
		if p.Status == "pending" {
			p.Status, p.Confirm.URL = "canceled", ""
			n++
		}
	}
	return n
}

func (s *Server) move(id, from, to string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[id]
	if !ok || p.Status != from {
		return false
	}
	p.Status = to
	p.Paid = to == "waiting_for_capture"
	p.Confirm.URL = ""
	return true
}

// Notify posts a notification about payment id to url, as YooKassa does.
func (s *Server) Notify(url, id string) (int, error) {
	s.mu.Lock()
	p, ok := s.payments[id]
	var body []byte
	if ok {
		event := "payment." + p.Status
		body, _ = json.Marshal(map[string]any{"type": "notification", "event": event, "object": p})
	}
	s.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("no payment %s", id)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	user, pass, ok := r.BasicAuth()
	if !ok || user != s.ShopID || pass != s.Secret {
		writeErr(w, 401, "invalid_credentials", "Basic auth failed")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	pattern := r.Method + " /" + parts[0]
	if len(parts) > 1 {
		pattern += "/{id}"
	}
	if len(parts) > 2 {
		pattern += "/" + parts[2]
	}
	s.mu.Lock()
	s.calls[pattern]++
	s.mu.Unlock()
	fault := None
	if s.Fault != nil {
		fault = s.Fault(r.Method, pattern)
	}
	switch fault {
	case Error:
		writeErr(w, 500, "internal_server_error", "injected")
		return
	case Reject:
		writeErr(w, 400, "invalid_request", "refused")
		return
	case Slow:
		select {
		case <-time.After(s.Delay):
		case <-r.Context().Done():
			return
		}
	}
	var body map[string]any
	if r.Method == http.MethodPost {
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		if r.Header.Get("Idempotence-Key") == "" {
			writeErr(w, 400, "invalid_request", "Idempotence-Key is required")
			return
		}
	}
	key := r.Header.Get("Idempotence-Key")
	var status int
	var out any
	switch pattern {
	case "GET /payments":
		status, out = s.list(r.URL.Query())
	case "GET /refunds":
		status, out = s.listRefunds(r.URL.Query())
	default:
		status, out = s.handle(r.Method, pattern, parts, key, body)
	}
	if fault == Lost {
		writeErr(w, 500, "internal_server_error", "the answer was lost")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}

func (s *Server) handle(method, pattern string, parts []string, key string, body map[string]any) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch pattern {
	case "POST /payments":
		if id, ok := s.made(key); ok {
			return 200, s.payments[id]
		}
		a, _ := body["amount"].(map[string]any)
		if capture, _ := body["capture"].(bool); capture {
			return 400, errBody("invalid_request", "this fake takes two-stage payments only")
		}
		r, hasReceipt := body["receipt"].(map[string]any)
		if s.RequireReceipts || hasReceipt {
			if why := checkReceipt(r, minor(str(a["value"])), false); why != "" {
				return 400, errBody("invalid_request", "receipt: "+why)
			}
		}
		s.seq++
		p := &payment{ID: fmt.Sprintf("pay-%04d", s.seq), Status: "pending", Amount: amount{Value: str(a["value"]), Currency: str(a["currency"])},
			Refunded: amount{Value: "0.00", Currency: str(a["currency"])}, Description: str(body["description"]), Metadata: map[string]string{}}
		if md, ok := body["metadata"].(map[string]any); ok {
			for k, v := range md {
				p.Metadata[k] = str(v)
			}
		}
		if c, ok := body["confirmation"].(map[string]any); ok {
			p.ReturnURL = str(c["return_url"])
			switch l := str(c["locale"]); l {
			case "", "ru_RU", "en_US":
				p.Locale = l
			default:
				return 400, errBody("invalid_request", "confirmation.locale: "+l)
			}
		}
		p.CreatedAt = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		p.Confirm.Type = "redirect"
		p.Confirm.URL = s.URL + "/pay/" + p.ID
		s.payments[p.ID] = p
		s.remember(key, p.ID)
		if hasReceipt {
			s.receipts = append(s.receipts, Receipt{Kind: "payment", PaymentID: p.ID, Body: r})
		}
		return 200, p
	case "GET /payments/{id}":
		p, ok := s.payments[parts[1]]
		if !ok {
			return 404, errBody("not_found", "no such payment")
		}
		return 200, p
	case "POST /payments/{id}/capture":
		p, ok := s.payments[parts[1]]
		if !ok {
			return 404, errBody("not_found", "no such payment")
		}
		if id, ok := s.made(key); ok && id == p.ID+"/capture" || p.Status == "succeeded" {
			return 200, p
		}
		if p.Status != "waiting_for_capture" {
			return 400, errBody("invalid_request", "payment is "+p.Status)
		}
		p.Status, p.Captured = "succeeded", minor(p.Amount.Value)
		s.remember(key, p.ID+"/capture")
		return 200, p
	case "POST /payments/{id}/cancel":
		p, ok := s.payments[parts[1]]
		if !ok {
			return 404, errBody("not_found", "no such payment")
		}
		if p.Status == "canceled" {
			return 200, p
		}
		if p.Status != "waiting_for_capture" {
			return 400, errBody("invalid_request", "payment is "+p.Status)
		}
		p.Status, p.Paid = "canceled", false
		return 200, p
	case "GET /refunds/{id}":
		rf, ok := s.refunds[parts[1]]
		if !ok {
			return 404, errBody("not_found", "no such refund")
		}
		return 200, rf
	case "POST /refunds":
		if id, ok := s.made(key); ok {
			return 200, s.refunds[id]
		}
		p, ok := s.payments[str(body["payment_id"])]
		if !ok {
			return 404, errBody("not_found", "no such payment")
		}
		a, _ := body["amount"].(map[string]any)
		v := minor(str(a["value"]))
		// Refused beyond what the refunds that succeeded left: pending
		// ones are not counted against it, so a refund asked twice while
		// the first is pending shows as two refunds (Refunds, Totals once
		// settled), not as one refused.
		if p.Status != "succeeded" || minor(p.Refunded.Value)+v > p.Captured {
			return 400, errBody("invalid_request", "cannot refund")
		}
		r, hasReceipt := body["receipt"].(map[string]any)
		if s.RequireReceipts || hasReceipt {
			if why := checkReceipt(r, v, false); why != "" {
				return 400, errBody("invalid_request", "receipt: "+why)
			}
			s.receipts = append(s.receipts, Receipt{Kind: "refund", PaymentID: p.ID, Body: r})
		}
		s.seq++
		rf := &refund{ID: fmt.Sprintf("ref-%04d", s.seq), PaymentID: p.ID, Status: "succeeded", Amount: amount{Value: str(a["value"]), Currency: p.Amount.Currency},
			CreatedAt: s.now().UTC().Format("2006-01-02T15:04:05.000Z"), seq: s.seq}
		switch {
		case s.RefundsCanceled:
			rf.Status = "canceled"
		case s.RefundsPending:
			rf.Status = "pending"
		}
		if rf.Status == "succeeded" {
			p.Refunded.Value = majorOf(minor(p.Refunded.Value) + v)
		}
		s.refunds[rf.ID] = rf
		s.remember(key, rf.ID)
		return 200, rf
	case "POST /receipts":
		if id, ok := s.made(key); ok {
			return 200, map[string]any{"id": id, "status": "succeeded"}
		}
		p, ok := s.payments[str(body["payment_id"])]
		if !ok {
			return 400, errBody("invalid_request", "receipt: no payment "+str(body["payment_id"]))
		}
		if p.Status != "succeeded" {
			return 400, errBody("invalid_request", "receipt: the payment is "+p.Status)
		}
		if why := checkReceipt(body, -1, true); why != "" {
			return 400, errBody("invalid_request", "receipt: "+why)
		}
		s.seq++
		id := fmt.Sprintf("rct-%04d", s.seq)
		s.remember(key, id)
		s.receipts = append(s.receipts, Receipt{Kind: "settlement", PaymentID: p.ID, Body: body})
		return 200, map[string]any{"id": id, "status": "succeeded"}
	}
	return 404, errBody("not_found", "no such endpoint")
}

// checkReceipt is what YooKassa checks of a receipt: a customer to send it
// to, 1..100 items each with a description of at most 128 characters, a
// positive quantity and amount, a VAT code, a subject and a mode it knows,
// the items adding up to the amount paid (total; -1: a settlement, whose
// settlements must add up to its items, every item fully paid). It
// returns why it would be refused ("" when it would not).
func checkReceipt(r map[string]any, total int64, settlement bool) string {
	if r == nil {
		return "missing"
	}
	c, _ := r["customer"].(map[string]any)
	if str(c["email"]) == "" && str(c["phone"]) == "" {
		return "customer: an email or a phone is required"
	}
	if ph := str(c["phone"]); ph != "" && (strings.HasPrefix(ph, "+") || len(ph) < 10 || len(ph) > 15) {
		return "customer.phone: digits with the country code, no +"
	}
	items, _ := r["items"].([]any)
	if len(items) == 0 || len(items) > 100 {
		return "items: 1 to 100"
	}
	modes := map[string]bool{"full_prepayment": true, "partial_prepayment": true, "advance": true, "full_payment": true,
		"partial_payment": true, "credit": true, "credit_payment": true}
	var sum int64
	for i, x := range items {
		it, _ := x.(map[string]any)
		d := []rune(str(it["description"]))
		a, _ := it["amount"].(map[string]any)
		v := minor(str(a["value"]))
		vat, _ := it["vat_code"].(float64)
		switch {
		case len(d) == 0 || len(d) > 128:
			return fmt.Sprintf("items[%d].description: 1 to 128 characters", i)
		case minor(str(it["quantity"])) <= 0:
			return fmt.Sprintf("items[%d].quantity: positive", i)
		case v <= 0 || str(a["currency"]) == "":
			return fmt.Sprintf("items[%d].amount: positive, with a currency", i)
		case vat < 1 || vat > 12:
			return fmt.Sprintf("items[%d].vat_code: 1 to 12", i)
		case str(it["payment_subject"]) == "":
			return fmt.Sprintf("items[%d].payment_subject: required", i)
		case !modes[str(it["payment_mode"])]:
			return fmt.Sprintf("items[%d].payment_mode: unknown %q", i, str(it["payment_mode"]))
		case settlement && str(it["payment_mode"]) != "full_payment":
			return fmt.Sprintf("items[%d].payment_mode: a settlement pays in full", i)
		}
		sum += v * minor(str(it["quantity"])) / 100
	}
	if t, ok := r["tax_system_code"].(float64); ok && (t < 1 || t > 6) {
		return "tax_system_code: 1 to 6"
	}
	if settlement {
		if str(r["type"]) != "payment" || r["send"] != true {
			return "a settlement is of type payment, sent"
		}
		st, _ := r["settlements"].([]any)
		var paid int64
		for _, x := range st {
			m, _ := x.(map[string]any)
			a, _ := m["amount"].(map[string]any)
			if str(m["type"]) == "" {
				return "settlements: a type each"
			}
			paid += minor(str(a["value"]))
		}
		if len(st) == 0 || paid != sum {
			return fmt.Sprintf("settlements add up to %d, the items to %d", paid, sum)
		}
		return ""
	}
	if sum != total {
		return fmt.Sprintf("the items add up to %d, the amount is %d", sum, total)
	}
	return ""
}

// list is GET /payments: the payments created at or after created_at.gte,
// oldest first, limit a page (at most 100), next_cursor to go on.
func (s *Server) list(q url.Values) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	since := q.Get("created_at.gte")
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit < 1 || limit > 100 {
		limit = 10
	}
	var ids []string
	for id, p := range s.payments {
		if since == "" || p.CreatedAt >= since {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids) // pay-0001, pay-0002, ...: the order of creation
	from := 0
	if c := q.Get("cursor"); c != "" {
		from = sort.SearchStrings(ids, c)
	}
	items := []*payment{}
	next := ""
	for i := from; i < len(ids); i++ {
		if len(items) == limit {
			next = ids[i]
			break
		}
		items = append(items, s.payments[ids[i]])
	}
	out := map[string]any{"type": "list", "items": items}
	if next != "" {
		out["next_cursor"] = next
	}
	return 200, out
}

// listRefunds is GET /refunds: the refunds of payment_id (every one when
// it is not given), newest first, limit a page (at most 100), next_cursor
// to go on.
func (s *Server) listRefunds(q url.Values) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit < 1 || limit > 100 {
		limit = 10
	}
	var all []*refund
	for _, r := range s.refunds {
		if pid := q.Get("payment_id"); pid == "" || r.PaymentID == pid {
			all = append(all, r)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq > all[j].seq })
	from := 0
	if c := q.Get("cursor"); c != "" {
		from = len(all)
		for i, r := range all {
			if r.ID == c {
				from = i
				break
			}
		}
	}
	items := []*refund{}
	next := ""
	for i := from; i < len(all); i++ {
		if len(items) == limit {
			next = all[i].ID
			break
		}
		items = append(items, all[i])
	}
	out := map[string]any{"type": "list", "items": items}
	if next != "" {
		out["next_cursor"] = next
	}
	return 200, out
}

func errBody(code, desc string) map[string]string {
	return map[string]string{"type": "error", "code": code, "description": desc}
}

func writeErr(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errBody(code, desc))
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

func majorOf(v int64) string { return fmt.Sprintf("%d.%02d", v/100, v%100) }

func minor(s string) int64 {
	whole, frac, _ := strings.Cut(s, ".")
	w, _ := strconv.ParseInt(whole, 10, 64)
	for len(frac) < 2 {
		frac += "0"
	}
	f, _ := strconv.ParseInt(frac[:2], 10, 64)
	return w*100 + f
}
