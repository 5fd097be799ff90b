package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Operations of queued outgoing calls.
const (
	opSend   = "send"   // sendMessage
	opEdit   = "edit"   // editMessageText (with its inline keyboard)
	opAnswer = "answer" // answerCallbackQuery
	opMarkup = "markup" // editMessageReplyMarkup: the message's buttons removed
)

// outMsg is one queued call to the Bot API.
type outMsg struct {
	Op        string     `json:"op"`
	ChatID    int64      `json:"chat_id"`
	MessageID int        `json:"message_id,omitempty"`
	Text      string     `json:"text,omitempty"`
	Inline    [][]button `json:"inline,omitempty"`
	// Contact asks for a reply keyboard with one "share my phone" button
	// labelled so.
	Contact  string `json:"contact,omitempty"`
	Callback string `json:"callback,omitempty"` // callback query id to answer
	Notice   string `json:"notice,omitempty"`   // text of the answer
	// Key makes the message queue once: a retried job finds it queued.
	Key string `json:"-"`
	// Blank says the message is the dialog's screen now, with no buttons
	// of the dialog's (show without a keyboard): once sent, the chat's
	// screen before it loses its buttons, even one its turn did not know
	// (sent meanwhile, in answer to a message typed a moment before).
	Blank bool `json:"blank,omitempty"`
}

// nonce is the dialog's nonce the message's buttons carry ("" for none:
// no buttons, or a notice's or a link's).
func (m *outMsg) nonce() string {
	for _, row := range m.Inline {
		for _, b := range row {
			if n, _, ok := strings.Cut(b.Data, ":"); ok && n != "r" {
				return n
			}
		}
	}
	return ""
}

// screenStripKey keys the removal of the buttons of a chat's screen, so
// that it is queued once, by the turn that moved on or by the sender that
// sent the next screen (see settle).
func screenStripKey(chatID int64, msgID int) string {
	return fmt.Sprintf("screen:%d:%d", chatID, msgID)
}

// queue inserts outgoing calls into tg_outbox in tx, in order.
func queue(ctx context.Context, tx pgx.Tx, msgs []outMsg) error {
	if len(msgs) == 0 {
		return nil
	}
	batch := &pgx.Batch{}
	if err := queueInto(batch, msgs); err != nil {
		return err
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	return nil
}

// queueInto adds the inserts of outgoing calls to a batch.
func queueInto(batch *pgx.Batch, msgs []outMsg) error {
	for _, m := range msgs {
		payload, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("queue: %w", err)
		}
		var key *string
		if m.Key != "" {
			key = &m.Key
		}
		batch.Queue(`INSERT INTO tg_outbox (chat_id, payload, dedupe_key) VALUES ($1, $2, $3) ON CONFLICT (dedupe_key) DO NOTHING`,
			m.ChatID, payload, key)
	}
	return nil
}

// queueNow queues msgs in a transaction of their own (work done after a
// turn) and wakes the sender.
func (b *Bot) queueNow(ctx context.Context, msgs []outMsg) error {
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
	if err := queue(ctx, tx, msgs); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	signal(b.outWake)
	return nil
}
