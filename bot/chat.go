package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/go-telegram/bot/models"
	"github.com/jackc/pgx/v5"

	"salon/booking"
)

// chat is what the bot keeps of a chat between updates.
type chat struct {
	ID      int64
	UserID  int64
	Lang    string
	LangSet bool
	SalonID int64
	D       dialog
	// screen is the message the dialog's screen was sent as when the
	// turn began (0: not known, or no longer the dialog's), and
	// screenNonce its buttons' nonce.
	screen      int
	screenNonce string
}

// step is where a dialog is.
type step string

// Steps of the dialogs.
const (
	stepNone        step = ""
	stepSalon       step = "salon"
	stepService     step = "service"
	stepMaster      step = "master"
	stepDay         step = "day"
	stepTime        step = "time"
	stepContact     step = "contact"
	stepConfirm     step = "confirm"
	stepTaken       step = "taken"
	stepDone        step = "done"
	stepMy          step = "my"
	stepMoveConfirm step = "moveconfirm"
)

// dialog is where the user is in a conversation. What each button of the
// keyboard on screen does is kept here (Actions); a button carries only the
// keyboard's nonce and its index, so stale and forged taps are recognised.
type dialog struct {
	Step       step      `json:"step,omitempty"`
	Nonce      string    `json:"nonce,omitempty"`
	Actions    []action  `json:"actions,omitempty"`
	Service    int64     `json:"service,omitempty"`
	Master     int64     `json:"master,omitempty"` // 0: any master
	Day        string    `json:"day,omitempty"`
	Page       int       `json:"page,omitempty"` // of the day list
	SlotMaster int64     `json:"slot_master,omitempty"`
	SlotAt     time.Time `json:"slot_at,omitzero"`
	Phone      string    `json:"phone,omitempty"`
	// PhoneProven says Phone came from the user's own shared contact:
	// Telegram vouches that it is theirs.
	PhoneProven bool   `json:"phone_proven,omitempty"`
	Key         string `json:"key,omitempty"`    // idempotency key of this booking attempt
	Moving      int64  `json:"moving,omitempty"` // the booking being rescheduled
	// Until is the last day the booking being moved may go to (the
	// balance paying it ends then; "": no such day), and UntilHint that
	// balance's code's end.
	Until     string `json:"until,omitempty"`
	UntilHint string `json:"until_hint,omitempty"`
	// Items are the services of a visit chosen before Service (each with
	// its master, 0: any); SlotMasters the masters of the visit's chosen
	// time, in visit order.
	Items       []visitPick `json:"items,omitempty"`
	SlotMasters []int64     `json:"slot_masters,omitempty"`
	// Waiting: the phone asked for is to join the waitlist, not to book.
	Waiting bool `json:"waiting,omitempty"`
	// CodeMisses are the codes sent that found no balance since
	// CodeMissesSince (an hour at most: then the count starts again).
	CodeMisses      int       `json:"code_misses,omitempty"`
	CodeMissesSince time.Time `json:"code_misses_since,omitzero"`
}

// visitPick is one service of a visit as the user chose it.
type visitPick struct {
	Service int64 `json:"s"`
	Master  int64 `json:"m,omitempty"`
}

// keep is a fresh dialog that remembers the user's phone, and the codes
// that found nothing.
func (d dialog) keep() dialog {
	return dialog{Phone: d.Phone, PhoneProven: d.PhoneProven, CodeMisses: d.CodeMisses, CodeMissesSince: d.CodeMissesSince}
}

