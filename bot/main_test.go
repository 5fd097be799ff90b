package bot_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/bot"
	"salon/bot/tgtest"
)

func TestMain(m *testing.M) { bookingtest.Main(m) }

// testDay is the day the masters work: the day after the pinned clock.
var testDay = booking.Date{Year: 2026, Month: 3, Day: 3}

const wait = 20 * time.Second

// world is a salon, a fake Telegram, and the bot (with its jobs) between them.
type world struct {
	*bookingtest.Env
	t       *testing.T
	tg      *tgtest.Server
	salon   *booking.Salon
	haircut *booking.SalonService
	anna    *booking.Master
	boris   *booking.Master
	cfg     bot.Config
	bot     *bot.Bot
	stop    func()
	logs    *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newWorld builds the world; the bot sends fast (tests of the limits set
// them back with cfg) and starts unless start is false.
func newWorld(t *testing.T, mod ...func(*bot.Config)) *world {
	t.Helper()
	return newWorldWith(t, nil, mod...)
}

// newWorldWith is newWorld with options for the booking service.
func newWorldWith(t *testing.T, opts []booking.Option, mod ...func(*bot.Config)) *world {
	t.Helper()
	e := bookingtest.New(t, append([]booking.Option{booking.WithNotifier(booking.ChannelTelegram, bot.Notifier{})}, opts...)...)
	w := &world{Env: e, t: t, tg: tgtest.NewServer(t), logs: &syncBuffer{}}
	w.salon = e.Salon(t, booking.Salon{Slug: "studio", Name: "Studio", CutoffHours: 3})
	w.haircut = e.Service(t, w.salon, booking.SalonService{Name: "Haircut", DurationMin: 60, Price: 250000})
	w.anna = mustMaster(t, e, w.salon, "Anna", w.haircut)
	w.boris = mustMaster(t, e, w.salon, "Boris", w.haircut)
	for _, m := range []*booking.Master{w.anna, w.boris} {
		e.Shift(t, w.salon, m, testDay, 2, "10:00", "20:00")
	}
	w.cfg = bot.Config{Token: w.tg.Token, APIURL: w.tg.URL, PollTimeout: time.Second, Rate: 1000, PerChat: time.Millisecond,
		Retry: 50 * time.Millisecond, Log: slog.New(slog.NewTextHandler(w.logs, nil))}
	for _, f := range mod {
		f(&w.cfg)
	}
	w.start()
	return w
}

func mustMaster(t *testing.T, e *bookingtest.Env, s *booking.Salon, name string, svcs ...*booking.SalonService) *booking.Master {
	t.Helper()
	var offers []booking.Offer
	for _, sv := range svcs {
		offers = append(offers, booking.Offer{ServiceID: sv.ID})
	}
	m, err := e.Svc.CreateMaster(bookingtest.System(), s.ID, booking.Master{Name: name}, offers...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// start runs a bot (and its job workers) as salon serve would.
func (w *world) start() {
	w.t.Helper()
	b, err := bot.New(w.Svc, w.cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	workers := river.NewWorkers()
	booking.AddWorkers(workers, w.Svc)
	jobs, err := river.NewClient(riverpgxv5.New(w.Pool), &river.Config{
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}}, Workers: workers,
		FetchPollInterval: 50 * time.Millisecond, FetchCooldown: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := jobs.Start(ctx); err != nil {
		w.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := b.Run(ctx); err != nil {
			w.t.Errorf("bot: %v", err)
		}
	}()
	w.bot = b
	stopped := false
	w.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-done
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = jobs.Stop(sctx)
	}
	w.t.Cleanup(w.stop)
}

// restart stops the bot and starts a new one on the same database.
func (w *world) restart() {
	w.stop()
	w.start()
}

func (w *world) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) tap(u *tgtest.User, label string) {
	w.t.Helper()
	w.must(u.WaitButton(label, wait))
	_, err := u.Tap(label)
	w.must(err)
}

func (w *world) see(u *tgtest.User, text string) *tgtest.Message {
	w.t.Helper()
	m, err := u.WaitText(text, wait)
	if err != nil {
		w.t.Fatalf("%v\nbot log: %s", err, w.logs.String())
	}
	return m
}

// pick walks a user from /start through service, master, the day's
// button (day: "Tue 3 Mar", "вт, 3 мар.") and the time hhmm.
func (w *world) pick(u *tgtest.User, service, master, day, hhmm string) {
	w.t.Helper()
	u.Send("/start studio")
	w.tap(u, service)
	w.tap(u, master)
	w.tap(u, day)
	w.tap(u, hhmm)
}

// toDays walks a user from /start to the day list of the haircut with
// master.
func (w *world) toDays(u *tgtest.User, master string) {
	w.t.Helper()
	u.Send("/start studio")
	w.tap(u, "Haircut · 60 min")
	w.tap(u, master)
}

// bookInChat books the haircut with master at hhmm on the test day in
// u's chat (en), typing the phone.
func (w *world) bookInChat(u *tgtest.User, master, hhmm, phone string) {
	w.t.Helper()
	w.toConfirm(u, master, hhmm, phone)
	w.tap(u, "Confirm")
	w.see(u, "You are booked")
}

// sendWhileAnswerGoes sends text once the next sendMessage of the bot (the
// answer to the message before) is on its way, slowed at Telegram: the
// turn of text runs before that answer is recorded as sent.
func (w *world) sendWhileAnswerGoes(u *tgtest.User, first, text string) {
	w.t.Helper()
	entered := w.tg.SlowNext("sendMessage", 1, 700*time.Millisecond)
	u.Send(first)
	select {
	case <-entered:
	case <-time.After(wait):
		w.t.Fatalf("the answer to %q was never sent", first)
	}
	u.Send(text)
}

// screenKnown waits until the sender recorded the message on screen in
// u's chat as the dialog's screen (what a typed turn strips the buttons
// of when it moves the dialog on).
func (w *world) screenKnown(u *tgtest.User) {
	w.t.Helper()
	w.until("the screen recorded as the chat's", func() bool {
		var n int
		w.must(w.Pool.QueryRow(context.Background(), `SELECT count(*) FROM tg_chats WHERE chat_id = $1 AND screen_nonce = dialog->>'nonce'`,
			u.ID).Scan(&n))
		return n == 1
	})
}

// toContact walks a user from /start to the phone question for master at
// hhmm on the test day (en).
func (w *world) toContact(u *tgtest.User, master, hhmm string) {
	w.t.Helper()
	w.pick(u, "Haircut", master, "Tue 3 Mar", hhmm)
	w.see(u, "share your phone")
}

// toConfirm walks a user from /start to the confirm screen for master at
// hhmm on the test day (en), typing the phone.
func (w *world) toConfirm(u *tgtest.User, master, hhmm, phone string) {
	w.t.Helper()
	w.toContact(u, master, hhmm)
	u.Send(phone)
	w.must(u.WaitButton("Confirm", wait))
}

func (w *world) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := w.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// until waits until cond holds, checking after every change of the fake
// server (and every 50ms, for conditions on the database), or fails the test.
func (w *world) until(what string, cond func() bool) {
	w.t.Helper()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ch := w.tg.Changes()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline.C:
			w.t.Fatalf("timed out waiting for %s\nbot log: %s", what, w.logs.String())
		}
	}
}

// countText counts the user's bot messages that contain text.
func countText(u *tgtest.User, text string) int {
	n := 0
	for _, m := range u.Messages() {
		if strings.Contains(m.Text, text) {
			n++
		}
	}
	return n
}

// allAnswered waits until every callback query has been answered.
func (w *world) allAnswered() {
	w.t.Helper()
	if !w.tg.WaitAnswered(wait) {
		w.t.Fatalf("callbacks left unanswered: %v", w.tg.Unanswered())
	}
}
