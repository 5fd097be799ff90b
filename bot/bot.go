// Package bot is the Telegram front end: the booking dialog (service,
// master or any, day, time, contact, confirm), /my with cancel and
// reschedule, /help, /lang, and notifications and reminders.
//
// It is built to survive Telegram's at-least-once delivery and its own
// restarts (go-telegram/bot is used for its API client and types; it does
// not receive or dispatch updates here, because it would confirm a polled
// update before acting on it, run handlers in no order and without panic
// recovery, answer a webhook before processing it, and not wait on 429s):
//
//   - Every update is written to the tg_updates inbox, keyed by update_id,
//     before anything acts on it: a redelivered update is a no-op, and the
//     long-polling offset is saved in the same transaction as the updates it
//     confirms, so a restart neither loses nor replays. The webhook checks
//     its secret in constant time (401 otherwise), stores the update, and
//     only then answers 200.
//   - A chat's updates are handled one at a time, in update_id order, under
//     an advisory lock per chat, by whichever replica gets it; the dialog
//     state lives in tg_chats, so a restart continues where the user was.
//   - Inline keyboards carry only a nonce and a button index (well under 64
//     bytes); what a button does is in the dialog state, so stale or forged
//     taps do nothing. A booking's own buttons (a notice's or a
//     confirmation's Confirm, Move and Cancel: "r:c:SALON:BOOKING") name the
//     booking, and the core decides by the chat's identity whether it is
//     the chat's. A booking attempt has one idempotency key, so
//     tapping "confirm" five times books once.
//   - Replies, edits and callback answers are queued in tg_outbox in the
//     transaction of the turn that makes them, and one sender (the leader
//     among replicas) delivers them within Telegram's limits (per chat and
//     overall), waiting out 429 retry_after. Notifications and reminders are
//     River jobs enqueued with the booking change that causes them; their
//     workers queue messages in the transaction that completes the job.
//   - A panic in a turn is recovered, logged, and answered politely.
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/jackc/pgx/v5/pgxpool"

	"salon/booking"
)

// Config configures the bot.
type Config struct {
	Token string
	// APIURL is the Bot API server (TELEGRAM_API_URL).
	APIURL string
	// WebhookSecret turns on webhook mode (TELEGRAM_WEBHOOK_SECRET); then
	// PublicURL + WebhookPath is registered with setWebhook.
	WebhookSecret string
	PublicURL     string
	Log           *slog.Logger

	// Workers is how many chats are handled at once (per replica).
	Workers int
	// Rate is the most messages a second overall; PerChat the least time
	// between two messages to one chat. Telegram's limits are 30/s and
	// 1/s; the defaults keep a margin under them.
	Rate    float64
	PerChat time.Duration
	// PollTimeout is the long-polling timeout.
	PollTimeout time.Duration
	// Retry is the first delay after a failed call; it doubles, up to a minute.
	Retry time.Duration
}

// DefaultAPIURL is Telegram's Bot API.
const DefaultAPIURL = "https://api.telegram.org"

// WebhookPath is where Telegram posts updates in webhook mode.
const WebhookPath = "/telegram/webhook"

// Bot is the Telegram front end of one booking service.
type Bot struct {
	cfg  Config
	svc  *booking.Service
	pool *pgxpool.Pool
	api  *tgbot.Bot
	log  *slog.Logger
	http *http.Client

	wake    chan struct{} // an update arrived
	outWake chan struct{} // an outgoing message was queued

	statsMu sync.Mutex
	turns   []time.Duration // handler durations, newest last (bounded)

	turnHook func(*models.Update) // tests: runs at the start of every turn

	// Work turns leave for after their transactions (provider calls):
	// afterSlots bound how many run at once, afterQueued how many wait.
	afterSlots  chan struct{}
	afterQueued atomic.Int64
	afterWG     sync.WaitGroup

	username atomic.Pointer[string] // the bot's, from getMe
}

// Username is the bot's Telegram username (for t.me links), "" until Run
// has asked Telegram.
func (b *Bot) Username() string {
	if u := b.username.Load(); u != nil {
		return *u
	}
	return ""
}

