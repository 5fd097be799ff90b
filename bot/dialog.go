package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

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
}

// dialog is where the user is in a conversation. What each button of the
// keyboard on screen does is kept here (Actions); a button carries only the
// keyboard's nonce and its index, so stale and forged taps are recognised.
type dialog struct {
	Step       string    `json:"step,omitempty"`
	Nonce      string    `json:"nonce,omitempty"`
	Actions    []string  `json:"actions,omitempty"`
	Service    int64     `json:"service,omitempty"`
	Master     int64     `json:"master,omitempty"` // 0: any master
	Day        string    `json:"day,omitempty"`
	SlotMaster int64     `json:"slot_master,omitempty"`
	SlotAt     time.Time `json:"slot_at,omitzero"`
	Phone      string    `json:"phone,omitempty"`
	Key        string    `json:"key,omitempty"`    // idempotency key of this booking attempt
	Moving     int64     `json:"moving,omitempty"` // the booking being rescheduled
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
	cbID   string // the callback query to answer (always)
	notice string // the answer's text, if any
	out    []outMsg
	salonC *booking.Salon
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
	if saved.found {
		t.c.UserID, t.c.Lang, t.c.LangSet, t.c.SalonID = saved.userID, saved.lang, saved.langSet, saved.salonID
		if err := json.Unmarshal(saved.dialog, &t.c.D); err != nil {
			t.c.D = dialog{} // an unreadable state starts over
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
	if t.cbID != "" {
		t.out = append([]outMsg{{Op: opAnswer, ChatID: t.c.ID, Callback: t.cbID, Notice: t.notice}}, t.out...)
	}
	if err := queueInto(batch, t.out); err != nil {
		return err
	}
	batch.Queue(`UPDATE tg_updates SET processed_at = now() WHERE update_id = $1`, updateID)
	if err := t.tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("save turn: %w", err)
	}
	return nil
}

func (t *turn) tr(key string, args ...any) string { return tr(t.c.Lang, key, args...) }

// keyboard is an inline keyboard being built; each button's action is
// remembered in the dialog under the keyboard's nonce.
type keyboard struct {
	t    *turn
	rows [][]button
}

func (t *turn) keyboard() *keyboard {
	var n [4]byte
	_, _ = rand.Read(n[:])
	t.c.D.Nonce, t.c.D.Actions = hex.EncodeToString(n[:]), nil
	return &keyboard{t: t}
}

// btn makes a button that performs action.
func (k *keyboard) btn(label, action string) button {
	k.t.c.D.Actions = append(k.t.c.D.Actions, action)
	return button{Text: label, Data: k.t.c.D.Nonce + ":" + strconv.Itoa(len(k.t.c.D.Actions)-1)}
}

func (k *keyboard) row(b ...button) { k.rows = append(k.rows, b) }

// grid lays buttons out n to a row.
func (k *keyboard) grid(n int, bs []button) {
	for i := 0; i < len(bs); i += n {
		k.row(bs[i:min(i+n, len(bs))]...)
	}
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
	if t.msgID != 0 {
		t.out = append(t.out, outMsg{Op: opEdit, ChatID: t.c.ID, MessageID: t.msgID, Text: text, Inline: rows})
		return
	}
	t.out = append(t.out, outMsg{Op: opSend, ChatID: t.c.ID, Text: text, Inline: rows})
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
			t.msgID = m.ID
		}
		return t.onTap(u.CallbackQuery.Data)
	case u.Message != nil && u.Message.Contact != nil:
		c := u.Message.Contact
		if c.UserID != 0 && c.UserID != t.from.ID {
			t.askContact(t.tr("not_your_contact"))
			return nil
		}
		return t.onPhone(c.PhoneNumber)
	case u.Message != nil && strings.HasPrefix(u.Message.Text, "/"):
		return t.onCommand(u.Message.Text)
	case u.Message != nil && u.Message.Text != "":
		if t.c.D.Step == "contact" {
			return t.onPhone(u.Message.Text)
		}
		t.say(t.tr("dont_understand"))
	}
	return nil
}

