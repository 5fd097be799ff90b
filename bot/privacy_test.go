package bot_test

import (
	"strings"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
)

// TestErasureLeavesNothing: after `salon client erase` the client's name
// and phone were still in bookings.cancel_reason and audit_log.new (both
// shown on the panel), uploads.file and uploads.lines, tg_chats.dialog
// (with phone_proven) and tg_updates / tg_outbox. Now a client who booked
// in the bot (sharing their contact), was cancelled by the salon with a
// reason that names them, and is in an uploaded file, is erased from the
// whole database: every text, jsonb and bytea column of every table.
func TestErasureLeavesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sys := bookingtest.System()
	owner, err := w.Svc.CreateUser(sys, w.salon.ID, "owner@studio.test", "owner-password", booking.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	staff := booking.As(sys, booking.ByStaff(*owner))
	const phone, digits = "+7 999 555-77-88", "79995557788"
	u := w.tg.NewUser("Zinaida", "en")
	u.Send("/start studio")
	w.see(u, "Welcome to Studio")
	w.tap(u, "Haircut · 60 min · 2,500")
	w.tap(u, "Anna")
	w.tap(u, "Tue 3 Mar")
	w.tap(u, "15:00")
	w.see(u, "share your phone")
	u.ShareContact(digits)
	w.see(u, "Check your booking")
	w.tap(u, "Confirm")
	w.see(u, "You are booked")
	id := int64(w.count(t, `SELECT max(id) FROM bookings`))
	if _, err := w.Svc.Cancel(staff, booking.CancelRequest{SalonID: w.salon.ID, BookingID: id, Reason: "Zinaida called: sick"}); err != nil {
		t.Fatal(err)
	}
	w.jobsDone()
	w.see(u, "cancelled")
	if _, err := w.Svc.SaveUpload(staff, "clients", "clients.csv", strings.NewReader("name,phone\nZinaida Secretova,"+phone+"\n")); err != nil {
		t.Fatal(err)
	}
	// Someone else of the same first name, in another chat: not this
	// client's, and kept.
	if _, err := w.Pool.Exec(sys, `INSERT INTO tg_outbox (chat_id, payload, state) VALUES (999001, '{"op":"send","chat_id":999001,"text":"Zinaida Other, see you"}', 'sent')`); err != nil {
		t.Fatal(err)
	}
	before := dumpAll(t, w)
	for _, s := range []string{"Zinaida", digits} {
		if !strings.Contains(before, s) {
			t.Fatalf("the test wrote no %q to find", s)
		}
	}
	if _, err := w.Svc.EraseClient(staff, w.salon.ID, phone, 0); err != nil {
		t.Fatal(err)
	}
	if n := w.count(t, `SELECT count(*) FROM tg_outbox WHERE chat_id = 999001`); n != 1 {
		t.Errorf("the erasure took another chat's message that only shares a first name")
	}
	if _, err := w.Pool.Exec(sys, `DELETE FROM tg_outbox WHERE chat_id = 999001`); err != nil {
		t.Fatal(err)
	}
	after := dumpAll(t, w)
	for _, gone := range []string{"Zinaida", "Secretova", digits, "999 555", "9995557788"} {
		if i := strings.Index(after, gone); i >= 0 {
			t.Errorf("%q is still stored: …%s…", gone, after[max(0, i-300):min(len(after), i+100)])
		}
	}
}

// dumpAll is every text, jsonb and bytea value of every table, as text.
func dumpAll(t *testing.T, w *world) string {
	t.Helper()
	ctx := bookingtest.System()
	rows, err := w.Pool.Query(ctx, `SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema')
		  AND data_type IN ('text', 'character varying', 'jsonb', 'json', 'bytea', 'ARRAY')`)
	if err != nil {
		t.Fatal(err)
	}
	type col struct{ schema, table, column, typ string }
	var cols []col
	for rows.Next() {
		var c col
		if err := rows.Scan(&c.schema, &c.table, &c.column, &c.typ); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	rows.Close()
	var b strings.Builder
	for _, c := range cols {
		expr := `"` + c.column + `"::text`
		if c.typ == "bytea" {
			expr = `encode("` + c.column + `", 'escape')` // UTF-8 beyond ASCII escaped: the test's strings are ASCII
		}
		var text string
		if err := w.Pool.QueryRow(ctx, `SELECT COALESCE(string_agg(`+expr+`, E'\n'), '') FROM "`+c.schema+`"."`+c.table+`"`).Scan(&text); err != nil {
			t.Fatalf("%s.%s: %v", c.table, c.column, err)
		}
		b.WriteString(c.table + "." + c.column + ": " + text + "\n")
	}
	return b.String()
}
