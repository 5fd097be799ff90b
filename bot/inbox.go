package bot

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/jackc/pgx/v5"

	"salon/booking"
)

// chatOf returns the chat an update belongs to (0 for kinds the bot ignores).
func chatOf(u *models.Update) int64 {
	switch {
	case u.Message != nil:
		return u.Message.Chat.ID
	case u.CallbackQuery != nil:
		if m := u.CallbackQuery.Message.Message; m != nil {
			return m.Chat.ID
		}
		if m := u.CallbackQuery.Message.InaccessibleMessage; m != nil && m.Chat.ID != 0 {
			return m.Chat.ID
		}
		return u.CallbackQuery.From.ID
	}
	return 0
}

// store writes updates to the inbox exactly as received (a known
// update_id is skipped) in q, which may be the transaction that also saves
// the polling offset. What is not an update at all (not JSON, no
// update_id) goes to quarantine instead, counted, so it never blocks the
// updates after it: nothing Telegram sends can make the batch fail.
func store(ctx context.Context, q interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}, raws []json.RawMessage) error {
	batch := &pgx.Batch{}
	for _, raw := range raws {
		var u models.Update
		err := json.Unmarshal(raw, &u)
		switch {
		case err != nil:
			quarantine(batch, raw, "not JSON: "+err.Error())
		case u.ID <= 0:
			quarantine(batch, raw, "no update_id")
		default:
			batch.Queue(`INSERT INTO tg_updates (update_id, chat_id, payload) VALUES ($1, $2, $3) ON CONFLICT (update_id) DO NOTHING`,
				u.ID, chatOf(&u), []byte(raw))
		}
	}
	if err := q.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("bot: store updates: %w", err)
	}
	return nil
}

// quarantine queues the keeping of something that is not an update.
func quarantine(batch *pgx.Batch, raw []byte, reason string) {
	quarantinedTotal.Inc()
	batch.Queue(`INSERT INTO tg_quarantine (raw, reason) VALUES ($1, $2)`, raw, strings.ToValidUTF8(reason, "?"))
}

// Webhook is the handler for POST /telegram/webhook: it checks Telegram's
// secret header in constant time (401 when wrong, and nothing is stored),
// stores the update, and only then answers 200. Handling happens after.
func (b *Bot) Webhook() http.Handler {
	// (A server that reads bodies before its handlers, as fiber's adaptor
	// does, checks WebhookAuthentic and MaxUpdate first.)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if !b.WebhookAuthentic(r.Header.Get(SecretHeader)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		raw, err := io.ReadAll(io.LimitReader(r.Body, MaxUpdate+1))
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if len(raw) > MaxUpdate {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		// Its own deadline, not derived from the request's context: behind
		// fiber's adaptor that is fasthttp's RequestCtx, whose Done is not
		// safe to watch while the server shuts down.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := store(ctx, b.pool, []json.RawMessage{raw}); err != nil {
			// Only the database can fail here (what Telegram sent is
			// stored or quarantined, whatever it is): Telegram will
			// deliver it again.
			b.log.Error("webhook", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		signal(b.wake)
		w.WriteHeader(http.StatusOK)
	})
}

// SecretHeader carries the webhook's secret on every update Telegram posts.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// MaxUpdate is the largest update the webhook reads.
const MaxUpdate = 64 << 10

// WebhookAuthentic reports whether a webhook request's secret (its
// SecretHeader) is the bot's, comparing in constant time.
func (b *Bot) WebhookAuthentic(secret string) bool {
	return b.cfg.WebhookSecret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(b.cfg.WebhookSecret)) == 1
}

