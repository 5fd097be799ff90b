package bot

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	tgbot "github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/jackc/pgx/v5"
)

// pending is a queued call the sender holds.
type pending struct {
	id        int64
	msg       outMsg
	attempts  int
	notBefore time.Time
}

// result is how a call went.
type result struct {
	p          *pending
	sent       int // the message a send made
	err        error
	retryAfter time.Duration // a 429's wait
	asSend     bool          // an edit whose message is gone: send it instead
}

// maxInFlight bounds concurrent calls; maxSendAttempts gives up a message;
// callTimeout bounds one call.
const (
	maxInFlight     = 16
	maxSendAttempts = 10
	callTimeout     = 8 * time.Second
)

// send delivers tg_outbox in order per chat within the limits: a chat gets
// a message at most every PerChat, all chats together at most Rate a
// second (callback answers are not messages and go at once), and a 429
// stops everything for its retry_after. Only the leader runs it.
func (b *Bot) send(ctx context.Context) {
	interval := time.Duration(float64(time.Second) / b.cfg.Rate)
	queues := map[int64][]*pending{} // per chat, in id order
	var answers []*pending
	known := map[int64]bool{}
	chatNext := map[int64]time.Time{}
	inflight := map[int64]bool{} // chats with a message being sent
	running := 0
	var nextGlobal, pauseUntil time.Time
	results := make(chan result, maxInFlight)
	refill := time.NewTicker(500 * time.Millisecond)
	defer refill.Stop()
	dirty := true

	// A call that has started is seen through even when the sender stops:
	// Telegram may already have the message, so its result must be
	// recorded, or a restart would send it again.
	callCtx := context.WithoutCancel(ctx)
	dispatch := func(p *pending) {
		running++
		go func() {
			cctx, cancel := context.WithTimeout(callCtx, callTimeout)
			defer cancel()
			results <- b.call(cctx, p)
		}()
	}
	defer func() {
		sctx, cancel := context.WithTimeout(callCtx, callTimeout+2*time.Second)
		defer cancel()
		for ; running > 0; running-- {
			select {
			case r := <-results:
				b.settle(sctx, r)
			case <-sctx.Done():
				b.log.Error("bot: sender stopped with calls unsettled", "calls", running)
				return
			}
		}
	}()
	for ctx.Err() == nil {
		if dirty {
			dirty = false
			rows, err := b.pool.Query(ctx, `SELECT id, payload, attempts, not_before FROM tg_outbox
				WHERE state = 'queued' ORDER BY id LIMIT 5000`)
			if err == nil {
				err = b.collect(rows, known, queues, &answers)
			}
			if err != nil && ctx.Err() == nil {
				b.log.Error("bot: outbox", "err", err)
			}
		}
		now := time.Now()
		// Callback answers first: they are not messages.
		kept := answers[:0]
		for _, p := range answers {
			if running < maxInFlight && !p.notBefore.After(now) && !pauseUntil.After(now) {
				dispatch(p)
				continue
			}
			kept = append(kept, p)
		}
		answers = kept
		// Then the chat whose next message may go soonest.
		var best int64
		var bestAt time.Time
		for chat, q := range queues {
			if len(q) == 0 {
				delete(queues, chat)
				continue
			}
			if inflight[chat] {
				continue
			}
			at := latest3(q[0].notBefore, chatNext[chat], nextGlobal)
			if pauseUntil.After(at) {
				at = pauseUntil
			}
			if best == 0 || at.Before(bestAt) {
				best, bestAt = chat, at
			}
		}
		wait := time.Second
		if best != 0 && running < maxInFlight {
			if !bestAt.After(now) {
				p := queues[best][0]
				inflight[best] = true
				chatNext[best] = now.Add(b.cfg.PerChat)
				nextGlobal = latest3(nextGlobal, now, time.Time{}).Add(interval)
				dispatch(p)
				continue
			}
			wait = bestAt.Sub(now)
		}
		for _, p := range answers {
			if d := time.Until(latest3(p.notBefore, pauseUntil, time.Time{})); d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-timer.C:
		case <-b.outWake:
			dirty = true
		case <-refill.C:
			dirty = true
		case r := <-results:
			running--
			if r.p.msg.Op != opAnswer {
				inflight[r.p.msg.ChatID] = false
			}
			if r.retryAfter > 0 {
				pauseUntil = time.Now().Add(r.retryAfter)
			}
			done := b.settle(ctx, r)
			switch {
			case r.p.msg.Op == opAnswer && !done:
				answers = append(answers, r.p) // dispatched answers left the list
			case r.p.msg.Op == opAnswer:
				delete(known, r.p.id)
			case done:
				delete(known, r.p.id)
				if q := queues[r.p.msg.ChatID]; len(q) > 0 && q[0] == r.p {
					queues[r.p.msg.ChatID] = q[1:]
				}
			}
		}
		timer.Stop()
	}
}