func (t *turn) onCommand(text string) error {
	cmd, arg, _ := strings.Cut(strings.TrimSpace(text), " ")
	cmd, _, _ = strings.Cut(cmd, "@") // /start@salon_bot
	arg = strings.TrimSpace(arg)
	switch strings.ToLower(cmd) {
	case "/start":
		if arg == "" {
			return t.startBooking("")
		}
		s, err := t.b.svc.SalonBySlug(t.ctx, arg)
		if errors.Is(err, booking.ErrNotFound) {
			return t.salons(t.tr("unknown_salon", arg))
		}
		if err != nil {
			return err
		}
		t.c.SalonID, t.salonC = s.ID, s
		t.c.D = dialog{}
		return t.services(t.tr("welcome", s.Name) + "\n")
	case "/book":
		return t.startBooking("")
	case "/my":
		return t.my()
	case "/help":
		t.c.D = dialog{}
		t.say(t.tr("help"))
	case "/lang":
		k := t.keyboard()
		k.row(k.btn("Русский", "lang:ru"), k.btn("English", "lang:en"))
		t.show(t.tr("lang_q"), k)
	case "/link":
		return t.link(arg)
	default:
		t.say(t.tr("dont_understand"))
	}
	return nil
}

// startBooking starts the dialog in the chat's salon, or asks for one.
func (t *turn) startBooking(prefix string) error {
	t.c.D = dialog{}
	if t.c.SalonID == 0 {
		return t.salons(prefix)
	}
	return t.services(prefix)
}

func (t *turn) onTap(data string) error {
	nonce, idx, ok := strings.Cut(data, ":")
	i, err := strconv.Atoi(idx)
	if !ok || err != nil || nonce == "" || nonce != t.c.D.Nonce || i < 0 || i >= len(t.c.D.Actions) {
		t.notice = t.tr("stale") // a button of an old keyboard, or not ours
		return nil
	}
	verb, rest, _ := strings.Cut(t.c.D.Actions[i], ":")
	args := strings.Split(rest, ":")
	id := func(n int) int64 {
		if n >= len(args) {
			return 0
		}
		v, _ := strconv.ParseInt(args[n], 10, 64)
		return v
	}
	switch verb {
	case "salon":
		t.c.SalonID, t.salonC, t.c.D = id(0), nil, dialog{}
		s, err := t.salon()
		if err != nil {
			return err
		}
		return t.services(t.tr("welcome", s.Name) + "\n")
	case "svc":
		t.c.D.Service = id(0)
		return t.masters()
	case "m":
		t.c.D.Master = id(0)
		return t.days()
	case "day":
		t.c.D.Day = rest
		return t.times()
	case "t", "alt":
		t.c.D.SlotMaster, t.c.D.SlotAt, t.c.D.Key = id(0), time.Unix(id(1), 0), ""
		if t.c.D.Moving != 0 {
			return t.moveConfirm()
		}
		return t.afterSlot()
	case "back":
		return t.back(rest)
	case "confirm":
		return t.book()
	case "lang":
		t.c.Lang, t.c.LangSet = rest, true
		t.show(t.tr("lang_set"), nil)
	case "my":
		return t.my()
	case "cancel":
		return t.cancelQuestion(id(0), id(1))
	case "cancelyes":
		return t.cancel(id(0), id(1))
	case "move":
		return t.moveStart(id(0), id(1))
	case "movehere":
		return t.move()
	}
	return nil
}

func (t *turn) back(to string) error {
	switch to {
	case "service":
		return t.services("")
	case "master":
		return t.masters()
	case "day":
		return t.days()
	case "time":
		return t.times()
	case "my":
		return t.my()
	}
	return t.startBooking("")
}

func (t *turn) salon() (*booking.Salon, error) {
	if t.salonC == nil {
		s, err := t.b.svc.Salon(t.ctx, t.c.SalonID)
		if err != nil {
			return nil, err
		}
		t.salonC = s
	}
	return t.salonC, nil
}

func (t *turn) salons(prefix string) error {
	list, err := t.b.svc.Salons(t.ctx, 30)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		t.show(prefix+t.tr("no_salons"), nil)
		return nil
	}
	k := t.keyboard()
	for _, s := range list {
		k.row(k.btn(s.Name, fmt.Sprintf("salon:%d", s.ID)))
	}
	t.c.D.Step = "salon"
	t.show(strings.TrimSpace(prefix+"\n"+t.tr("choose_salon")), k)
	return nil
}

