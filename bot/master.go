package bot

import (
	"errors"

	"salon/booking"
)

// link links a master's Telegram account with the code from the salon.
func (t *turn) link(code string) error {
	if code == "" {
		t.say(t.tr("link_usage"))
		return nil
	}
	m, err := t.b.svc.LinkMaster(t.ctx, code)
	switch {
	case errors.Is(err, booking.ErrNotFound):
		t.say(t.tr("link_bad"))
		return nil
	case errors.Is(err, booking.ErrConflict):
		t.say(t.tr("link_conflict"))
		return nil
	case err != nil:
		return t.explain(err)
	}
	s, err := t.b.svc.Salon(t.ctx, m.SalonID)
	if err != nil {
		return t.explain(err)
	}
	t.say(t.tr("link_ok", m.Name, s.Name))
	return nil
}