func latest3(a, b, c time.Time) time.Time {
	m := a
	for _, t := range []time.Time{b, c} {
		if t.After(m) {
			m = t
		}
	}
	return m
}

// collect adds the queued rows not held yet.
func (b *Bot) collect(rows pgx.Rows, known map[int64]bool, queues map[int64][]*pending, answers *[]*pending) error {
	defer rows.Close()
	for rows.Next() {
		p := &pending{}
		var payload []byte
		if err := rows.Scan(&p.id, &payload, &p.attempts, &p.notBefore); err != nil {
			return err
		}
		if known[p.id] {
			continue
		}
		if err := json.Unmarshal(payload, &p.msg); err != nil {
			b.log.Error("bot: unreadable outbox row", "id", p.id, "err", err)
			continue
		}
		known[p.id] = true
		if p.msg.Op == opAnswer {
			*answers = append(*answers, p)
		} else {
			queues[p.msg.ChatID] = append(queues[p.msg.ChatID], p)
		}
	}
	return rows.Err()
}

// settleMessage completes a statement that settled an outbox row o: the
// message of the core's that it carried (its key is msg:ID) takes state
// (and the columns set after it); the key is msg:ID:SEND.
func settleMessage(state string) string {
	return ` UPDATE messages SET sending_at = NULL, state = ` + state + ` FROM o
		WHERE o.dedupe_key LIKE 'msg:%' AND messages.id = split_part(o.dedupe_key, ':', 2)::bigint AND messages.state = 'queued'`
}

// settle records the result of a call; it reports whether the message is
// done with (sent, or failed for good) rather than to be tried again.
func (b *Bot) settle(ctx context.Context, r result) bool {
	// Recorded even while the sender stops: see send.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	p := r.p
	switch {
	case r.err == nil:
		sentTotal.WithLabelValues(p.msg.Op, "ok").Inc()
		// A screen sent or edited (buttons of the dialog's): the chat's
		// current screen is this message.
		var screen *int
		nonce := p.msg.nonce()
		switch {
		case nonce == "":
		case p.msg.Op == opSend && r.sent != 0:
			screen = &r.sent
		case p.msg.Op == opEdit:
			screen = &p.msg.MessageID
		}
		// The screen it replaces, when the turn that sent it did not know
		// it (two messages typed within a moment: the first one's screen
		// was not sent yet when the second's turn ran), loses its buttons
		// here; a screen whose buttons were removed is the chat's no more.
		var stripped *int
		if p.msg.Op == opMarkup || (p.msg.Op == opEdit && nonce == "") {
			stripped = &p.msg.MessageID
		}
		// A blank screen (the dialog's, without buttons) replaces the
		// chat's screen as one with buttons does: that loses its own.
		var blank *int
		if p.msg.Blank {
			blank = &p.msg.MessageID
			if p.msg.Op == opSend {
				blank = &r.sent
			}
		}
		if _, err := b.pool.Exec(ctx, `WITH o AS (
			    UPDATE tg_outbox SET state = 'sent', sent_at = now(), attempts = attempts + 1 WHERE id = $1 RETURNING dedupe_key, payload
			), prev AS (
			    SELECT screen_msg FROM tg_chats WHERE chat_id = $2 AND screen_msg <> COALESCE($3::integer, $6::integer)
			), s AS (
			    UPDATE tg_chats SET screen_msg = CASE WHEN $3::integer IS NOT NULL THEN $3 END,
			        screen_nonce = CASE WHEN $3::integer IS NOT NULL THEN $4 END
			    WHERE chat_id = $2 AND ($3::integer IS NOT NULL OR $6::integer IS NOT NULL OR screen_msg = $5::integer)
			), strip AS (
			    INSERT INTO tg_outbox (chat_id, payload, dedupe_key)
			    SELECT $2, jsonb_build_object('op', '`+opMarkup+`', 'chat_id', $2::bigint, 'message_id', screen_msg),
			           'screen:' || $2::bigint || ':' || screen_msg FROM prev -- (screenStripKey)
			    ON CONFLICT (dedupe_key) DO NOTHING
			)`+settleMessage(`'sent', sent_at = now(), body = o.payload->>'text'`), p.id, p.msg.ChatID, screen, nonce, stripped, blank); err != nil {
			// Sent but not recorded: a restart would send it again.
			b.log.Error("bot: outbox: sent message not recorded", "id", p.id, "err", err)
		}
		return true
	case r.asSend:
		p.msg.Op, p.msg.MessageID = opSend, 0
		payload, _ := json.Marshal(p.msg)
		_, _ = b.pool.Exec(ctx, `UPDATE tg_outbox SET payload = $2 WHERE id = $1`, p.id, payload)
		return false
	case r.retryAfter > 0:
		sentTotal.WithLabelValues(p.msg.Op, "429").Inc()
		return false
	case permanent(r.err) || p.attempts+1 >= maxSendAttempts:
		sentTotal.WithLabelValues(p.msg.Op, "failed").Inc()
		b.log.Warn("bot: message dropped", "id", p.id, "chat", p.msg.ChatID, "op", p.msg.Op, "err", r.err)
		_, _ = b.pool.Exec(ctx, `WITH o AS (
			    UPDATE tg_outbox SET state = 'failed', attempts = attempts + 1, last_error = $2 WHERE id = $1 RETURNING dedupe_key, payload
			)`+settleMessage(`'failed', error = $2, body = o.payload->>'text'`), p.id, r.err.Error())
		return true
	default:
		sentTotal.WithLabelValues(p.msg.Op, "retry").Inc()
		p.attempts++
		p.notBefore = time.Now().Add(b.cfg.Retry * time.Duration(1<<min(p.attempts-1, 6)))
		_, _ = b.pool.Exec(ctx, `UPDATE tg_outbox SET attempts = $2, not_before = $3, last_error = $4 WHERE id = $1`,
			p.id, p.attempts, p.notBefore, r.err.Error())
		return false
	}
}

