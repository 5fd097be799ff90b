package sms_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"salon/booking/sms"
	"salon/booking/sms/smstest"
)

func TestSMSRUSendsAndReports(t *testing.T) {
	fake := smstest.New(t)
	p := &sms.SMSRU{APIID: fake.APIID, BaseURL: fake.URL, From: "Studio"}
	ctx := context.Background()
	id, err := p.Send(ctx, "+79161234567", "Напоминание: завтра в 12:00")
	if err != nil || id == "" {
		t.Fatalf("send: %q %v", id, err)
	}
	sent := fake.Sent()
	if len(sent) != 1 || sent[0].To != "79161234567" || sent[0].Text != "Напоминание: завтра в 12:00" || sent[0].From != "Studio" {
		t.Fatalf("the fake got %+v", sent)
	}
	for code, want := range map[int]sms.Delivery{100: sms.InProgress, 103: sms.Delivered, 105: sms.Undelivered} {
		fake.SetStatus(id, code)
		if got, err := p.Status(ctx, id); err != nil || got != want {
			t.Errorf("status %d: %v %v, want %v", code, got, err, want)
		}
	}
	// Refusals are known outcomes; a broken answer is not.
	if _, err := p.Send(ctx, "+7", "x"); !sms.IsRejected(err) {
		t.Errorf("a bad number: %v", err)
	}
	bad := &sms.SMSRU{APIID: "wrong", BaseURL: fake.URL}
	var rej *sms.RejectedError
	if _, err := bad.Send(ctx, "+79161234567", "x"); !errors.As(err, &rej) || rej.Code != 200 {
		t.Errorf("a wrong api_id: %v", err)
	}
	// A 503 took nothing: safe to send again. A 502 (a gateway's) and an
	// answer lost after the text went are unknown: it may have gone, and
	// must not go again.
	fake.Fail(func(string) int { return 503 })
	if _, err := p.Send(ctx, "+79161234567", "x"); !errors.Is(err, sms.ErrNotSent) {
		t.Errorf("a 503: %v", err)
	}
	fake.Fail(func(string) int { return 502 })
	if _, err := p.Send(ctx, "+79161234567", "x"); !errors.Is(err, sms.ErrUnknown) {
		t.Errorf("a 502: %v", err)
	}
	if len(fake.Sent()) != 1 {
		t.Errorf("the fake took %d messages", len(fake.Sent()))
	}
	fake.Fail(func(string) int { return smstest.LoseAnswer })
	if _, err := p.Send(ctx, "+79161234567", "x"); !errors.Is(err, sms.ErrUnknown) {
		t.Errorf("a lost answer: %v", err)
	}
	if len(fake.Sent()) != 2 {
		t.Errorf("the fake took %d messages", len(fake.Sent()))
	}
	stopped := smstest.New(t)
	stopped.Close()
	if _, err := (&sms.SMSRU{APIID: "x", BaseURL: stopped.URL}).Send(ctx, "+79161234567", "x"); !errors.Is(err, sms.ErrNotSent) {
		t.Errorf("nobody listening: %v", err)
	}
}

func TestSegments(t *testing.T) {
	for _, c := range []struct {
		text  string
		parts int
		ucs2  bool
	}{
		{"", 0, false},
		{"Reminder: tomorrow 12:00", 1, false},
		{strings.Repeat("a", 160), 1, false},
		{strings.Repeat("a", 161), 2, false},
		{strings.Repeat("€", 80), 1, false}, // two each: 160
		{strings.Repeat("€", 81), 2, false},
		{strings.Repeat("я", 70), 1, true}, // Cyrillic: 70 a message
		{strings.Repeat("я", 71), 2, true}, // then 67 a part
		{strings.Repeat("я", 134), 2, true},
		{strings.Repeat("я", 135), 3, true},
	} {
		if parts, ucs2 := sms.Segments(c.text); parts != c.parts || ucs2 != c.ucs2 {
			t.Errorf("%.20q (%d runes): %d parts, ucs2 %v; want %d, %v", c.text, len([]rune(c.text)), parts, ucs2, c.parts, c.ucs2)
		}
	}
}