// dispatch hands chats with pending updates to workers, each chat to one
// worker at a time, until ctx is done.
func (b *Bot) dispatch(ctx context.Context) {
	work := make(chan int64)
	var busyMu sync.Mutex
	busy := map[int64]bool{}
	var wg sync.WaitGroup
	for range b.cfg.Workers {
		wg.Go(func() {
			for chat := range work {
				b.drain(ctx, chat)
				busyMu.Lock()
				delete(busy, chat)
				busyMu.Unlock()
				signal(b.wake) // the chat may have got more meanwhile
			}
		})
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for ctx.Err() == nil {
		rows, err := b.pool.Query(ctx, `SELECT DISTINCT chat_id FROM tg_updates
			WHERE processed_at IS NULL AND not_before <= now() LIMIT 500`)
		var chats []int64
		if err == nil {
			chats, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		}
		if err != nil && ctx.Err() == nil {
			b.log.Error("bot: pending updates", "err", err)
		}
		for _, chat := range chats {
			busyMu.Lock()
			skip := busy[chat]
			busy[chat] = true
			busyMu.Unlock()
			if skip {
				continue
			}
			select {
			case work <- chat:
			case <-ctx.Done():
			}
		}
		select {
		case <-ctx.Done():
		case <-b.wake:
		case <-tick.C:
		}
	}
	close(work)
	wg.Wait()
}

// drain handles the chat's pending updates in order until none is left
// (or another replica holds the chat).
func (b *Bot) drain(ctx context.Context, chat int64) {
	for ctx.Err() == nil {
		more, err := b.next(ctx, chat)
		if err != nil && ctx.Err() == nil {
			b.log.Error("bot: turn", "chat", chat, "err", err)
			return
		}
		if !more {
			return
		}
	}
}

// maxAttempts is how often a turn that fails (not by a panic) is retried.
const maxAttempts = 5

// next handles the chat's oldest pending update in one transaction: the
// chat's advisory lock, the update, the dialog state, the turn, the new
// state and the queued answers. It reports whether it handled one.
func (b *Bot) next(ctx context.Context, chat int64) (bool, error) {
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
	// One round trip: the chat's lock, its oldest pending update, its state.
	var (
		locked, found bool
		id            int64
		payload       []byte
		attempts      int
		saved         savedChat
	)
	batch := &pgx.Batch{}
	batch.Queue(`SELECT pg_try_advisory_xact_lock(hashtextextended('tg-chat:' || $1::bigint, 0))`, chat).
		QueryRow(func(r pgx.Row) error { return r.Scan(&locked) })
	batch.Queue(`SELECT update_id, payload, attempts FROM tg_updates
		WHERE chat_id = $1 AND processed_at IS NULL AND not_before <= now()
		ORDER BY update_id LIMIT 1 FOR UPDATE SKIP LOCKED`, chat).QueryRow(func(r pgx.Row) error {
		err := r.Scan(&id, &payload, &attempts)
		found = err == nil
		return ignoreNoRows(err)
	})
	batch.Queue(`SELECT user_id, lang, lang_set, COALESCE(salon_id, 0), dialog, COALESCE(screen_msg, 0), COALESCE(screen_nonce, '')
		FROM tg_chats WHERE chat_id = $1`, chat).
		QueryRow(func(r pgx.Row) error {
			err := r.Scan(&saved.userID, &saved.lang, &saved.langSet, &saved.salonID, &saved.dialog, &saved.screen, &saved.screenNonce)
			saved.found = err == nil
			return ignoreNoRows(err)
		})
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return false, err
	}
	if !locked || !found {
		return false, nil // nothing pending, or another replica is on this chat
	}
	var u models.Update
	if err := json.Unmarshal(payload, &u); err != nil {
		quarantinedTotal.Inc()
		_, err := tx.Exec(ctx, `UPDATE tg_updates SET processed_at = now(), error = $2 WHERE update_id = $1`, id,
			strings.ToValidUTF8("unreadable: "+err.Error(), "?"))
		return true, commit(ctx, tx, err)
	}

	start := time.Now()
	t, turnErr := b.turn(ctx, tx, chat, &u, saved)
	if turnErr != nil {
		// What the turn wrote is void; the update's row must be free for
		// the bookkeeping below.
		_ = tx.Rollback(ctx)
	}
	var p panicError
	switch {
	case errors.As(turnErr, &p):
		// A bug: retrying would panic again. Apologise and move on.
		b.log.Error("bot: panic in a turn", "update", id, "chat", chat, "panic", p.value, "stack", p.stack)
		return true, b.giveUp(ctx, id, chat, &u, fmt.Sprint("panic: ", p.value))
	case turnErr != nil && attempts+1 >= maxAttempts:
		b.log.Error("bot: turn failed, giving up", "update", id, "chat", chat, "err", turnErr)
		return true, b.giveUp(ctx, id, chat, &u, turnErr.Error())
	case turnErr != nil:
		b.log.Warn("bot: turn failed, will retry", "update", id, "chat", chat, "attempt", attempts+1, "err", turnErr)
		_, err := b.pool.Exec(ctx, `UPDATE tg_updates SET attempts = attempts + 1, error = $2,
			not_before = now() + make_interval(secs => $3) WHERE update_id = $1`, id, turnErr.Error(), float64(int(1)<<attempts))
		return false, err
	}
	if err := t.save(ctx, id); err != nil {
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return false, err
	}
	for _, fn := range t.after {
		b.afterTurn(fn)
	}
	b.recordTurn(time.Since(start))
	if len(t.out) > 0 {
		signal(b.outWake)
	}
	return true, nil
}

