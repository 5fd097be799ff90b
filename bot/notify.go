package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"salon/booking"
)

// AddWorkers registers the bot's job workers: notifications of booking
// changes and reminders.
func AddWorkers(w *river.Workers, b *Bot) {
	river.AddWorker(w, &notifyWorker{b: b})
	river.AddWorker(w, &reminderWorker{b: b})
}

type notifyWorker struct {
	river.WorkerDefaults[booking.NotifyArgs]
	b *Bot
}

// Work tells the client (when they have Telegram and did not make the
// change in the bot themselves) and the master (when linked) about a change.
func (w *notifyWorker) Work(ctx context.Context, job *river.Job[booking.NotifyArgs]) error {
	a := job.Args
	v, err := w.b.svc.View(ctx, a.SalonID, a.BookingID)
	if errors.Is(err, booking.ErrNotFound) {
		return nil // gone: nothing to tell
	}
	if err != nil {
		return err
	}
	var msgs []outMsg
	selfInBot := a.Actor == booking.ActorClient && a.Source == booking.SourceBot
	if v.ClientTelegramID != 0 && !selfInBot {
		lang := w.b.chatLang(ctx, v.ClientTelegramID, v.Salon.Locale)
		key := map[string]string{booking.EventCreated: "n_client_booked", booking.EventCancelled: "n_client_cancel",
			booking.EventRescheduled: "n_client_moved", booking.EventHoldExpired: "n_hold_expired"}[a.Event]
		if key != "" {
			msgs = append(msgs, outMsg{Op: opSend, ChatID: v.ClientTelegramID, Text: describe(lang, tr(lang, key), v, a, false)})
		}
	}
	if v.MasterTelegramID != 0 {
		lang := w.b.chatLang(ctx, v.MasterTelegramID, v.Salon.Locale)
		key := map[string]string{booking.EventCreated: "n_new_booking", booking.EventCancelled: "n_cancelled",
			booking.EventRescheduled: "n_moved", booking.EventHoldExpired: "n_cancelled"}[a.Event]
		if key != "" {
			msgs = append(msgs, outMsg{Op: opSend, ChatID: v.MasterTelegramID, Text: describe(lang, tr(lang, key), v, a, true)})
		}
	}
	return w.b.complete(ctx, job.ID, msgs, func(tx pgx.Tx) error {
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}

// describe is the text of a notification about v.
func describe(lang, title string, v *booking.View, a booking.NotifyArgs, forMaster bool) string {
	loc := v.Salon.Location()
	text := fmt.Sprintf("%s\n%s: %s\n%s: %s\n%s: %s", title, tr(lang, "when"), when(lang, v.StartsAt, loc),
		tr(lang, "service"), v.ServiceName, tr(lang, "master"), v.MasterName)
	if forMaster {
		text += fmt.Sprintf("\n%s: %s", tr(lang, "client"), v.ClientName)
	} else {
		text += fmt.Sprintf("\n%s: %s", tr(lang, "salon"), v.Salon.Name)
	}
	if a.Event == booking.EventRescheduled && !a.FromStartsAt.IsZero() {
		text += fmt.Sprintf("\n(%s: %s)", tr(lang, "n_was"), when(lang, a.FromStartsAt, loc))
	}
	return text
}

type reminderWorker struct {
	river.WorkerDefaults[booking.ReminderArgs]
	b *Bot
}

// Work reminds the client of a booking that is still on at the time the
// reminder was made for. It waits for the service's clock: a reminder due
// later snoozes.
func (w *reminderWorker) Work(ctx context.Context, job *river.Job[booking.ReminderArgs]) error {
	a := job.Args
	now := w.b.svc.Now()
	if due := a.StartsAt.Add(-a.Lead); now.Before(due.Add(-time.Minute)) {
		return river.JobSnooze(due.Sub(now))
	}
	v, err := w.b.svc.View(ctx, a.SalonID, a.BookingID)
	if errors.Is(err, booking.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var msgs []outMsg
	// A reminder that comes much later than due (the booking was made at
	// short notice, or the jobs were down) would say the wrong thing.
	stale := now.After(a.StartsAt.Add(-a.Lead / 2))
	if v.Status.Active() && v.StartsAt.Equal(a.StartsAt) && !stale && v.ClientTelegramID != 0 {
		lang := w.b.chatLang(ctx, v.ClientTelegramID, v.Salon.Locale)
		key := "n_reminder_2h"
		if a.Lead >= 12*time.Hour {
			key = "n_reminder_24h"
		}
		msgs = append(msgs, outMsg{Op: opSend, ChatID: v.ClientTelegramID,
			Text: describe(lang, tr(lang, key), v, booking.NotifyArgs{}, false)})
	}
	return w.b.complete(ctx, job.ID, msgs, func(tx pgx.Tx) error {
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job)
		return err
	})
}

// complete queues a job's messages and marks the job completed in one
// transaction: a crash either loses neither or keeps both, and a retried
// job queues nothing twice (the messages carry the job's id as their key).
func (b *Bot) complete(ctx context.Context, jobID int64, msgs []outMsg, markDone func(pgx.Tx) error) error {
	for i := range msgs {
		msgs[i].Key = fmt.Sprintf("job:%d:%d", jobID, i)
	}
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if err := queue(ctx, tx, msgs); err != nil {
			return err
		}
		return markDone(tx)
	})
	if err != nil {
		return err
	}
	if len(msgs) > 0 {
		signal(b.outWake)
	}
	return nil
}

// chatLang is the language of a user's chat with the bot, or def.
func (b *Bot) chatLang(ctx context.Context, userID int64, def string) string {
	lang := def
	_ = b.pool.QueryRow(ctx, `SELECT lang FROM tg_chats WHERE chat_id = $1`, userID).Scan(&lang)
	if lang != "ru" && lang != "en" {
		lang = "ru"
	}
	return lang
}