// permanent reports errors that a retry would not fix.
func permanent(err error) bool {
	return errors.Is(err, tgbot.ErrorBadRequest) || errors.Is(err, tgbot.ErrorForbidden) || errors.Is(err, tgbot.ErrorNotFound)
}

// call makes one Bot API call through the client library.
func (b *Bot) call(ctx context.Context, p *pending) result {
	m := p.msg
	var err error
	switch m.Op {
	case opAnswer:
		_, err = b.api.AnswerCallbackQuery(ctx, &tgbot.AnswerCallbackQueryParams{CallbackQueryID: m.Callback, Text: m.Notice})
	case opMarkup:
		// Tried once: stale buttons left are no harm (a tap on one says the
		// menu is out of date), and this chat's next answers wait for no
		// retry of it.
		if _, err := b.api.EditMessageReplyMarkup(ctx, &tgbot.EditMessageReplyMarkupParams{ChatID: m.ChatID, MessageID: m.MessageID}); err != nil {
			b.log.Debug("bot: a stale screen's buttons not removed", "chat", m.ChatID, "err", err)
		}
		return result{p: p}
	case opEdit:
		params := &tgbot.EditMessageTextParams{ChatID: m.ChatID, MessageID: m.MessageID, Text: m.Text}
		if len(m.Inline) > 0 {
			params.ReplyMarkup = inline(m.Inline)
		}
		_, err = b.api.EditMessageText(ctx, params)
		if err != nil && errors.Is(err, tgbot.ErrorBadRequest) {
			if strings.Contains(err.Error(), "not modified") {
				return result{p: p} // already shows this
			}
			return result{p: p, err: err, asSend: true} // the message is gone: send the screen anew
		}
	default:
		params := &tgbot.SendMessageParams{ChatID: m.ChatID, Text: m.Text}
		switch {
		case len(m.Inline) > 0:
			params.ReplyMarkup = inline(m.Inline)
		case m.Contact != "":
			params.ReplyMarkup = &models.ReplyKeyboardMarkup{ResizeKeyboard: true, OneTimeKeyboard: true,
				Keyboard: [][]models.KeyboardButton{{{Text: m.Contact, RequestContact: true}}}}
		default:
			params.ReplyMarkup = &models.ReplyKeyboardRemove{RemoveKeyboard: true}
		}
		var msg *models.Message
		if msg, err = b.api.SendMessage(ctx, params); err == nil && msg != nil {
			return result{p: p, sent: msg.ID}
		}
	}
	var tooMany *tgbot.TooManyRequestsError
	if errors.As(err, &tooMany) {
		return result{p: p, err: err, retryAfter: time.Duration(max(tooMany.RetryAfter, 1)) * time.Second}
	}
	return result{p: p, err: err}
}

// inlineMarkup is the Bot API's InlineKeyboardMarkup as this bot sends
// it: models.InlineKeyboardButton always carries a copy_text button (not
// a pointer, so omitempty keeps it), whose empty text Telegram refuses
// (BUTTON_COPY_TEXT_INVALID), and a button is of one kind.
type inlineMarkup struct {
	InlineKeyboard [][]inlineButton `json:"inline_keyboard"`
}

type inlineButton struct {
	Text         string `json:"text"`
	URL          string `json:"url,omitempty"`
	CallbackData string `json:"callback_data,omitempty"`
}

func inline(rows [][]button) *inlineMarkup {
	kb := make([][]inlineButton, len(rows))
	for i, row := range rows {
		for _, btn := range row {
			if btn.URL != "" {
				kb[i] = append(kb[i], inlineButton{Text: btn.Text, URL: btn.URL})
				continue
			}
			kb[i] = append(kb[i], inlineButton{Text: btn.Text, CallbackData: btn.Data})
		}
	}
	return &inlineMarkup{InlineKeyboard: kb}
}
