package booking_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
)

// TestClientExportAndErase: everything stored about a client comes out
// by phone; erasing it leaves the bookings (for the salon's counts) and
// nothing of who they were: no name, phone, notes, chat account, names
// given, or traces in the audit log; the erasure is an audit row.
func TestClientExportAndErase(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	salon := e.Salon(t, booking.Salon{Slug: "private"})
	sv := e.Service(t, salon, booking.SalonService{Name: "Cut"})
	m := e.Master(t, salon, sv)
	day := salon.Today(e.Clock.Now()).AddDays(1)
	e.Shift(t, salon, m, day, 1, "10:00", "20:00")
	owner, err := e.Svc.CreateUser(ctx, salon.ID, "owner@private.test", "password-1", booking.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	staff := booking.As(ctx, booking.ByStaff(*owner))
	const phone = "+79995557788"
	b, err := e.Svc.Book(booking.As(ctx, booking.ByStaff(*owner)), booking.BookRequest{SalonID: salon.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: bookingtest.At(salon, day, "11:00"),
		Client: booking.ClientInput{Name: "Zinaida Secretova", Phone: phone, Email: "zinaida@secret.example"}, Notes: "allergic to everything"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Svc.UpdateClient(staff, salon.ID, b.ClientID, "Zinaida Secretova", "VIP, lives nearby"); err != nil {
		t.Fatal(err)
	}
	// She waits for another day too.
	if _, err := e.Svc.JoinWaitlist(staff, booking.WaitRequest{SalonID: salon.ID, ServiceID: sv.ID, From: day, To: day.AddDays(3),
		Client: booking.ClientInput{Name: "Zinaida Secretova", Phone: phone, Email: "zinaida@secret.example"}}); err != nil {
		t.Fatal(err)
	}
	rec, err := e.Svc.ExportClient(staff, salon.ID, "8 999 555-77-88", 0)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(rec)
	for _, want := range []string{"Zinaida Secretova", phone, "VIP, lives nearby", "allergic to everything", `"events"`, "zinaida@secret.example"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the export lacks %q: %s", want, out)
		}
	}
	// Admins may not.
	admin, _ := e.Svc.CreateUser(ctx, salon.ID, "admin@private.test", "password-1", booking.RoleAdmin)
	if _, err := e.Svc.EraseClient(booking.As(ctx, booking.ByStaff(*admin)), salon.ID, phone, 0); !errors.Is(err, booking.ErrForbidden) {
		t.Errorf("an admin erases: %v", err)
	}
	kept, err := e.Svc.EraseClient(staff, salon.ID, phone, 0)
	if err != nil || kept != 1 {
		t.Fatalf("erase: %d %v", kept, err)
	}
	var n int
	if err := e.Pool.QueryRow(ctx, `SELECT count(*) FROM bookings WHERE id = $1 AND status = 'confirmed'`, b.ID).Scan(&n); err != nil || n != 1 {
		t.Errorf("the booking is gone (%v)", err)
	}
	var dump string
	if err := e.Pool.QueryRow(ctx, `SELECT concat_ws('|',
		(SELECT string_agg(to_jsonb(c)::text, ',') FROM clients c),
		(SELECT string_agg(to_jsonb(b)::text, ',') FROM bookings b),
		(SELECT string_agg(to_jsonb(e)::text, ',') FROM booking_events e),
		(SELECT string_agg(to_jsonb(a)::text, ',') FROM audit_log a),
		(SELECT string_agg(to_jsonb(w)::text, ',') FROM waitlist_entries w),
		(SELECT string_agg(to_jsonb(m)::text, ',') FROM messages m))`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"Zinaida", "zinaida", "Secretova", "79995557788", "VIP", "allergic", "secret.example"} {
		if strings.Contains(dump, gone) {
			t.Errorf("%q is still stored", gone)
		}
	}
	var action string
	if err := e.Pool.QueryRow(ctx, `SELECT action FROM audit_log WHERE entity = 'client' AND entity_id = $1 ORDER BY id DESC LIMIT 1`, b.ClientID).
		Scan(&action); err != nil || action != "erase" {
		t.Errorf("the erasure's audit row: %q %v", action, err)
	}
	if _, err := e.Svc.ExportClient(staff, salon.ID, phone, 0); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("after erasure, the phone finds: %v", err)
	}
}
