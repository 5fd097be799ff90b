package bot

import (
	"errors"
	"strings"

	"salon/booking"
)

func (t *turn) onCommand(text string) error {
	cmd, arg, _ := strings.Cut(strings.TrimSpace(text), " ")
	cmd, _, _ = strings.Cut(cmd, "@") // /start@salon_bot
	arg, cmd = strings.TrimSpace(arg), strings.ToLower(cmd)
	// A balance's code after a command (sent in the wrong place) is not
	// kept in the inbox (after /start, once no salon's link name is it).
	t.redact = cmd != "/start" && booking.LooksLikeCode(arg)
	switch cmd {
	case "/start":
		if arg == "" {
			return t.startBooking("")
		}
		if token, ok := strings.CutPrefix(arg, DeepLinkPrefix); ok {
			return t.claimBooking(token)
		}
		s, err := t.b.svc.SalonBySlug(t.ctx, arg)
		if errors.Is(err, booking.ErrNotFound) && booking.LooksLikeCode(arg) {
			t.redact = true // (not echoed either)
			return t.salons(t.tr("code_not_now") + "\n")
		}
		if errors.Is(err, booking.ErrNotFound) {
			return t.salons(t.tr("unknown_salon", arg))
		}
		if err != nil {
			return t.explain(err)
		}
		t.c.SalonID, t.salonC = s.ID, s
		t.c.D = t.c.D.keep()
		return t.services(t.tr("welcome", s.Name) + "\n")
	case "/book":
		return t.startBooking("")
	case "/my":
		return t.my()
	case "/help":
		t.c.D = t.c.D.keep()
		t.say(t.tr("help"))
	case "/lang":
		k := t.keyboard()
		k.row(k.btn("Русский", action{Verb: doLang, Lang: "ru"}), k.btn("English", action{Verb: doLang, Lang: "en"}))
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
	t.c.D = t.c.D.keep()
	if t.c.SalonID == 0 {
		return t.salons(prefix)
	}
	return t.services(prefix)
}

func (t *turn) salons(prefix string) error {
	list, err := t.b.svc.Salons(t.ctx, 30)
	if err != nil {
		return t.explain(err)
	}
	if len(list) == 0 {
		t.show(strings.TrimSpace(prefix+"\n"+t.tr("no_salons")), nil)
		return nil
	}
	k := t.keyboard()
	for _, s := range list {
		k.row(k.btn(s.Name, action{Verb: doSalon, ID: s.ID}))
	}
	t.c.D.Step = stepSalon
	t.show(strings.TrimSpace(prefix+"\n"+t.tr("choose_salon")), k)
	return nil
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

// DeepLinkPrefix starts the /start payload of a booking's deep link
// (t.me/BOT?start=b_TOKEN, the widget's "get updates in Telegram").
const DeepLinkPrefix = "b_"

// claimBooking links this chat to the booking of a deep link: from now on
// it hears of the booking and can change it here.
func (t *turn) claimBooking(token string) error {
	v, err := t.b.svc.ClaimTelegramLink(t.ctx, token)
	switch {
	case errors.Is(err, booking.ErrNotFound), errors.Is(err, booking.ErrLinkExpired), errors.Is(err, booking.ErrLinkUsed):
		t.say(t.tr("link_stale"))
		return nil
	case err != nil:
		return t.explain(err)
	}
	t.c.SalonID, t.salonC = v.SalonID, nil
	t.c.D = t.c.D.keep()
	t.say(t.tr("link_claimed") + "\n" + t.viewSummary(v))
	return nil
}
