package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/bot"
	"salon/bot/tgtest"
)

// FuzzUpdate feeds the bot whatever Telegram could send: raw update JSON,
// and callback data on a real keyboard's message. Every update is handled
// or quarantined; the bot never panics out of a turn and never leaves an
// update pending.
func FuzzUpdate(f *testing.F) {
	e := bookingtest.New(f)
	salon := e.Salon(f, booking.Salon{Slug: "studio", Name: "Studio"})
	sv := e.Service(f, salon, booking.SalonService{Name: "Haircut"})
	m := e.Master(f, salon, sv)
	e.Shift(f, salon, m, booking.Date{Year: 2026, Month: 3, Day: 3}, 2, "10:00", "20:00")
	tg := tgtest.NewServer(f)
	b, err := bot.New(e.Svc, bot.Config{Token: tg.Token, APIURL: tg.URL, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		f.Fatal(err)
	}
	var id atomic.Int64
	id.Store(1000)
	msg := func(text string) string {
		return fmt.Sprintf(`{"update_id": %d, "message": {"message_id": 1, "date": 1, "chat": {"id": 77, "type": "private"},
			"from": {"id": 77, "is_bot": false, "first_name": "F", "language_code": "en"}, "text": %q}}`, id.Add(1), text)
	}
	ctx := bookingtest.System()
	// A dialog under way, so callbacks land on a keyboard.
	for _, t := range []string{"/start studio", "/book"} {
		if err := bot.HandleNow(ctx, b, []byte(msg(t))); err != nil {
			f.Fatal(err)
		}
	}
	for _, s := range []string{`{"update_id": 1}`, `{"update_id": -1, "message": {}}`, `not json`, `{}`, `[]`,
		`{"update_id": 5, "callback_query": {"id": "q", "from": {"id": 77}, "data": "x:0"}}`,
		`{"update_id": 6, "message": {"chat": {"id": 77}, "text": "/start ` + "\x00" + `"}}`} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte(nil), "abcd:0")
	f.Add([]byte(nil), "abcd:99999999999999999999")
	f.Add([]byte(nil), ":")
	f.Fuzz(func(t *testing.T, raw []byte, data string) {
		if raw == nil {
			b, _ := json.Marshal(map[string]any{"update_id": id.Add(1), "callback_query": map[string]any{
				"id": "q", "from": map[string]any{"id": 77, "first_name": "F", "is_bot": false},
				"message": map[string]any{"message_id": 2, "date": 1, "chat": map[string]any{"id": 77, "type": "private"}},
				"data":    data}})
			raw = b
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := bot.HandleNow(ctx, b, raw); err != nil {
			t.Fatalf("store: %v", err)
		}
		var pending int
		if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM tg_updates WHERE processed_at IS NULL AND chat_id = 77 AND attempts >= 5`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending > 0 {
			t.Fatalf("%d updates stuck", pending)
		}
	})
}