// turn is the handling of one update: the chat as loaded, and what the
// answer will be (new state, queued messages), saved in the same transaction.
type turn struct {
	b      *Bot
	ctx    context.Context
	tx     pgx.Tx
	c      chat
	from   models.User
	msgID  int    // the message whose button was tapped: answers edit it
	tapped int    // the message whose button was tapped (0: none), as msgID began
	cbID   string // the callback query to answer (always)
	notice string // the answer's text, if any
	// redact: the update held a credential (a balance's code), which the
	// inbox must not keep.
	redact bool
	// fromNotice: a notice's button was tapped (a reminder's, an
	// offer's): when it cannot act (the booking not found, cancelled, past
	// its cutoff; the offer gone), the tap's answer says so, and the
	// dialog stays as it is.
	fromNotice bool
	// lead is said at the head of the next screen confirm or my shows
	// (why a code or a contact sent on it was refused, why a booking of
	// the list cannot be changed).
	lead   string
	out    []outMsg
	salonC *booking.Salon
	// after is work for once the turn has committed (a provider call).
	after []func(ctx context.Context)
	// the salon's menu and masters, read at most once a turn
	svcs    []booking.SalonService
	masterL []booking.Master
}

// savedChat is a chat's row as stored (found is false for a new chat).
type savedChat struct {
	found   bool
	userID  int64
	lang    string
	langSet bool
	salonID int64
	dialog  []byte
	// screen and screenNonce: the message the chat's last screen was sent
	// as, and its buttons' nonce.
	screen      int
	screenNonce string
}

// load starts a turn from the chat's saved state (a new chat starts in the
// user's language).
func (b *Bot) load(ctx context.Context, tx pgx.Tx, chatID int64, u *models.Update, saved savedChat) *turn {
	t := &turn{b: b, ctx: ctx, tx: tx, c: chat{ID: chatID}}
	switch {
	case u.Message != nil && u.Message.From != nil:
		t.from = *u.Message.From
	case u.CallbackQuery != nil:
		t.from = u.CallbackQuery.From
	}
	// Every core call of the turn asks as this Telegram user: Telegram
	// vouches for who sent the update.
	t.ctx = booking.As(ctx, booking.ByIdentity(t.identity()))
	if saved.found {
		t.c.UserID, t.c.Lang, t.c.LangSet, t.c.SalonID = saved.userID, saved.lang, saved.langSet, saved.salonID
		if err := json.Unmarshal(saved.dialog, &t.c.D); err != nil {
			t.c.D = dialog{} // an unreadable state starts over
		}
		if saved.screenNonce != "" && saved.screenNonce == t.c.D.Nonce {
			t.c.screen, t.c.screenNonce = saved.screen, saved.screenNonce
		}
	}
	if t.c.UserID == 0 {
		t.c.UserID = t.from.ID
	}
	if !t.c.LangSet && (t.from.LanguageCode != "" || t.c.Lang == "") {
		t.c.Lang = langOf(t.from.LanguageCode)
	}
	return t
}

// save writes, in one round trip, the chat's state, the answers (the
// callback's first) and the update's being handled.
func (t *turn) save(ctx context.Context, updateID int64) error {
	d, err := json.Marshal(t.c.D)
	if err != nil {
		return err
	}
	var salon *int64
	if t.c.SalonID != 0 {
		salon = &t.c.SalonID
	}
	batch := &pgx.Batch{}
	batch.Queue(`
		INSERT INTO tg_chats (chat_id, user_id, lang, lang_set, salon_id, dialog, updated_at) VALUES ($1, $2, $3, $4, $5, $6, now())
		ON CONFLICT (chat_id) DO UPDATE SET user_id = EXCLUDED.user_id, lang = EXCLUDED.lang, lang_set = EXCLUDED.lang_set,
		    salon_id = EXCLUDED.salon_id, dialog = EXCLUDED.dialog, updated_at = now()`,
		t.c.ID, t.c.UserID, t.c.Lang, t.c.LangSet, salon, d)
	if t.c.screen != 0 && t.c.screen != t.tapped && t.c.D.Nonce != t.c.screenNonce {
		// A message typed (a code, a command), or a tap on another
		// message (a notice's), moved the dialog on: the screen it was on
		// loses its buttons, which would be stale (after the answer, which
		// it must not hold up). Keyed as the sender keys the strip of a
		// screen replaced (see settle: a screen the turn did not know, not
		// sent yet when it ran), so that it is queued once.
		t.out = append(t.out, outMsg{Op: opMarkup, ChatID: t.c.ID, MessageID: t.c.screen, Key: screenStripKey(t.c.ID, t.c.screen)})
	}
	if t.cbID != "" {
		t.out = append([]outMsg{{Op: opAnswer, ChatID: t.c.ID, Callback: t.cbID, Notice: t.notice}}, t.out...)
	}
	if err := queueInto(batch, t.out); err != nil {
		return err
	}
	if t.redact {
		// The update carried a credential (a balance's code): the inbox
		// keeps it handled, not readable.
		batch.Queue(`UPDATE tg_updates SET processed_at = now(), payload = convert_to('{"redacted": "a balance code"}', 'UTF8')
			WHERE update_id = $1`, updateID)
	} else {
		batch.Queue(`UPDATE tg_updates SET processed_at = now() WHERE update_id = $1`, updateID)
	}
	if err := t.tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("save turn: %w", err)
	}
	return nil
}

