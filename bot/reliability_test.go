package bot_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"

	"salon/booking/bookingtest"
	"salon/bot"
	"salon/bot/tgtest"
	"salon/widget"
)

// Two users confirm the same time at once: one is booked, the other is
// told it was just taken and offered the nearest free times.
func TestTwoUsersRaceForOneSlot(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a, b := w.tg.NewUser("A", "en"), w.tg.NewUser("B", "en")
	w.toConfirm(a, "Anna", "16:00", "+7 999 300-00-01")
	w.toConfirm(b, "Anna", "16:00", "+7 999 300-00-02")
	ma, mb := a.Last(), b.Last()
	a.TapData(ma, ma.Inline[0][0].Data)
	b.TapData(mb, mb.Inline[0][0].Data)
	var booked, taken *tgtest.User
	w.until("both answers", func() bool {
		booked, taken = nil, nil
		for _, u := range []*tgtest.User{a, b} {
			switch last := u.Last(); {
			case strings.Contains(last.Text, "You are booked"):
				booked = u
			case strings.Contains(last.Text, "just taken"):
				taken = u
			}
		}
		return booked != nil && taken != nil
	})
	if booked == nil || taken == nil || booked == taken {
		t.Fatalf("want one booked and one told it was taken:%s\n---%s", a.Dump(), b.Dump())
	}
	alt := taken.Last()
	if len(alt.Inline) < 3 || !strings.Contains(alt.Inline[0][0].Text, "Tue 3 Mar") {
		t.Fatalf("alternatives: %v", alt.Inline)
	}
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE status = 'confirmed'`); n != 1 {
		t.Fatalf("%d bookings", n)
	}
	// The loser books an alternative.
	taken.TapData(alt, alt.Inline[0][0].Data)
	w.see(taken, "Check your booking")
	w.tap(taken, "Confirm")
	w.see(taken, "You are booked")
	w.allAnswered()
}

// A bot user and a widget client want the same time at the same moment:
// one booking, and the other side is offered alternatives.
func TestBotAndWidgetRace(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	app := widget.NewApp(log)
	widget.New(w.Svc, widget.Config{Log: log}).Register(app)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	w.must(err)
	go app.Listener(ln) //nolint:errcheck
	t.Cleanup(func() { _ = app.Shutdown() })

	u := w.tg.NewUser("Bot user", "en")
	w.toConfirm(u, "Boris", "18:00", "+7 999 400-00-01")
	msg := u.Last()
	body, _ := json.Marshal(map[string]any{"service_id": w.haircut.ID, "master_id": w.boris.ID,
		"starts_at": bookingtest.At(w.salon, testDay, "18:00").Format(time.RFC3339),
		"client":    map[string]any{"name": "Web", "phone": "+79994000002"}})
	var status int
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		resp, err := http.Post("http://"+ln.Addr().String()+"/api/v1/salons/studio/bookings", "application/json", bytes.NewReader(body))
		if err == nil {
			status = resp.StatusCode
			resp.Body.Close()
		}
	}()
	go func() {
		defer wg.Done()
		<-start
		u.TapData(msg, msg.Inline[0][0].Data)
	}()
	close(start)
	wg.Wait()
	var botBooked bool
	w.until("the bot's answer", func() bool {
		last := u.Last().Text
		botBooked = strings.Contains(last, "You are booked")
		return botBooked || strings.Contains(last, "just taken")
	})
	switch {
	case botBooked && status == 409, !botBooked && status == 201:
	default:
		t.Fatalf("bot booked=%v, widget status %d:%s", botBooked, status, u.Dump())
	}
	if n := w.count(t, `SELECT count(*) FROM bookings WHERE status = 'confirmed'`); n != 1 {
		t.Fatalf("%d bookings", n)
	}
}

// The same update delivered three times has one effect.
func TestRedeliveredUpdateHasOneEffect(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Dup", "en")
	upd := u.SendUpdate("/help")
	id := w.tg.Push(upd)
	w.see(u, "/my — your bookings")
	w.tg.Redeliver(id, u.SendUpdate("/help"))
	w.tg.Redeliver(id, u.SendUpdate("/help"))
	// A later update shows the redeliveries have been read by then.
	u.Send("/lang")
	w.must(u.WaitButton("English", wait))
	helps := 0
	for _, m := range u.Messages() {
		if strings.Contains(m.Text, "/my — your bookings") {
			helps++
		}
	}
	if helps != 1 {
		t.Fatalf("%d help messages for one update:%s", helps, u.Dump())
	}

	// And a redelivered confirm books once.
	w.toConfirm(u, "Anna", "10:00", "+7 999 500-00-01")
	m := u.Last()
	tap := u.TapUpdate(m, m.Inline[0][0].Data)
	tid := w.tg.Push(tap)
	w.tg.Redeliver(tid, tap)
	w.tg.Redeliver(tid, tap)
	w.see(u, "You are booked")
	u.Send("/help")
	w.until("the second help", func() bool { return countText(u, "/my — your bookings") == 2 })
	if n := w.count(t, `SELECT count(*) FROM bookings`); n != 1 {
		t.Fatalf("%d bookings from one confirm delivered three times", n)
	}
	if n := w.count(t, `SELECT count(*) FROM tg_updates WHERE update_id = $1`, tid); n != 1 {
		t.Fatalf("the update is stored %d times", n)
	}
}

// Five quick taps on "confirm" make one booking, and every tap is answered.
func TestConfirmTappedFiveTimes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Quick", "en")
	w.toConfirm(u, "Anna", "12:00", "+7 999 600-00-01")
	m := u.Last()
	for range 5 {
		u.TapData(m, m.Inline[0][0].Data)
	}
	w.see(u, "You are booked")
	w.allAnswered()
	if n := w.count(t, `SELECT count(*) FROM bookings`); n != 1 {
		t.Fatalf("%d bookings from five taps", n)
	}
}

// The bot stops and starts again in the middle of a dialog: the user goes
// on where they were, and no update is lost or handled twice.
func TestRestartMidDialog(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Patient", "en")
	u.Send("/start studio")
	w.tap(u, "Haircut")
	w.tap(u, "Boris")
	w.see(u, "Choose a day")
	w.restart()
	w.tap(u, "Tue 3 Mar")
	w.tap(u, "13:00")
	u.Send("+7 999 700-00-01")
	w.restart()
	w.tap(u, "Confirm")
	w.see(u, "You are booked")
	w.allAnswered()
	if n := w.count(t, `SELECT count(*) FROM bookings`); n != 1 {
		t.Fatalf("%d bookings", n)
	}
	// Every update was handled once; Telegram has none unconfirmed left
	// after the next poll.
	if n := w.count(t, `SELECT count(*) FROM tg_updates WHERE processed_at IS NULL OR error IS NOT NULL`); n != 0 {
		t.Fatalf("%d updates pending or failed", n)
	}
	if w.count(t, `SELECT value FROM tg_state WHERE key = 'poll_offset'`) == 0 {
		t.Fatal("no polling offset saved")
	}
}

// Telegram answers 429 with retry_after: the sender waits and delivers
// everything once.
func TestTooManyRequestsIsWaitedOut(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Busy", "en")
	w.tg.FailNext("sendMessage", 2, 429, 1)
	start := time.Now()
	u.Send("/help")
	u.Send("/start studio")
	w.see(u, "/my — your bookings")
	w.must(u.WaitButton("Haircut", wait))
	if took := time.Since(start); took < time.Second {
		t.Fatalf("answers came %v after a 429 with retry_after 1s", took)
	}
	if got := len(u.Messages()); got != 2 {
		t.Fatalf("%d messages, want 2 (none lost, none twice):%s", got, u.Dump())
	}
	var n429 int
	for _, c := range w.tg.Calls() {
		if c.Status == 429 {
			n429++
		}
	}
	if n429 != 2 {
		t.Fatalf("%d calls answered 429, want 2", n429)
	}
}

// Webhook mode: the bot registers its webhook with the secret; Telegram
// (the fake) delivers updates there; a wrong secret is refused with 401
// and nothing is stored.
func TestWebhookMode(t *testing.T) {
	t.Parallel()
	// The webhook is served as salon serve does; the bot is made after the
	// listener, since its public URL is the listener's.
	var hook http.Handler
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Post(bot.WebhookPath, func(c *fiber.Ctx) error { return adaptor.HTTPHandler(hook)(c) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck
	t.Cleanup(func() { _ = app.Shutdown() })
	base := "http://" + ln.Addr().String()
	w := newWorld(t, func(c *bot.Config) { c.WebhookSecret, c.PublicURL = "s3cr3t-token", base })
	hook = w.bot.Webhook()

	u := w.tg.NewUser("Hook", "en")
	post := func(secret string, upd map[string]any) int {
		upd["update_id"] = 777000 + len(secret)
		body, _ := json.Marshal(upd)
		req, _ := http.NewRequest("POST", base+bot.WebhookPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		resp, err := http.DefaultClient.Do(req)
		w.must(err)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, s := range []string{"", "wrong", "s3cr3t-tokeN", "s3cr3t-token-and-more"} {
		if got := post(s, u.SendUpdate("/help")); got != 401 {
			t.Fatalf("secret %q: %d, want 401", s, got)
		}
	}
	if n := w.count(t, `SELECT count(*) FROM tg_updates`); n != 0 {
		t.Fatalf("%d updates stored from refused requests", n)
	}
	// Through Telegram: setWebhook came with the secret, and updates arrive.
	w.until("setWebhook", func() bool {
		for _, c := range w.tg.Calls() {
			if c.Method == "setWebhook" && c.Params["secret_token"] == "s3cr3t-token" && c.Params["url"] == base+bot.WebhookPath {
				return true
			}
		}
		return false
	})
	u.Send("/start studio")
	w.tap(u, "Haircut")
	w.see(u, "Choose a master")
	for _, c := range w.tg.Calls() {
		if c.Method == "getUpdates" {
			t.Fatal("the bot polled in webhook mode")
		}
	}
	w.allAnswered()
}

// A panic in a turn is recovered: logged, the user gets a polite answer
// (and the button is answered), and the chat goes on.
func TestPanicInATurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	bot.SetTurnHook(w.bot, func(u *models.Update) {
		if u.Message != nil && u.Message.Text == "/boom" {
			panic("boom")
		}
	})
	u := w.tg.NewUser("Crash", "en")
	u.Send("/boom")
	w.see(u, "something went wrong on our side")
	u.Send("/help")
	w.see(u, "/my — your bookings")
	if !strings.Contains(w.logs.String(), "panic") || !strings.Contains(w.logs.String(), "boom") {
		t.Fatalf("panic not logged: %s", w.logs.String())
	}
	if n := w.count(t, `SELECT count(*) FROM tg_updates WHERE error LIKE 'panic%'`); n != 1 {
		t.Fatalf("%d updates marked with the panic", n)
	}
}

// With Telegram's real limits, no chat gets more than a message a second
// and all chats together no more than 30 a second.
func TestOutboundLimits(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *bot.Config) { c.Rate, c.PerChat = 0, 0 }) // the defaults
	const users = 40
	us := make([]*tgtest.User, users)
	for i := range us {
		us[i] = w.tg.NewUser(fmt.Sprint("U", i), "en")
	}
	for _, u := range us {
		u.Send("/help")
		u.Send("/help")
	}
	w.until("every answer", func() bool {
		for _, u := range us {
			if countText(u, "/my — your bookings") < 2 {
				return false
			}
		}
		return true
	})
	perChat, overall := tgtest.MaxPerWindow(w.tg.Calls(), time.Second)
	t.Logf("max messages in any second: %d to one chat, %d overall", perChat, overall)
	if perChat > 1 || overall > 30 {
		t.Fatalf("limits exceeded: %d to one chat, %d overall in one second", perChat, overall)
	}
}

// Telegram answers 5xx: the sender retries and delivers once.
func TestServerErrorsAreRetried(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u := w.tg.NewUser("Unlucky", "en")
	w.tg.FailNext("sendMessage", 3, 502, 0)
	w.tg.FailNext("getUpdates", 2, 500, 0)
	u.Send("/help")
	w.see(u, "/my — your bookings")
	if got := len(u.Messages()); got != 1 {
		t.Fatalf("%d messages, want exactly 1:%s", got, u.Dump())
	}
	w.until("the message recorded as sent", func() bool {
		return w.count(t, `SELECT count(*) FROM tg_outbox WHERE state = 'sent'`) == 1
	})
	if n := w.count(t, `SELECT attempts FROM tg_outbox WHERE state = 'sent'`); n != 4 {
		t.Fatalf("sent after %d attempts, want 4", n)
	}
}