func (t *turn) services(prefix string) error {
	s, err := t.salon()
	if err != nil {
		return err
	}
	list := t.menu()
	if len(list) == 0 {
		t.show(prefix+t.tr("no_services"), nil)
		return nil
	}
	k := t.keyboard()
	for _, sv := range list {
		label := fmt.Sprintf("%s · %d %s · %s", sv.Name, sv.DurationMin, t.tr("min"), sv.Price.Format(s.Currency, t.c.Lang))
		k.row(k.btn(label, fmt.Sprintf("svc:%d", sv.ID)))
	}
	t.c.D.Step, t.c.D.Moving = "service", 0
	t.show(prefix+t.tr("choose_service"), k)
	return nil
}

// menu returns the salon's services, read once a turn.
func (t *turn) menu() []booking.SalonService {
	if t.svcs == nil {
		if s, err := t.salon(); err == nil {
			t.svcs, _ = t.b.svc.Services(t.ctx, s.ID)
		}
	}
	return t.svcs
}

// staff returns the salon's masters, read once a turn.
func (t *turn) staff() []booking.Master {
	if t.masterL == nil {
		if s, err := t.salon(); err == nil {
			t.masterL, _ = t.b.svc.Masters(t.ctx, s.ID, 0)
		}
	}
	return t.masterL
}

// service is the chosen service (zero when gone).
func (t *turn) service() booking.SalonService {
	for _, sv := range t.menu() {
		if sv.ID == t.c.D.Service {
			return sv
		}
	}
	return booking.SalonService{}
}

func (t *turn) serviceName() string { return t.service().Name }

func (t *turn) masters() error {
	var list []booking.Master
	for _, m := range t.staff() {
		if slices.Contains(m.ServiceIDs, t.c.D.Service) {
			list = append(list, m)
		}
	}
	k := t.keyboard()
	if len(list) == 0 {
		k.row(k.btn(t.tr("back"), "back:service"))
		t.show(t.tr("no_masters"), k)
		return nil
	}
	k.row(k.btn(t.tr("any_master"), "m:0"))
	var bs []button
	for _, m := range list {
		bs = append(bs, k.btn(m.Name, fmt.Sprintf("m:%d", m.ID)))
	}
	k.grid(2, bs)
	k.row(k.btn(t.tr("back"), "back:service"))
	t.c.D.Step = "master"
	t.show(t.tr("choose_master", t.serviceName()), k)
	return nil
}

// days offers the next two weeks' days that have a free time.
func (t *turn) days() error {
	s, err := t.salon()
	if err != nil {
		return err
	}
	slots, err := t.b.svc.Slots(t.ctx, booking.SlotQuery{SalonID: s.ID, ServiceID: t.c.D.Service, MasterID: t.c.D.Master,
		From: s.Today(t.b.svc.Now()), Days: 14})
	if err != nil && !errors.Is(err, booking.ErrInvalid) {
		return err
	}
	k := t.keyboard()
	var bs []button
	seen := map[booking.Date]bool{}
	for _, sl := range slots {
		d := booking.DateOf(sl.Start.In(s.Location()))
		if !seen[d] {
			seen[d] = true
			bs = append(bs, k.btn(dayLabel(t.c.Lang, d), "day:"+d.String()))
		}
	}
	k.grid(3, bs)
	backTo := "back:master"
	if t.c.D.Moving != 0 {
		backTo = "back:my"
	}
	k.row(k.btn(t.tr("back"), backTo))
	t.c.D.Step = "day"
	title := t.tr("choose_day", t.serviceName())
	if t.c.D.Moving != 0 {
		title = t.tr("move_day", t.serviceName())
	}
	if len(bs) == 0 {
		title = t.tr("no_days")
	}
	t.show(title, k)
	return nil
}

