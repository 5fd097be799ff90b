package sms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultSMSRUURL is SMS.ru's API.
const DefaultSMSRUURL = "https://sms.ru"

// SMSRU speaks SMS.ru's HTTP API: POST /sms/send and /sms/status with the
// account's api_id, answers in JSON (json=1).
type SMSRU struct {
	APIID   string
	BaseURL string // default DefaultSMSRUURL
	From    string // an approved sender name; "" for the account's default
	Test    bool   // test=1: SMS.ru checks and answers, sends nothing
	HTTP    *http.Client
}

// smsruAnswer is what both calls answer.
type smsruAnswer struct {
	Status     string `json:"status"`
	StatusCode int    `json:"status_code"`
	StatusText string `json:"status_text"`
	SMS        map[string]struct {
		Status     string `json:"status"`
		StatusCode int    `json:"status_code"`
		StatusText string `json:"status_text"`
		SMSID      string `json:"sms_id"`
	} `json:"sms"`
}

// Send sends text to phone; the number is SMS.ru's digits without +.
func (p *SMSRU) Send(ctx context.Context, phone, text string) (string, error) {
	to := strings.TrimPrefix(phone, "+")
	form := url.Values{"api_id": {p.APIID}, "to": {to}, "msg": {text}, "json": {"1"}}
	if p.From != "" {
		form.Set("from", p.From)
	}
	if p.Test {
		form.Set("test", "1")
	}
	a, err := p.call(ctx, "/sms/send", form)
	if err != nil {
		return "", err
	}
	one, ok := a.SMS[to]
	switch {
	case !ok:
		return "", fmt.Errorf("sms.ru: no answer for %s: %w", to, ErrUnknown)
	case one.Status != "OK":
		return "", &RejectedError{Code: one.StatusCode, Text: one.StatusText}
	}
	return one.SMSID, nil
}

// Status asks what became of a message: SMS.ru's 103 is delivered, 104 to
// 108 and 150 are not, 100 to 102 are on their way.
func (p *SMSRU) Status(ctx context.Context, id string) (Delivery, error) {
	a, err := p.call(ctx, "/sms/status", url.Values{"api_id": {p.APIID}, "sms_id": {id}, "json": {"1"}})
	if err != nil {
		return "", err
	}
	one, ok := a.SMS[id]
	if !ok {
		return "", fmt.Errorf("sms.ru: no status of %s: %w", id, ErrUnknown)
	}
	switch code := one.StatusCode; {
	case code == 103:
		return Delivered, nil
	case code >= 100 && code <= 102:
		return InProgress, nil
	case code >= 104 && code <= 108, code == 150:
		return Undelivered, nil
	}
	return "", &RejectedError{Code: one.StatusCode, Text: one.StatusText}
}

// call posts the form and reads the answer; a refused request is a
// *RejectedError, one SMS.ru did not take (unreachable, 503, 429)
// ErrNotSent, anything else unread (another 5xx, a lost answer)
// ErrUnknown.
func (p *SMSRU) call(ctx context.Context, path string, form url.Values) (*smsruAnswer, error) {
	base := p.BaseURL
	if base == "" {
		base = DefaultSMSRUURL
	}
	client := p.HTTP
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+path, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("sms.ru %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		if op := (*net.OpError)(nil); errors.As(err, &op) && op.Op == "dial" {
			return nil, fmt.Errorf("sms.ru %s: %v: %w", path, err, ErrNotSent)
		}
		return nil, fmt.Errorf("sms.ru %s: %v: %w", path, err, ErrUnknown)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusTooManyRequests:
		// "Not now": nothing was taken.
		return nil, fmt.Errorf("sms.ru %s: %s: %w", path, resp.Status, ErrNotSent)
	case resp.StatusCode >= 500:
		// A gateway's 502 or 504 may come after SMS.ru took the text.
		return nil, fmt.Errorf("sms.ru %s: %s: %w", path, resp.Status, ErrUnknown)
	case err != nil:
		return nil, fmt.Errorf("sms.ru %s: %d %v: %w", path, resp.StatusCode, err, ErrUnknown)
	}
	var a smsruAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("sms.ru %s: %d, not JSON: %w", path, resp.StatusCode, ErrUnknown)
	}
	if a.Status != "OK" {
		return nil, &RejectedError{Code: a.StatusCode, Text: a.StatusText}
	}
	return &a, nil
}