// New returns a Bot; Run starts it.
func New(svc *booking.Service, cfg Config) (*Bot, error) {
	if cfg.Token == "" {
		return nil, errors.New("bot: no token")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 25
	}
	if cfg.PerChat <= 0 {
		cfg.PerChat = 1100 * time.Millisecond
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = 30 * time.Second
	}
	if cfg.Retry <= 0 {
		cfg.Retry = time.Second
	}
	b := &Bot{cfg: cfg, svc: svc, pool: svc.Pool(), log: cfg.Log,
		http: &http.Client{Timeout: cfg.PollTimeout + 15*time.Second},
		wake: make(chan struct{}, 1), outWake: make(chan struct{}, 1), afterSlots: make(chan struct{}, afterSlots)}
	api, err := tgbot.New(cfg.Token, tgbot.WithServerURL(cfg.APIURL), tgbot.WithSkipGetMe(),
		tgbot.WithHTTPClient(cfg.PollTimeout, &http.Client{Timeout: 30 * time.Second}),
		tgbot.WithErrorsHandler(func(err error) { b.log.Warn("telegram client", "err", err) }))
	if err != nil {
		return nil, fmt.Errorf("bot: %w", err)
	}
	b.api = api
	return b, nil
}

// Run receives updates (long polling, or the webhook when configured),
// handles them and sends the answers, until ctx is done. Only one replica
// at a time polls and sends (the leader); every replica handles updates.
func (b *Bot) Run(ctx context.Context) error {
	me, err := b.api.GetMe(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return fmt.Errorf("bot: getMe (is the token right?): %w", err)
	}
	b.username.Store(&me.Username)
	var wg sync.WaitGroup
	wg.Go(func() { b.dispatch(ctx) })
	wg.Go(func() { b.lead(ctx) })
	<-ctx.Done()
	wg.Wait()
	b.afterWG.Wait() // each bounded by afterTime
	return nil
}

// After a turn: what its transaction may not wait for.
const (
	afterSlots = 4                // provider calls at once, for all chats
	afterMax   = 256              // waiting for a slot; more are dropped (the client can ask again)
	afterTime  = 15 * time.Second // one piece of work, its wait for a slot included
)

// afterTurn runs fn once the turn that asked for it has committed, in the
// background, bounded: a slow payment provider delays only the chats
// waiting for it, never another chat's turn (which holds its chat's lock
// and a connection).
func (b *Bot) afterTurn(fn func(ctx context.Context)) {
	if b.afterQueued.Add(1) > afterMax {
		b.afterQueued.Add(-1)
		b.log.Warn("bot: too much work after turns; dropped one")
		return
	}
	b.afterWG.Go(func() {
		defer b.afterQueued.Add(-1)
		ctx, cancel := context.WithTimeout(context.Background(), afterTime)
		defer cancel()
		select {
		case b.afterSlots <- struct{}{}:
		case <-ctx.Done():
			b.log.Warn("bot: work after a turn waited too long; dropped")
			return
		}
		defer func() { <-b.afterSlots }()
		defer func() {
			if r := recover(); r != nil {
				b.log.Error("bot: panic in work after a turn", "panic", r, "stack", string(debug.Stack()))
			}
		}()
		fn(ctx)
	})
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// recordTurn keeps a handler duration for Stats.
func (b *Bot) recordTurn(d time.Duration) {
	b.statsMu.Lock()
	defer b.statsMu.Unlock()
	if len(b.turns) >= 200000 {
		b.turns = b.turns[len(b.turns)/2:]
	}
	b.turns = append(b.turns, d)
	turnSeconds.Observe(d.Seconds())
}

// TurnDurations returns the durations of the turns handled so far, sorted:
// how long the handler of each update took, from reading it to committing
// its effects (sending is not part of it).
func (b *Bot) TurnDurations() []time.Duration {
	b.statsMu.Lock()
	out := slices.Clone(b.turns)
	b.statsMu.Unlock()
	slices.Sort(out)
	return out
}