// times offers the free times of the chosen day (for "any master", the
// first master free at each time).
func (t *turn) times() error {
	s, err := t.salon()
	if err != nil {
		return err
	}
	day, err := booking.ParseDate(t.c.D.Day)
	if err != nil {
		return t.days()
	}
	slots, err := t.b.svc.Slots(t.ctx, booking.SlotQuery{SalonID: s.ID, ServiceID: t.c.D.Service, MasterID: t.c.D.Master, From: day})
	if err != nil && !errors.Is(err, booking.ErrInvalid) {
		return err
	}
	if len(slots) == 0 {
		if err := t.days(); err != nil {
			return err
		}
		t.notice = t.tr("no_times")
		return nil
	}
	k := t.keyboard()
	var bs []button
	seen := map[int64]bool{}
	for _, sl := range slots {
		if seen[sl.Start.Unix()] {
			continue
		}
		seen[sl.Start.Unix()] = true
		bs = append(bs, k.btn(sl.Start.In(s.Location()).Format("15:04"), fmt.Sprintf("t:%d:%d", sl.MasterID, sl.Start.Unix())))
	}
	k.grid(4, bs)
	k.row(k.btn(t.tr("back"), "back:day"))
	t.c.D.Step = "time"
	t.show(t.tr("choose_time", dayLabel(t.c.Lang, day)), k)
	return nil
}

// afterSlot goes on from a chosen time: to the phone question, unless the
// salon knows this user's phone already.
func (t *turn) afterSlot() error {
	if t.c.D.Phone == "" {
		c, err := t.b.svc.ClientByTelegram(t.ctx, t.c.SalonID, t.from.ID)
		if err != nil && !errors.Is(err, booking.ErrNotFound) {
			return err
		}
		if c != nil {
			t.c.D.Phone = c.Phone
		}
	}
	if t.c.D.Phone != "" {
		return t.confirm()
	}
	s, err := t.salon()
	if err != nil {
		return err
	}
	// The time list becomes the chosen time; the question comes below.
	t.show("✓ "+when(t.c.Lang, t.c.D.SlotAt, s.Location()), nil)
	t.msgID = 0
	t.askContact(t.tr("ask_phone"))
	return nil
}

func (t *turn) askContact(text string) {
	t.c.D.Step = "contact"
	t.c.D.Nonce, t.c.D.Actions = "", nil
	t.out = append(t.out, outMsg{Op: opSend, ChatID: t.c.ID, Text: text, Contact: t.tr("share_phone")})
}

func (t *turn) onPhone(raw string) error {
	if t.c.D.Step != "contact" {
		t.say(t.tr("dont_understand"))
		return nil
	}
	phone, err := booking.NormalizePhone(raw)
	if err != nil {
		t.askContact(t.tr("bad_phone", strings.TrimSpace(raw)))
		return nil
	}
	t.c.D.Phone = phone
	return t.confirm()
}

// summary is the lines that describe a booking.
func (t *turn) summary(service, master string, at time.Time, price booking.Money) string {
	s, _ := t.salon()
	loc, cur := time.UTC, "RUB"
	if s != nil {
		loc, cur = s.Location(), s.Currency
	}
	return fmt.Sprintf("%s: %s\n%s: %s\n%s: %s\n%s: %s", t.tr("service"), service, t.tr("master"), master,
		t.tr("when"), when(t.c.Lang, at, loc), t.tr("price"), price.Format(cur, t.c.Lang))
}

func (t *turn) masterName(id int64) string {
	for _, m := range t.staff() {
		if m.ID == id {
			return m.Name
		}
	}
	return ""
}

func (t *turn) servicePrice() booking.Money { return t.service().Price }

// confirm shows what will be booked, with one key for this attempt.
func (t *turn) confirm() error {
	if t.c.D.Key == "" {
		var k [12]byte
		_, _ = rand.Read(k[:])
		t.c.D.Key = hex.EncodeToString(k[:])
	}
	k := t.keyboard()
	k.row(k.btn(t.tr("confirm"), "confirm"))
	k.row(k.btn(t.tr("back"), "back:time"))
	t.c.D.Step = "confirm"
	t.show(fmt.Sprintf("%s\n%s\n%s: %s", t.tr("confirm_title"),
		t.summary(t.serviceName(), t.masterName(t.c.D.SlotMaster), t.c.D.SlotAt, t.servicePrice()), t.tr("phone"), t.c.D.Phone), k)
	return nil
}

