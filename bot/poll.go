package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/jackc/pgx/v5"
)

// leaderKey is the advisory lock the replica that polls and sends holds.
const leaderKey = `SELECT pg_try_advisory_lock(hashtextextended('tg-leader', 0))`

// lead competes to be the leader; the leader receives (polls, or registers
// the webhook) and sends, until it loses its connection or ctx is done.
func (b *Bot) lead(ctx context.Context) {
	for ctx.Err() == nil {
		err := b.leadOnce(ctx)
		if err != nil && ctx.Err() == nil {
			b.log.Warn("bot: leader", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

func (b *Bot) leadOnce(ctx context.Context) error {
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	var leader bool
	if err := conn.QueryRow(ctx, leaderKey).Scan(&leader); err != nil {
		return err
	}
	if !leader {
		return nil
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended('tg-leader', 0))`) //nolint:errcheck
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { b.send(ctx) })
	if b.cfg.WebhookSecret != "" {
		wg.Go(func() { b.registerWebhook(ctx) })
	} else {
		wg.Go(func() { b.poll(ctx) })
	}
	// Hold the lock while the connection lives; step down when it dies.
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			if err := conn.Ping(ctx); err != nil && ctx.Err() == nil {
				cancel()
				wg.Wait()
				return fmt.Errorf("lost the leader's connection: %w", err)
			}
			b.prune(ctx)
		}
	}
	wg.Wait()
	return nil
}

// prune forgets handled updates and sent messages after a week.
func (b *Bot) prune(ctx context.Context) {
	_, _ = b.pool.Exec(ctx, `DELETE FROM tg_updates WHERE processed_at < now() - interval '7 days'`)
	_, _ = b.pool.Exec(ctx, `DELETE FROM tg_outbox WHERE state <> 'queued' AND created_at < now() - interval '7 days'`)
}

// registerWebhook points Telegram at our webhook, with the secret.
func (b *Bot) registerWebhook(ctx context.Context) {
	url := strings.TrimRight(b.cfg.PublicURL, "/") + WebhookPath
	delay := b.cfg.Retry
	for ctx.Err() == nil {
		_, err := b.api.SetWebhook(ctx, &tgbot.SetWebhookParams{URL: url, SecretToken: b.cfg.WebhookSecret,
			AllowedUpdates: []string{"message", "callback_query"}})
		if err == nil {
			b.log.Info("bot: webhook registered", "url", url)
			return
		}
		b.log.Warn("bot: setWebhook", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Minute)
	}
}

// poll long-polls getUpdates. Each batch is stored together with the next
// offset in one transaction; the offset confirms the batch to Telegram only
// on the next call, so nothing is confirmed before it is stored.
func (b *Bot) poll(ctx context.Context) {
	if _, err := b.api.DeleteWebhook(ctx, &tgbot.DeleteWebhookParams{}); err != nil && ctx.Err() == nil {
		b.log.Warn("bot: deleteWebhook", "err", err)
	}
	delay := b.cfg.Retry
	for ctx.Err() == nil {
		var offset int64
		err := b.pool.QueryRow(ctx, `SELECT value FROM tg_state WHERE key = 'poll_offset'`).Scan(&offset)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			b.pollFailed(ctx, &delay, err)
			continue
		}
		raws, err := b.getUpdates(ctx, offset)
		if err != nil {
			b.pollFailed(ctx, &delay, err)
			continue
		}
		delay = b.cfg.Retry
		if len(raws) == 0 {
			continue
		}
		next := offset
		for _, raw := range raws {
			var u struct {
				ID int64 `json:"update_id"`
			}
			_ = json.Unmarshal(raw, &u)
			next = max(next, u.ID+1)
		}
		err = pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			if err := store(ctx, tx, raws); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO tg_state (key, value) VALUES ('poll_offset', $1)
				ON CONFLICT (key) DO UPDATE SET value = GREATEST(tg_state.value, EXCLUDED.value)`, next)
			return err
		})
		if err != nil {
			b.pollFailed(ctx, &delay, err)
			continue
		}
		signal(b.wake)
	}
}

func (b *Bot) pollFailed(ctx context.Context, delay *time.Duration, err error) {
	if ctx.Err() != nil {
		return
	}
	b.log.Warn("bot: getUpdates", "err", err, "retry_in", *delay)
	select {
	case <-ctx.Done():
	case <-time.After(*delay):
	}
	*delay = min(*delay*2, time.Minute)
}

// getUpdates calls the Bot API's getUpdates (the client library keeps its
// own poller private, and confirms updates before they are handled).
func (b *Bot) getUpdates(ctx context.Context, offset int64) ([]json.RawMessage, error) {
	body, _ := json.Marshal(map[string]any{"offset": offset, "timeout": int(b.cfg.PollTimeout.Seconds()),
		"allowed_updates": []string{"message", "callback_query"}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.APIURL+"/bot"+b.cfg.Token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.http.Do(req)
	if err != nil {
		return nil, redact(err, b.cfg.Token)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	var r struct {
		OK          bool              `json:"ok"`
		Result      []json.RawMessage `json:"result"`
		Description string            `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("getUpdates: %d %.200s", resp.StatusCode, raw)
	}
	if !r.OK {
		if r.Parameters.RetryAfter > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(r.Parameters.RetryAfter) * time.Second):
			}
		}
		return nil, fmt.Errorf("getUpdates: %d %s", resp.StatusCode, r.Description)
	}
	return r.Result, nil
}

// redact keeps the token out of error messages (they carry the URL).
func redact(err error, token string) error {
	return errors.New(strings.ReplaceAll(err.Error(), token, "***"))
}
