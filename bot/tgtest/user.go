package tgtest

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// User is a Telegram user in a private chat with the bot (chat id = user id).
type User struct {
	ID        int64
	FirstName string
	Lang      string
	s         *Server
	msgID     atomic.Int64
}

var callbackSeq atomic.Int64

// NewUser returns a new user with a language code ("ru", "en").
func (s *Server) NewUser(firstName, lang string) *User {
	s.mu.Lock()
	s.nextUser++
	id := s.nextUser
	s.mu.Unlock()
	return &User{ID: id, FirstName: firstName, Lang: lang, s: s}
}

func (u *User) from() map[string]any {
	return map[string]any{"id": u.ID, "is_bot": false, "first_name": u.FirstName, "language_code": u.Lang}
}

func (u *User) chat() map[string]any {
	return map[string]any{"id": u.ID, "type": "private", "first_name": u.FirstName}
}

func (u *User) message(extra map[string]any) map[string]any {
	m := map[string]any{"message_id": int(u.msgID.Add(1)) + 100000, "from": u.from(), "chat": u.chat(), "date": time.Now().Unix()}
	for k, v := range extra {
		m[k] = v
	}
	return map[string]any{"message": m}
}

// SendUpdate returns the update a typed text makes (not yet pushed).
func (u *User) SendUpdate(text string) map[string]any {
	extra := map[string]any{"text": text}
	if strings.HasPrefix(text, "/") {
		cmd, _, _ := strings.Cut(text, " ")
		extra["entities"] = []map[string]any{{"type": "bot_command", "offset": 0, "length": len(cmd)}}
	}
	return u.message(extra)
}

// Send types text (a command when it starts with /) and returns the update id.
func (u *User) Send(text string) int64 { return u.s.Push(u.SendUpdate(text)) }

// Push sends a message of the user with the given fields (a contact card,
// a sticker...) and returns the update id.
func (u *User) Push(fields map[string]any) int64 { return u.s.Push(u.message(fields)) }

// ShareContact taps the "share my phone" button: a contact of the user.
func (u *User) ShareContact(phone string) int64 {
	return u.s.Push(u.message(map[string]any{"contact": map[string]any{"phone_number": phone, "first_name": u.FirstName, "user_id": u.ID}}))
}

// ShareOthersContact sends someone else's contact card.
func (u *User) ShareOthersContact(phone string) int64 {
	return u.s.Push(u.message(map[string]any{"contact": map[string]any{"phone_number": phone, "first_name": "Someone", "user_id": u.ID + 1}}))
}

// TapUpdate returns the callback query update of tapping data on message msg.
func (u *User) TapUpdate(msg *Message, data string) map[string]any {
	id := fmt.Sprintf("cb%d", callbackSeq.Add(1))
	u.s.mu.Lock()
	u.s.callbacks[id] = false
	u.s.mu.Unlock()
	return map[string]any{"callback_query": map[string]any{
		"id": id, "from": u.from(), "chat_instance": fmt.Sprint(u.ID), "data": data,
		"message": map[string]any{"message_id": msg.ID, "date": msg.SentAt.Unix(), "text": msg.Text, "chat": u.chat()},
	}}
}

// Tap taps the inline button labelled text (exactly, or the first that
// contains it) on the newest bot message that has it.
func (u *User) Tap(text string) (int64, error) {
	msg, b := u.find(text)
	if msg == nil {
		return 0, fmt.Errorf("no button %q in chat %d; messages: %s", text, u.ID, u.Dump())
	}
	return u.s.Push(u.TapUpdate(msg, b.Data)), nil
}

// TapData taps a button with raw callback data on message msg (a stale or
// forged tap).
func (u *User) TapData(msg *Message, data string) int64 { return u.s.Push(u.TapUpdate(msg, data)) }

func (u *User) find(text string) (*Message, *Button) {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	msgs := u.s.chats[u.ID]
	for _, exact := range []bool{true, false} {
		for i := len(msgs) - 1; i >= 0; i-- {
			for _, row := range msgs[i].Inline {
				for _, b := range row {
					if b.Text == text || (!exact && strings.Contains(b.Text, text)) {
						m, bb := *msgs[i], b
						return &m, &bb
					}
				}
			}
		}
	}
	return nil, nil
}

// Messages returns the bot's messages in this chat as they show now.
func (u *User) Messages() []Message {
	u.s.mu.Lock()
	defer u.s.mu.Unlock()
	var out []Message
	for _, m := range u.s.chats[u.ID] {
		out = append(out, *m)
	}
	return out
}

// Last returns the bot's most recently sent or edited message, or nil.
func (u *User) Last() *Message {
	msgs := u.Messages()
	var last *Message
	for i := range msgs {
		m := &msgs[i]
		if last == nil || latest(m).After(latest(last)) || latest(m).Equal(latest(last)) && m.ID > last.ID {
			last = m
		}
	}
	return last
}

func latest(m *Message) time.Time {
	if m.EditedAt.After(m.SentAt) {
		return m.EditedAt
	}
	return m.SentAt
}

// WaitText waits until a bot message in the chat contains substr.
func (u *User) WaitText(substr string, d time.Duration) (*Message, error) {
	var found *Message
	ok := u.s.waitChat(u.ID, d, func() bool {
		for i := len(u.s.chats[u.ID]) - 1; i >= 0; i-- {
			if strings.Contains(u.s.chats[u.ID][i].Text, substr) {
				m := *u.s.chats[u.ID][i]
				found = &m
				return true
			}
		}
		return false
	})
	if !ok {
		return nil, fmt.Errorf("chat %d: no message containing %q after %v; messages: %s", u.ID, substr, d, u.Dump())
	}
	return found, nil
}

// WaitButton waits until a bot message in the chat has a button whose text
// contains text.
func (u *User) WaitButton(text string, d time.Duration) error {
	ok := u.s.waitChat(u.ID, d, func() bool {
		for _, m := range u.s.chats[u.ID] {
			for _, row := range append(m.Inline, m.Reply...) {
				for _, b := range row {
					if strings.Contains(b.Text, text) {
						return true
					}
				}
			}
		}
		return false
	})
	if !ok {
		return fmt.Errorf("chat %d: no button %q after %v; messages: %s", u.ID, text, d, u.Dump())
	}
	return nil
}

// Dump describes the chat's messages, for failure messages.
func (u *User) Dump() string {
	var b strings.Builder
	for _, m := range u.Messages() {
		fmt.Fprintf(&b, "\n  #%d %q", m.ID, m.Text)
		for _, row := range m.Inline {
			b.WriteString(" [")
			for i, btn := range row {
				if i > 0 {
					b.WriteString(" | ")
				}
				b.WriteString(btn.Text)
			}
			b.WriteString("]")
		}
		if len(m.Reply) > 0 {
			fmt.Fprintf(&b, " reply keyboard %v", m.Reply)
		}
	}
	return b.String()
}