func commit(ctx context.Context, tx pgx.Tx, err error) error {
	if err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// giveUp marks the update handled with an error and, in its own
// transaction, tells the user politely (answering a tapped button).
func (b *Bot) giveUp(ctx context.Context, id, chat int64, u *models.Update, reason string) error {
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck
	var pending bool
	if err := tx.QueryRow(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('tg-chat:' || $1::bigint, 0)) IS NOT NULL
		AND EXISTS (SELECT 1 FROM tg_updates WHERE update_id = $2 AND processed_at IS NULL)`, chat, id).Scan(&pending); err != nil {
		return err
	}
	if !pending {
		return nil // another replica got there first
	}
	lang := "ru"
	_ = tx.QueryRow(ctx, `SELECT lang FROM tg_chats WHERE chat_id = $1`, chat).Scan(&lang)
	if u.Message != nil && lang == "ru" && u.Message.From != nil {
		lang = langOf(u.Message.From.LanguageCode)
	}
	out := []outMsg{{Op: opSend, ChatID: chat, Text: tr(lang, "error")}}
	if u.CallbackQuery != nil {
		out = append([]outMsg{{Op: opAnswer, ChatID: chat, Callback: u.CallbackQuery.ID}}, out...)
	}
	if err := queue(ctx, tx, out); err != nil {
		return err
	}
	// A balance's code in the update is not kept, handled or not.
	redact := u.Message != nil && booking.LooksLikeCode(u.Message.Text)
	if _, err := tx.Exec(ctx, `UPDATE tg_updates SET processed_at = now(), error = $2,
		payload = CASE WHEN $3 THEN convert_to('{"redacted": "a balance code"}', 'UTF8') ELSE payload END WHERE update_id = $1`,
		id, reason, redact); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	signal(b.outWake)
	return nil
}

// panicError is a recovered panic of a turn.
type panicError struct {
	value any
	stack string
}

func (p panicError) Error() string { return fmt.Sprint("panic: ", p.value) }

// turn runs the dialog for one update, recovering a panic into an error.
func (b *Bot) turn(ctx context.Context, tx pgx.Tx, chat int64, u *models.Update, saved savedChat) (t *turn, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicError{value: r, stack: string(debug.Stack())}
		}
	}()
	t = b.load(ctx, tx, chat, u, saved)
	if err := b.handle(t, u); err != nil {
		return nil, err
	}
	return t, nil
}

func ignoreNoRows(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}
