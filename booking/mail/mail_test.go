package mail_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"salon/booking/mail"
	"salon/booking/mail/mailtest"
)

// A message reaches a real SMTP server (Mailpit) whole: both parts, the
// same words, and List-Unsubscribe with its one-click POST.
func TestSendReachesTheMailbox(t *testing.T) {
	mp := mailtest.Start(t)
	s, err := mail.New("smtp://salon:secret@"+mp.SMTP, "Studio <booking@studio.example>")
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Send(context.Background(), mail.Message{To: "maria@example.com", Subject: "Вы записаны: вт, 3 марта, 12:00",
		Text: "Стрижка у Анны, вт, 3 марта, 12:00.", HTML: "<p>Стрижка у Анны, <b>вт, 3 марта, 12:00</b>.</p>",
		Unsubscribe: "https://booking.example/u/TOKEN"})
	if err != nil || id == "" {
		t.Fatalf("send: %q %v", id, err)
	}
	got := mp.Messages(t)
	if len(got) != 1 {
		t.Fatalf("%d messages in the mailbox", len(got))
	}
	m := got[0]
	if m.Subject != "Вы записаны: вт, 3 марта, 12:00" || len(m.To) != 1 || m.To[0].Address != "maria@example.com" ||
		m.From.Address != "booking@studio.example" {
		t.Errorf("envelope: %+v", m)
	}
	if !strings.Contains(m.Text, "Стрижка у Анны") || !strings.Contains(m.HTML, "<b>вт, 3 марта, 12:00</b>") {
		t.Errorf("parts: %q / %q", m.Text, m.HTML)
	}
	if u := m.Headers["List-Unsubscribe"]; len(u) != 1 || u[0] != "<https://booking.example/u/TOKEN>" {
		t.Errorf("List-Unsubscribe: %v", u)
	}
	if p := m.Headers["List-Unsubscribe-Post"]; len(p) != 1 || p[0] != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post: %v", p)
	}
}

func TestConfigurationIsChecked(t *testing.T) {
	for _, c := range []struct{ url, from string }{
		{"http://mail.example", "a@example.com"},
		{"smtp://", "a@example.com"},
		{"smtp://mail.example:port", "a@example.com"},
		{"smtp://mail.example", ""},
		{"smtp://mail.example", "not an address"},
	} {
		if _, err := mail.New(c.url, c.from); !errors.Is(err, mail.ErrConfig) {
			t.Errorf("%q %q: %v", c.url, c.from, err)
		}
	}
	if _, err := mail.New("smtps://u:hunter2@mail.example", "a@example.com"); err != nil {
		t.Errorf("smtps: %v", err)
	}
	if _, err := mail.New("ftp://u:hunter2@mail.example", "a@example.com"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a refused URL shows its password: %v", err)
	}
}