func (t *turn) tr(key string, args ...any) string { return tr(t.c.Lang, key, args...) }

func (t *turn) identity() booking.Identity { return booking.TelegramUser(t.from.ID) }

// name is the user's Telegram name made fit for a booking: cleaned and cut
// to the core's limit, or the username, or "Telegram".
func (t *turn) name() string {
	for _, n := range []string{t.from.FirstName + " " + t.from.LastName, t.from.Username} {
		if clean := booking.CleanName(n); clean != "" {
			return clean
		}
	}
	return "Telegram"
}

// show puts a screen up: on the tapped message when there is one (edited in
// place), else as a new message.
func (t *turn) show(text string, k *keyboard) {
	var rows [][]button
	if k != nil {
		rows = k.rows
	} else {
		t.c.D.Nonce, t.c.D.Actions = "", nil
	}
	m := outMsg{Op: opSend, ChatID: t.c.ID, Text: text, Inline: rows}
	if t.msgID != 0 {
		m.Op, m.MessageID = opEdit, t.msgID
	}
	m.Blank = m.nonce() == ""
	t.out = append(t.out, m)
}

// say sends a new message without a keyboard.
func (t *turn) say(text string) {
	t.out = append(t.out, outMsg{Op: opSend, ChatID: t.c.ID, Text: text})
}

// handle is the dialog: what an update does.
func (b *Bot) handle(t *turn, u *models.Update) error {
	if b.turnHook != nil {
		b.turnHook(u)
	}
	switch {
	case u.CallbackQuery != nil:
		t.cbID = u.CallbackQuery.ID
		if m := u.CallbackQuery.Message.Message; m != nil {
			t.msgID, t.tapped = m.ID, m.ID
		}
		return t.onTap(u.CallbackQuery.Data)
	case u.Message != nil && u.Message.Contact != nil:
		return t.onContact(u.Message.Contact)
	case u.Message != nil && strings.HasPrefix(u.Message.Text, "/"):
		return t.onCommand(sanitize(u.Message.Text))
	case u.Message != nil && u.Message.Text != "":
		text := sanitize(u.Message.Text)
		switch {
		case t.c.D.Step == stepConfirm && t.c.D.Moving == 0:
			return t.onCode(text)
		case booking.LooksLikeCode(text):
			// A code sent before its step, or after: not echoed, not kept,
			// and said where it goes.
			t.redact = true
			if t.c.D.Step == stepContact {
				s, err := t.salon()
				if err != nil {
					return t.explain(err)
				}
				t.askContact(t.tr("code_at_contact", booking.ExamplePhone(s.Country)))
				return nil
			}
			t.say(t.tr("code_not_now"))
			return nil
		case t.c.D.Step == stepContact:
			return t.onPhone(text)
		}
		t.say(t.tr("dont_understand"))
	}
	return nil
}

// sanitize drops from typed text what no field takes (NUL and other
// control characters, invalid UTF-8); the core checks the rest.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}
