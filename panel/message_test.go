package panel_test

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
)

// The booking page shows the client's confirmation and the booking's
// messages, a failed one with its reason and a retry; the attention page
// lists failed messages; the day view marks who confirmed, and who has not
// with two hours to go; the settings say what goes where and when.
func TestPanelShowsMessagesAndConfirmations(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	ctx := bookingtest.System()
	day := w.today().AddDays(1)
	var masterID, serviceID int64
	if err := w.Pool.QueryRow(ctx, `SELECT ms.master_id, ms.service_id FROM master_services ms JOIN services s ON s.id = ms.service_id
		WHERE ms.salon_id = $1 AND s.deposit = 0 ORDER BY 1, 2 LIMIT 1`, w.salon.ID).Scan(&masterID, &serviceID); err != nil {
		t.Fatal(err)
	}
	w.Shift(t, w.salon, &booking.Master{ID: masterID}, day, 1, "08:00", "22:00")
	book := func(at string) *booking.Booking {
		bk, err := w.Svc.Book(booking.As(context.Background(), booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: serviceID,
			MasterID: masterID, StartsAt: bookingtest.At(w.salon, day, at),
			Client: booking.ClientInput{Name: "Мария", Phone: bookingtest.Phone(), Email: "maria@example.com"}})
		if err != nil {
			t.Fatal(err)
		}
		return bk
	}
	sure, unsure := book("08:00"), book("20:00")
	if _, first, err := w.Svc.ConfirmAttendance(booking.As(context.Background(), booking.ByToken(sure.ManageToken)), 0, sure.ID); err != nil || !first {
		t.Fatalf("confirm: %v %v", first, err)
	}
	var failed int64
	if err := w.Pool.QueryRow(ctx, `INSERT INTO messages (salon_id, booking_id, kind, channel, recipient, state, error, not_before)
		VALUES ($1, $2, 'confirmation', 'email', 'maria@example.com', 'failed', 'refused (550): mailbox unavailable', now()),
		       ($1, $2, 'reminder', 'sms', '+79990000001', 'sent', NULL, now()) RETURNING id`, w.salon.ID, sure.ID).Scan(&failed); err != nil {
		t.Fatal(err)
	}
	page := b.get(fmt.Sprintf("/panel/bookings/%d", sure.ID)).body
	for _, want := range []string{`id="attend"`, `id="messages"`, "maria@example.com", "mailbox unavailable",
		fmt.Sprintf(`action="/panel/messages/%d/retry"`, failed)} {
		if !strings.Contains(page, want) {
			t.Errorf("the booking page lacks %s", want)
		}
	}
	if !strings.Contains(page, "Клиент подтвердил") && !strings.Contains(page, "The client confirmed") {
		t.Error("the booking page does not say the client confirmed")
	}
	if a := b.get("/panel/attention").body; !strings.Contains(a, fmt.Sprintf(`data-message="%d"`, failed)) || !strings.Contains(a, "mailbox unavailable") {
		t.Error("the attention page does not list the failed message")
	}
	r := b.post(fmt.Sprintf("/panel/messages/%d/retry", failed), url.Values{"booking": {fmt.Sprint(sure.ID)}})
	if r.status != 303 || r.header.Get("Location") != fmt.Sprintf("/panel/bookings/%d?done=resent", sure.ID) {
		t.Fatalf("retry: %d %s", r.status, r.header.Get("Location"))
	}
	var state string
	if err := w.Pool.QueryRow(ctx, `SELECT state FROM messages WHERE id = $1`, failed).Scan(&state); err != nil || state != "queued" {
		t.Errorf("after the retry: %q %v", state, err)
	}
	if r := b.post(fmt.Sprintf("/panel/messages/%d/retry", failed), url.Values{}); r.status != 303 || !strings.HasSuffix(r.header.Get("Location"), "done=nothing") {
		t.Errorf("a second retry: %d %s", r.status, r.header.Get("Location"))
	}
	// Two hours before the 20:00 booking, which nobody confirmed (signed in
	// again: the clock jumped past the session).
	w.Clock.Set(bookingtest.At(w.salon, day, "18:30"))
	b = w.owner()
	grid := b.get("/panel/day/" + day.String()).body
	if !strings.Contains(grid, `class="attend confirmed"`) || !strings.Contains(grid, `class="attend unconfirmed"`) {
		t.Errorf("the day view does not mark confirmations: %s", grid)
	}
	if page := b.get(fmt.Sprintf("/panel/bookings/%d", unsure.ID)).body; !strings.Contains(page, `class="attend unconfirmed"`) {
		t.Error("the unconfirmed booking's page does not mark it")
	}
	// Settings: reminders 24 h and 30 min, a night of 22:00-08:00, SMS for
	// reminders only.
	b.get("/panel/settings")
	form := url.Values{"reminder_offsets": {"24 ч, 30 мин"}, "quiet_from": {"22:00"}, "quiet_to": {"08:00"},
		"email_confirmation": {"on"}, "email_reminder": {"on"}, "sms_reminder": {"on"}}
	if r := b.post("/panel/settings/messages", form); r.status != 303 || r.header.Get("Location") != "/panel/settings?done=saved" {
		t.Fatalf("save message settings: %d %s", r.status, r.header.Get("Location"))
	}
	m, err := w.Svc.MessageSettingsOf(ctx, w.salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.QuietFrom != "22:00" || m.QuietTo != "08:00" || len(m.ReminderOffsets) != 2 || m.ReminderOffsets[1] != 30*time.Minute ||
		!m.Carries(booking.ChannelSMS, booking.KindReminder) || m.Carries(booking.ChannelSMS, booking.KindConfirmation) ||
		m.Carries(booking.ChannelEmail, booking.KindCancelled) {
		t.Errorf("saved: %+v", m)
	}
	b.get("/panel/settings")
	for _, bad := range []struct {
		form url.Values
		says string
	}{
		{url.Values{"reminder_offsets": {"soon"}, "quiet_from": {"22:00"}, "quiet_to": {"08:00"}}, "24 h, 2 h"},
		{url.Values{"reminder_offsets": {"24 h"}, "quiet_from": {"25:00"}, "quiet_to": {"08:00"}}, "21:00"},
		{url.Values{"reminder_offsets": {"24 h"}, "quiet_from": {"22:00"}, "quiet_to": {"08:00"}, "reminder_holdout_pct": {"80"}}, "50"},
	} {
		r := b.post("/panel/settings/messages", bad.form)
		if r.status != 422 || !strings.Contains(r.body, `<ul class="errors" role="alert">`) || !strings.Contains(r.body, bad.says) {
			t.Errorf("%v: %d", bad.form, r.status)
		}
	}
	if r := b.post("/panel/settings/messages", url.Values{"reminder_offsets": {"24 h"}, "quiet_from": {"22:00"}, "quiet_to": {"08:00"},
		"reminder_holdout_pct": {"10"}}); r.status != 303 {
		t.Errorf("a hold-out of 10%%: %d", r.status)
	}
	if m, _ := w.Svc.MessageSettingsOf(ctx, w.salon.ID); m.HoldoutPct != 10 {
		t.Errorf("hold-out %d", m.HoldoutPct)
	}
	if p := b.get("/panel/reminders"); p.status != 200 || !strings.Contains(p.body, "10%") {
		t.Errorf("the reminders page: %d", p.status)
	}
	// The client asks for no SMS (SMS.ru carries no replies): the admin
	// stops them on the client's page.
	page = b.get(fmt.Sprintf("/panel/clients/%d", sure.ClientID)).body
	if !strings.Contains(page, `id="client-channels"`) || !strings.Contains(page, "maria@example.com") {
		t.Fatal("the client page has no message settings")
	}
	if r := b.post(fmt.Sprintf("/panel/clients/%d/channels", sure.ClientID), url.Values{"no_sms": {"on"}}); r.status != 303 {
		t.Fatalf("stop SMS: %d", r.status)
	}
	ch, err := w.Svc.ChannelsOf(ctx, w.salon.ID, sure.ClientID)
	if err != nil || !ch.NoSMS || ch.NoEmail {
		t.Errorf("channels: %+v %v", ch, err)
	}
	var stopped int
	if err := w.Pool.QueryRow(ctx, `SELECT count(*) FROM message_optouts WHERE salon_id = $1 AND channel = 'sms' AND address = $2`, w.salon.ID, ch.Phone).Scan(&stopped); err != nil || stopped != 1 {
		t.Errorf("opt-outs: %d %v", stopped, err)
	}
	if r := b.post(fmt.Sprintf("/panel/clients/%d/channels", sure.ClientID), url.Values{}); r.status != 303 {
		t.Fatalf("restart SMS: %d", r.status)
	}
	if ch, _ := w.Svc.ChannelsOf(ctx, w.salon.ID, sure.ClientID); ch.NoSMS {
		t.Error("SMS still stopped")
	}
}

// TestSavingTheMessageSettingsUnchangedChangesNothing: the form, sent as
// the page shows it, keeps every kind the salon sends: waiting-list offers
// too (helper-49 H1: the form had no row for them, and saving it turned
// their e-mails off).
func TestSavingTheMessageSettingsUnchangedChangesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	ctx := bookingtest.System()
	before, err := w.Svc.MessageSettingsOf(ctx, w.salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	page := b.get("/panel/settings").body
	form := url.Values{}
	for _, m := range regexp.MustCompile(`name="((?:email|sms)_[a-z_]+)" value="on"[^>]*?( checked)?>`).FindAllStringSubmatch(page, -1) {
		if m[2] != "" {
			form.Set(m[1], "on")
		}
	}
	for _, name := range []string{"reminder_offsets", "quiet_from", "quiet_to", "reminder_holdout_pct"} {
		if m := regexp.MustCompile(`name="` + name + `"[^>]*value="([^"]*)"`).FindStringSubmatch(page); m != nil {
			form.Set(name, html.UnescapeString(m[1]))
		}
	}
	if !strings.Contains(page, `name="email_waitlist_offer"`) {
		t.Error("the message settings have no row for waiting-list offers")
	}
	if r := b.post("/panel/settings/messages", form); r.status != 303 {
		t.Fatalf("save: %d %s", r.status, r.body)
	}
	after, err := w.Svc.MessageSettingsOf(ctx, w.salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range booking.ClientKinds {
		for _, ch := range []booking.Channel{booking.ChannelEmail, booking.ChannelSMS} {
			if before.Carries(ch, k) != after.Carries(ch, k) {
				t.Errorf("%s by %s: %v before saving the form unchanged, %v after", k, ch, before.Carries(ch, k), after.Carries(ch, k))
			}
		}
	}
	if !after.Carries(booking.ChannelEmail, booking.KindWaitlistOffer) {
		t.Error("waiting-list offers are not e-mailed")
	}
}