// book books the confirmed time. The attempt's idempotency key makes a
// redelivered or repeated confirm return the same booking.
func (t *turn) book() error {
	s, err := t.salon()
	if err != nil {
		return err
	}
	name := strings.TrimSpace(t.from.FirstName + " " + t.from.LastName)
	b, err := t.b.svc.Book(t.ctx, booking.BookRequest{
		SalonID: s.ID, ServiceID: t.c.D.Service, MasterID: t.c.D.SlotMaster, StartsAt: t.c.D.SlotAt,
		Client: booking.ClientInput{Name: name, Phone: t.c.D.Phone, TelegramID: t.from.ID},
		Source: booking.SourceBot, IdempotencyKey: "tg:" + t.c.D.Key,
	})
	var taken *booking.SlotTakenError
	switch {
	case errors.As(err, &taken):
		return t.alternatives(taken.Alternatives)
	case errors.Is(err, booking.ErrInvalid):
		t.notice = t.tr("gone")
		return t.days()
	case err != nil:
		return err
	}
	text := t.tr("booked") + "\n" + t.summary(t.serviceName(), t.masterName(b.MasterID), b.StartsAt, b.Price)
	switch {
	case b.Status == booking.StatusPending:
		text += "\n" + t.tr("pending_note", when(t.c.Lang, b.HoldExpiresAt, s.Location()), b.Deposit.Format(s.Currency, t.c.Lang))
	case b.Deposit > 0:
		text += "\n" + t.tr("deposit_note", b.Deposit.Format(s.Currency, t.c.Lang))
	}
	phone := t.c.D.Phone
	t.c.D = dialog{Step: "done", Phone: phone}
	t.show(text, nil)
	return nil
}

// alternatives offers the nearest free times after a lost race.
func (t *turn) alternatives(alts []booking.Slot) error {
	s, err := t.salon()
	if err != nil {
		return err
	}
	k := t.keyboard()
	for _, a := range alts {
		label := when(t.c.Lang, a.Start, s.Location()) + " · " + t.masterName(a.MasterID)
		k.row(k.btn(label, fmt.Sprintf("alt:%d:%d", a.MasterID, a.Start.Unix())))
	}
	k.row(k.btn(t.tr("back"), "back:day"))
	t.c.D.Step, t.c.D.Key = "taken", ""
	text := t.tr("taken")
	if len(alts) == 0 {
		text = t.tr("taken_none")
	}
	t.show(text, k)
	return nil
}

// my lists the user's upcoming bookings in every salon, with buttons.
func (t *turn) my() error {
	views, err := t.b.svc.TelegramBookings(t.ctx, t.from.ID, t.b.svc.Now())
	if err != nil {
		return err
	}
	t.c.D = dialog{Step: "my", Phone: t.c.D.Phone}
	if len(views) == 0 {
		t.show(t.tr("my_none"), nil)
		return nil
	}
	var b strings.Builder
	b.WriteString(t.tr("my_title"))
	k := t.keyboard()
	for i, v := range views[:min(len(views), 10)] {
		fmt.Fprintf(&b, "\n%d. %s — %s, %s (%s)", i+1, when(t.c.Lang, v.StartsAt, v.Salon.Location()), v.ServiceName, v.MasterName, v.Salon.Name)
		k.row(k.btn(t.tr("cancel_n", i+1), fmt.Sprintf("cancel:%d:%d", v.SalonID, v.ID)),
			k.btn(t.tr("move_n", i+1), fmt.Sprintf("move:%d:%d", v.SalonID, v.ID)))
	}
	t.show(b.String(), k)
	return nil
}

// own loads a booking of this user that may still be changed online; when
// it may not, it says why and returns nil.
func (t *turn) own(salonID, bookingID int64) (*booking.View, error) {
	v, err := t.b.svc.View(t.ctx, salonID, bookingID)
	if errors.Is(err, booking.ErrNotFound) || (err == nil && v.ClientTelegramID != t.from.ID) {
		t.notice = t.tr("stale")
		return nil, t.my()
	}
	if err != nil {
		return nil, err
	}
	if !v.Status.Active() {
		t.show(t.tr("not_active"), nil)
		return nil, nil
	}
	if t.b.svc.Now().After(v.StartsAt.Add(-time.Duration(v.Salon.CutoffHours) * time.Hour)) {
		t.show(t.tr("too_late", v.Salon.CutoffHours), nil)
		return nil, nil
	}
	t.c.SalonID, t.salonC = v.SalonID, &v.Salon
	return v, nil
}

func (t *turn) cancelQuestion(salonID, bookingID int64) error {
	v, err := t.own(salonID, bookingID)
	if v == nil {
		return err
	}
	k := t.keyboard()
	k.row(k.btn(t.tr("cancel_yes"), fmt.Sprintf("cancelyes:%d:%d", salonID, bookingID)), k.btn(t.tr("keep"), "my"))
	t.show(t.tr("cancel_q")+"\n"+t.summary(v.ServiceName, v.MasterName, v.StartsAt, v.Price), k)
	return nil
}

