// Package mail sends e-mail over SMTP (SALON_SMTP_URL), with
// github.com/wneessen/go-mail: one message a plain-text and an HTML part
// of the same words, with List-Unsubscribe (RFC 2369, and RFC 8058's
// one-click POST). The message layer drives it; it never touches a
// booking.
package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Message is one e-mail.
type Message struct {
	// ID is the Message-ID's left part ("" for a random one): a message
	// sent twice keeps its id, so mail clients show it once.
	ID string
	// FromName is the sender's name clients read (the salon's), unless
	// SALON_MAIL_FROM names one itself.
	FromName    string
	To          string
	Subject     string
	Text        string // the plain-text part
	HTML        string // the HTML part, the same words
	Unsubscribe string // the https link that stops this channel for this client at this salon
	Attachments []Attachment
}

// Attachment is a file sent with a message.
type Attachment struct {
	Name string
	Type string // its content type, e.g. text/calendar
	Data []byte
}

// Errors of Send, besides a plain one (nothing was taken: sending again is
// safe).
var (
	// ErrRefused: the server refused the message for good (5xx).
	ErrRefused = errors.New("mail: refused")
	// ErrUnknown: the connection failed after the message was written, so
	// it may have been taken.
	ErrUnknown = errors.New("mail: outcome unknown")
)

// Sender sends e-mail from one address through one SMTP server.
type Sender struct {
	from   string
	domain string // of from: the right part of our Message-IDs
	client *gomail.Client
}

// ErrConfig is a SALON_SMTP_URL or SALON_MAIL_FROM that cannot be used.
var ErrConfig = errors.New("mail: bad configuration")

// New reads SALON_SMTP_URL: smtp://user:pass@host:port (STARTTLS when the
// server offers it) or smtps://user:pass@host:port (TLS from the start);
// from is SALON_MAIL_FROM.
func New(rawURL, from string) (*Sender, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" || (u.Scheme != "smtp" && u.Scheme != "smtps") {
		return nil, fmt.Errorf("%w: SALON_SMTP_URL must be smtp://user:pass@host:port or smtps://..., not %q", ErrConfig, redact(rawURL))
	}
	if from == "" {
		return nil, fmt.Errorf("%w: SALON_MAIL_FROM is required with SALON_SMTP_URL", ErrConfig)
	}
	opts := []gomail.Option{gomail.WithTimeout(15 * time.Second)}
	port := 587
	if u.Scheme == "smtps" {
		port = 465
		opts = append(opts, gomail.WithSSL())
	} else {
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("%w: SALON_SMTP_URL's port %q", ErrConfig, p)
		}
	}
	opts = append(opts, gomail.WithPort(port))
	if u.User != nil {
		pass, _ := u.User.Password()
		// The strongest mechanism the server offers, never a password in
		// clear text, but to a relay on this machine (as net/smtp allows).
		auth := gomail.SMTPAuthAutoDiscover
		if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || ip != nil && ip.IsLoopback() {
			auth = gomail.SMTPAuthPlainNoEnc
		}
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(u.User.Username()), gomail.WithPassword(pass))
	}
	c, err := gomail.NewClient(u.Hostname(), opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	s := &Sender{from: from, client: c, domain: "localhost"}
	if a, err := netmail.ParseAddress(from); err == nil {
		if at := strings.LastIndexByte(a.Address, '@'); at >= 0 {
			s.domain = a.Address[at+1:]
		}
	}
	if _, err := s.build(Message{To: "check@example.com", Subject: "x", Text: "x"}); err != nil {
		return nil, fmt.Errorf("%w: SALON_MAIL_FROM %q: %v", ErrConfig, from, err)
	}
	return s, nil
}

// Send sends m and returns its Message-ID.
func (s *Sender) Send(ctx context.Context, m Message) (string, error) {
	msg, err := s.build(m)
	if err != nil {
		return "", err
	}
	if err := s.client.DialAndSendWithContext(ctx, msg); err != nil {
		return "", fmt.Errorf("mail to %s: %w", m.To, classify(ctx, err))
	}
	return msg.GetMessageID(), nil
}

// classify says what an error of sending means: a server's 5xx is
// ErrRefused, a 4xx nothing taken; a failure while or after the message was
// written, or a deadline passed mid-session, ErrUnknown; anything else
// (dialing, greeting, authentication) nothing taken.
func classify(ctx context.Context, err error) error {
	var se *gomail.SendError
	if errors.As(err, &se) {
		switch code := se.ErrorCode(); {
		case code >= 500:
			return fmt.Errorf("%w: %w", ErrRefused, err)
		case code >= 400:
			return err
		case se.Reason == gomail.ErrWriteContent || se.Reason == gomail.ErrSMTPDataClose:
			return fmt.Errorf("%w: %w", ErrUnknown, err)
		}
	}
	if op := (*net.OpError)(nil); ctx.Err() != nil && !(errors.As(err, &op) && op.Op == "dial") {
		return fmt.Errorf("%w: %w", ErrUnknown, err)
	}
	return err
}

func (s *Sender) build(m Message) (*gomail.Msg, error) {
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	if err := msg.From(s.from); err != nil {
		return nil, fmt.Errorf("mail from %q: %w", s.from, err)
	}
	if a, err := netmail.ParseAddress(s.from); err == nil && a.Name == "" && m.FromName != "" {
		if err := msg.FromFormat(m.FromName, a.Address); err != nil {
			return nil, fmt.Errorf("mail from %q <%s>: %w", m.FromName, a.Address, err)
		}
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("mail to %q: %w", m.To, err)
	}
	msg.Subject(m.Subject)
	if m.ID != "" {
		msg.SetMessageIDWithValue(m.ID + "@" + s.domain)
	} else {
		msg.SetMessageID()
	}
	msg.SetDate()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	if m.Unsubscribe != "" {
		msg.SetGenHeader(gomail.HeaderListUnsubscribe, "<"+m.Unsubscribe+">")
		msg.SetGenHeader(gomail.HeaderListUnsubscribePost, "List-Unsubscribe=One-Click")
	}
	for _, a := range m.Attachments {
		if err := msg.AttachReader(a.Name, bytes.NewReader(a.Data), gomail.WithFileContentType(gomail.ContentType(a.Type))); err != nil {
			return nil, fmt.Errorf("mail attachment %q: %w", a.Name, err)
		}
	}
	return msg, nil
}

// redact hides a URL's password.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return raw
}