func (t *turn) cancel(salonID, bookingID int64) error {
	v, err := t.own(salonID, bookingID)
	if v == nil {
		return err
	}
	_, err = t.b.svc.Cancel(t.ctx, booking.CancelRequest{SalonID: salonID, BookingID: bookingID, Actor: booking.ClientActor(v.ClientID)})
	if t.changeRefused(err, v) || err != nil {
		return ignoreShown(err)
	}
	t.c.D = dialog{Phone: t.c.D.Phone}
	t.show(t.tr("cancelled")+"\n"+t.summary(v.ServiceName, v.MasterName, v.StartsAt, v.Price), nil)
	return nil
}

func (t *turn) moveStart(salonID, bookingID int64) error {
	v, err := t.own(salonID, bookingID)
	if v == nil {
		return err
	}
	t.c.D = dialog{Moving: v.ID, Service: v.ServiceID, Master: v.MasterID, Phone: t.c.D.Phone}
	return t.days()
}

func (t *turn) moveConfirm() error {
	s, err := t.salon()
	if err != nil {
		return err
	}
	k := t.keyboard()
	k.row(k.btn(t.tr("move_here"), "movehere"))
	k.row(k.btn(t.tr("back"), "back:time"))
	t.c.D.Step = "moveconfirm"
	t.show(t.serviceName()+"\n"+when(t.c.Lang, t.c.D.SlotAt, s.Location())+" · "+t.masterName(t.c.D.SlotMaster), k)
	return nil
}

func (t *turn) move() error {
	v, err := t.own(t.c.SalonID, t.c.D.Moving)
	if v == nil {
		return err
	}
	b, err := t.b.svc.Reschedule(t.ctx, booking.RescheduleRequest{SalonID: v.SalonID, BookingID: v.ID, StartsAt: t.c.D.SlotAt,
		MasterID: t.c.D.SlotMaster, Actor: booking.ClientActor(v.ClientID)})
	var taken *booking.SlotTakenError
	switch {
	case errors.As(err, &taken):
		return t.alternatives(taken.Alternatives)
	case errors.Is(err, booking.ErrInvalid):
		t.notice = t.tr("gone")
		return t.days()
	case t.changeRefused(err, v):
		return nil
	case err != nil:
		return err
	}
	t.c.D = dialog{Phone: t.c.D.Phone}
	t.show(t.tr("moved")+"\n"+t.summary(v.ServiceName, t.masterName(b.MasterID), b.StartsAt, b.Price), nil)
	return nil
}

// changeRefused shows why the salon's rules refused a change, if they did.
func (t *turn) changeRefused(err error, v *booking.View) bool {
	switch {
	case errors.Is(err, booking.ErrTooLate):
		t.show(t.tr("too_late", v.Salon.CutoffHours), nil)
	case errors.Is(err, booking.ErrConflict), errors.Is(err, booking.ErrForbidden), errors.Is(err, booking.ErrNotFound):
		t.show(t.tr("not_active"), nil)
	default:
		return false
	}
	return true
}

// ignoreShown drops the errors changeRefused has shown to the user.
func ignoreShown(err error) error {
	for _, k := range []error{booking.ErrTooLate, booking.ErrConflict, booking.ErrForbidden, booking.ErrNotFound} {
		if errors.Is(err, k) {
			return nil
		}
	}
	return err
}

// link links a master's Telegram account with the code from the salon.
func (t *turn) link(code string) error {
	if code == "" {
		t.say(t.tr("link_usage"))
		return nil
	}
	m, err := t.b.svc.LinkMaster(t.ctx, code, t.from.ID)
	switch {
	case errors.Is(err, booking.ErrNotFound):
		t.say(t.tr("link_bad"))
		return nil
	case errors.Is(err, booking.ErrConflict):
		t.say(t.tr("link_conflict"))
		return nil
	case err != nil:
		return err
	}
	s, err := t.b.svc.Salon(t.ctx, m.SalonID)
	if err != nil {
		return err
	}
	t.say(t.tr("link_ok", m.Name, s.Name))
	return nil
}
