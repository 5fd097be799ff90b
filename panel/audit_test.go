package panel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/internal/demo"
)

// auditRow is a row of audit_log as the tests read it.
type auditRow struct {
	Actor, Action, Entity string
	EntityID              int64
	Old, New              map[string]any
}

// auditSince returns the audit rows written after id, oldest first.
func auditSince(t *testing.T, w *world, id int64) []auditRow {
	t.Helper()
	rows, err := w.Pool.Query(context.Background(), `SELECT actor, action, entity, COALESCE(entity_id, 0),
		COALESCE(old, 'null'), COALESCE(new, 'null') FROM audit_log WHERE id > $1 AND salon_id = $2 ORDER BY id`, id, w.salon.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []auditRow
	for rows.Next() {
		var r auditRow
		var o, n []byte
		if err := rows.Scan(&r.Actor, &r.Action, &r.Entity, &r.EntityID, &o, &n); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(o, &r.Old)
		_ = json.Unmarshal(n, &r.New)
		out = append(out, r)
	}
	return out
}

func lastAuditID(t *testing.T, w *world) int64 {
	return scalar[int64](t, w, `SELECT COALESCE(max(id), 0) FROM audit_log`)
}

// TestEveryPanelChangeIsAudited makes each kind of change through the
// panel and finds its audit row: the actor, the action, the entity and the
// old and new values of what changed.
func TestEveryPanelChangeIsAudited(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	ctx := bookingtest.System()
	day := w.today().AddDays(1)
	ms, err := w.Svc.Masters(ctx, w.salon.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A master who works tomorrow, and one of their services.
	var m booking.Master
	for _, x := range ms {
		if sh, _ := w.Svc.Shifts(ctx, w.salon.ID, x.ID, day, 1); len(sh) > 0 {
			m = x
			break
		}
	}
	sv := m.ServiceIDs[0]
	free, err := w.Svc.Slots(ctx, booking.SlotQuery{SalonID: w.salon.ID, ServiceID: sv, MasterID: m.ID, From: day})
	if err != nil || len(free) < 5 {
		t.Fatalf("slots: %v %d", err, len(free))
	}
	loc := w.salon.Location()
	var bookingID int64

	type change struct {
		name   string
		do     func() answer
		entity string
		action string
		check  func(r auditRow) bool
	}
	changes := []change{
		{"create booking", func() answer {
			a := b.post("/panel/bookings", url.Values{"master": {fmt.Sprint(m.ID)}, "service": {fmt.Sprint(sv)},
				"date": {day.String()}, "time": {free[1].Start.In(loc).Format("15:04")}, "phone": {"+79995550001"},
				"name": {"Audited Client"}, "key": {"audit-1"}})
			fmt.Sscanf(a.header.Get("Location"), "/panel/bookings/%d", &bookingID)
			return a
		}, "booking", "create", func(r auditRow) bool { return r.New["status"] == "confirmed" && r.Old == nil }},
		{"reschedule booking", func() answer {
			// The salon's own move, as the form says; the history says so.
			page := fmt.Sprintf("/panel/bookings/%d", bookingID)
			if p := b.get(page); !strings.Contains(p.body, `<legend>Кто просит перенести (если знаете)</legend>`) {
				t.Errorf("the move form does not ask who asks: %s", p.body)
			}
			if r := b.post(page+"/reschedule", url.Values{"date": {day.String()}, "time": {free[3].Start.In(loc).Format("15:04")},
				"master": {fmt.Sprint(m.ID)}, "asked": {"nobody"}}); r.status != http.StatusBadRequest {
				t.Errorf("a move with asked=nobody: %d", r.status)
			}
			a := b.post(page+"/reschedule", url.Values{"date": {day.String()},
				"time": {free[3].Start.In(loc).Format("15:04")}, "master": {fmt.Sprint(m.ID)}, "asked": {"salon"}})
			if p := b.get(page); !strings.Contains(p.body, "<b>Перенесена по решению салона: ") {
				t.Errorf("the history of the salon's own move: %s", p.body)
			}
			return a
		}, "booking", "reschedule", func(r auditRow) bool { return r.Old["starts_at"] != nil && r.New["starts_at"] != r.Old["starts_at"] }},
		{"cancel booking", func() answer {
			// A booking with no money in advance asks who cancels too,
			// without insisting; the history keeps the answer.
			page := fmt.Sprintf("/panel/bookings/%d", bookingID)
			p := b.get(page)
			if !strings.Contains(p.body, `<legend>Кто отменяет (если знаете)</legend>`) ||
				!strings.Contains(p.body, `<input type="radio" name="asked" value="client"> клиент: попросил отменить</label>`) {
				t.Errorf("the cancel form of a booking with nothing paid: %s", p.body)
			}
			terms := regexp.MustCompile(`name="terms" value="([^"]*)"`).FindStringSubmatch(p.body)
			if terms == nil {
				t.Fatalf("no terms in the cancel form: %s", p.body)
			}
			a := b.post(page+"/cancel", url.Values{"reason": {"client called"}, "asked": {"client"}, "terms": {terms[1]}})
			if p := b.get(page); !strings.Contains(p.body, "<b>Отменена по просьбе клиента: client called</b>") {
				t.Errorf("the history of a cancellation at the client's request: %s", p.body)
			}
			return a
		}, "booking", "cancelled", func(r auditRow) bool {
			return r.Old["status"] == "confirmed" && r.New["status"] == "cancelled" && r.New["cancel_reason"] == "client called"
		}},
		{"update client", func() answer {
			id := scalar[int64](t, w, `SELECT id FROM clients WHERE phone = '+79995550001'`)
			return b.post(fmt.Sprintf("/panel/clients/%d", id), url.Values{"name": {"Renamed Client"}, "notes": {"likes tea"}})
		}, "client", "update", func(r auditRow) bool {
			return r.Old["name"] == "Audited Client" && r.New["name"] == "Renamed Client" && r.New["notes"] == "likes tea"
		}},
		{"set shifts", func() answer {
			return b.post(fmt.Sprintf("/panel/masters/%d/shifts", m.ID), url.Values{"date": {w.today().AddDays(30).String()},
				"start": {"10:00"}, "end": {"16:00"}})
		}, "shift", "create", func(r auditRow) bool { return r.New["work_date"] != nil && r.New["master_id"] == float64(m.ID) }},
		{"apply template", func() answer {
			from := w.today().AddDays(40)
			return b.post(fmt.Sprintf("/panel/masters/%d/template", m.ID), url.Values{"from": {from.String()},
				"to": {from.AddDays(6).String()}, "start_1": {"09:00"}, "end_1": {"17:00"}, "start_3": {"12:00"}, "end_3": {"20:00"}})
		}, "shift", "create", func(r auditRow) bool { return r.New["starts_at"] != nil }},
		{"create service", func() answer {
			return b.post("/panel/services", url.Values{"name": {"Audited service"}, "duration": {"45"}, "buffer": {"5"},
				"price": {"1 200,50"}, "deposit": {"0"}, "active": {"1"}})
		}, "service", "create", func(r auditRow) bool {
			return r.New["name"] == "Audited service" && r.New["duration_min"] == float64(45)
		}},
		{"update service", func() answer {
			id := scalar[int64](t, w, `SELECT id FROM services WHERE name = 'Audited service'`)
			return b.post(fmt.Sprintf("/panel/services/%d", id), url.Values{"name": {"Audited service"}, "duration": {"50"},
				"buffer": {"5"}, "price": {"1300"}, "deposit": {"100"}})
		}, "service", "update", func(r auditRow) bool {
			return r.Old["duration_min"] == float64(45) && r.New["duration_min"] == float64(50) && r.New["active"] == false
		}},
		{"create master", func() answer {
			return b.post("/panel/masters", url.Values{"name": {"Audited master"}, "phone": {"+79995550002"}})
		}, "master", "create", func(r auditRow) bool { return r.New["name"] == "Audited master" && r.New["phone"] == "+79995550002" }},
		{"update master", func() answer {
			id := scalar[int64](t, w, `SELECT id FROM masters WHERE name = 'Audited master'`)
			return b.post(fmt.Sprintf("/panel/masters/%d", id), url.Values{"name": {"Audited master 2"}, "phone": {""}})
		}, "master", "update", func(r auditRow) bool {
			return r.Old["name"] == "Audited master" && r.New["name"] == "Audited master 2" && r.New["active"] == false
		}},
		{"set offers", func() answer {
			id := scalar[int64](t, w, `SELECT id FROM masters WHERE name = 'Audited master 2'`)
			return b.post(fmt.Sprintf("/panel/masters/%d/offers", id), url.Values{fmt.Sprintf("does_%d", sv): {"1"},
				fmt.Sprintf("dur_%d", sv): {"90"}, fmt.Sprintf("price_%d", sv): {"3000"}})
		}, "master_service", "create", func(r auditRow) bool { return r.New["duration_min"] == float64(90) && r.New["price"] == float64(3000) }},
		{"link code", func() answer {
			return b.post(fmt.Sprintf("/panel/masters/%d/link-code", m.ID), nil)
		}, "master_link_code", "create", func(r auditRow) bool {
			_, hash := r.New["code_hash"]
			return r.EntityID == m.ID && r.New["expires_at"] != nil && !hash
		}},
		{"update settings", func() answer {
			return b.post("/panel/settings", url.Values{"name": {"Demo renamed"}, "timezone": {"Europe/Moscow"}, "slot_step_min": {"30"},
				"min_notice_min": {"60"}, "hold_min": {"20"}, "cutoff_hours": {"3"}, "horizon_days": {"60"}, "refund_policy": {"always"},
				"locale": {"ru"}})
		}, "salon", "update", func(r auditRow) bool {
			return r.Old["slot_step_min"] == float64(15) && r.New["slot_step_min"] == float64(30) && r.New["refund_policy"] == "always" &&
				r.New["name"] == "Demo renamed"
		}},
		{"invite a user", func() answer {
			return b.post("/panel/users", url.Values{"email": {"invited@demo.test"}, "role": {"admin"}})
		}, "invitation", "create", func(r auditRow) bool {
			_, hash := r.New["code_hash"]
			return r.New["email"] == "invited@demo.test" && !hash
		}},
		{"add user", func() answer {
			w.accept(b.invite("audited@demo.test", booking.RoleAdmin), "long-password")
			return answer{status: http.StatusSeeOther}
		}, "user", "create", func(r auditRow) bool {
			_, hash := r.New["password_hash"]
			return r.New["email"] == "audited@demo.test" && !hash
		}},
		{"remove user", func() answer {
			id := scalar[int64](t, w, `SELECT id FROM users WHERE email = 'audited@demo.test'`)
			return b.post(fmt.Sprintf("/panel/users/%d/delete", id), nil)
		}, "user", "delete", func(r auditRow) bool { return r.Old["email"] == "audited@demo.test" && r.New == nil }},
	}
	for _, c := range changes {
		since := lastAuditID(t, w)
		a := c.do()
		if a.status != http.StatusSeeOther && (c.name != "link code" || a.status != http.StatusOK || !strings.Contains(a.body, `id="link-code"`)) &&
			(c.name != "invite a user" || a.status != http.StatusOK || !strings.Contains(a.body, "/panel/invite/")) {
			t.Fatalf("%s: %d\n%.2000s", c.name, a.status, a.body)
		}
		rows := auditSince(t, w, since)
		found := false
		for _, r := range rows {
			// (An invitation accepted is its new user's act.)
			if r.Actor != demo.Email && (c.name != "add user" || r.Actor != "audited@demo.test") {
				t.Errorf("%s: audit actor %q", c.name, r.Actor)
			}
			if r.Entity == c.entity && r.Action == c.action && c.check(r) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no audit row %s/%s with the values; rows: %+v", c.name, c.entity, c.action, rows)
		}
	}

	// Marks: a booking that has started is marked no-show, another completed.
	for _, to := range []string{"no_show", "completed"} {
		start := bookingtest.At(w.salon, w.today(), "08:00")
		if to == "completed" {
			start = start.Add(-2 * 60 * 60 * 1e9)
		}
		bk, err := w.Svc.Book(booking.As(ctx, booking.BySystem()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: sv, MasterID: m.ID, StartsAt: start,
			Client: booking.ClientInput{Name: "Early", Phone: bookingtest.Phone()}, Source: booking.SourceImport})
		if err != nil {
			t.Fatal(err)
		}
		since := lastAuditID(t, w)
		path := map[string]string{"no_show": "no-show", "completed": "complete"}[to]
		if a := b.post(fmt.Sprintf("/panel/bookings/%d/%s", bk.ID, path), nil); a.status != http.StatusSeeOther {
			t.Fatalf("mark %s: %d %s", to, a.status, a.body)
		}
		rows := auditSince(t, w, since)
		if len(rows) != 1 || rows[0].Action != to || rows[0].Old["status"] != "confirmed" || rows[0].New["status"] != to ||
			rows[0].EntityID != bk.ID {
			t.Errorf("mark %s: audit rows %+v", to, rows)
		}
	}

	// The audit page lists them, and filters by entity and actor.
	a := b.get("/panel/audit?entity=service")
	if a.status != 200 || !strings.Contains(a.body, "Audited service") || strings.Contains(a.body, "Audited master") {
		t.Errorf("audit page filtered by service: %d", a.status)
	}
	if a := b.get("/panel/audit?actor=nobody@x"); !strings.Contains(a.body, "Nothing found") && !strings.Contains(a.body, "Ничего не найдено") {
		t.Errorf("audit page filtered by an unknown actor shows rows")
	}
	// Changes outside the panel (the platform's own jobs) are not audited.
	since := lastAuditID(t, w)
	if _, err := w.Svc.ExpireHolds(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Book(booking.As(ctx, booking.Visitor()), booking.BookRequest{SalonID: w.salon.ID, ServiceID: sv, MasterID: m.ID, StartsAt: free[4].Start,
		Client: booking.ClientInput{Name: "Web", Phone: bookingtest.Phone()}}); err != nil {
		t.Fatal(err)
	}
	if rows := auditSince(t, w, since); len(rows) != 0 {
		t.Errorf("a widget booking wrote audit rows: %+v", rows)
	}
}

// TestBalanceChangesAreAudited: a certificate sold at the desk, an offer
// put on sale and taken off, a code replaced and a refund each leave an
// audit row under the owner's name (never the code's hash), which the
// audit page reads in words: the kind, the amount in the salon's money,
// the reason. Spending a balance on a booking is its ledger's, not the
// audit log's.
func TestBalanceChangesAreAudited(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	ctx := bookingtest.System()
	since := lastAuditID(t, w)
	if a := b.post("/panel/balances", url.Values{"kind": {"certificate"}, "amount": {"3 000"}}); a.status != 200 || !strings.Contains(a.body, `id="balance-code"`) {
		t.Fatalf("sell: %d %.1000s", a.status, a.body)
	}
	cert := scalar[int64](t, w, `SELECT id FROM balances WHERE salon_id = $1`, w.salon.ID)
	if a := b.post("/panel/balance-offers", url.Values{"kind": {"certificate"}, "title": {"Gift 5000"}, "price": {"5000"}, "amount": {"5000"}}); a.status != http.StatusSeeOther {
		t.Fatalf("offer: %d %.1000s", a.status, a.body)
	}
	offer := scalar[int64](t, w, `SELECT max(id) FROM balance_offers WHERE salon_id = $1`, w.salon.ID)
	if a := b.post(fmt.Sprintf("/panel/balance-offers/%d/active", offer), url.Values{}); a.status != http.StatusSeeOther {
		t.Fatalf("off sale: %d %.1000s", a.status, a.body)
	}
	// A new code (as "E-mail a new code" replaces it, under the caller's name).
	tx, err := w.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT set_config('salon.actor', $1, true)`, demo.Email); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE balances SET code_hash = '\x00', code_hint = 'NEW1' WHERE id = $1`, cert); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if a := b.post(fmt.Sprintf("/panel/balances/%d/refund", cert), url.Values{"reason": {"changed her mind"}, "sure": {"on"}}); a.status != http.StatusSeeOther {
		t.Fatalf("refund: %d %.1000s", a.status, a.body)
	}
	rows := auditSince(t, w, since)
	want := []struct {
		entity, action string
		check          func(r auditRow) bool
	}{
		{"balance", "create", func(r auditRow) bool {
			_, hash := r.New["code_hash"]
			return r.EntityID == cert && r.New["kind"] == "certificate" && r.New["total"] == float64(300000) && !hash
		}},
		{"balance_offer", "create", func(r auditRow) bool { return r.EntityID == offer && r.New["title"] == "Gift 5000" }},
		{"balance_offer", "update", func(r auditRow) bool { return r.Old["active"] == true && r.New["active"] == false }},
		{"balance", "update", func(r auditRow) bool {
			_, hash := r.New["code_hash"]
			return r.Old["code_hint"] != "NEW1" && r.New["code_hint"] == "NEW1" && !hash
		}},
		{"balance", "refund", func(r auditRow) bool {
			return r.Old["remaining"] == float64(300000) && r.New["remaining"] == float64(0) && r.New["reason"] == "changed her mind"
		}},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d audit rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, x := range want {
		if r := rows[i]; r.Actor != demo.Email || r.Entity != x.entity || r.Action != x.action || !x.check(r) {
			t.Errorf("row %d: %+v, want %s/%s", i, r, x.entity, x.action)
		}
	}
	// The page reads them in words, in the salon's language.
	a := b.get("/panel/audit?entity=balance")
	for _, s := range []string{"Возвращено: абонемент или сертификат", "Создано: абонемент или сертификат", "Вид: сертификат",
		"Сумма: 3 000", "Осталось: 3 000", "changed her mind", "Код: ", "NEW1"} {
		if !strings.Contains(strings.ReplaceAll(a.body, "\u00a0", " "), s) {
			t.Errorf("the audit page lacks %q", s)
		}
	}
	for _, s := range []string{"code_hash", "code_key", "total", "remaining", "paid_via", "salon_id", "абонемент или сертификат #"} {
		if strings.Contains(a.body, s) {
			t.Errorf("the audit page shows %q", s)
		}
	}
	a = b.get("/panel/audit?entity=balance_offer")
	if body := strings.ReplaceAll(a.body, "\u00a0", " "); !strings.Contains(body, "«Gift 5000»") || !strings.Contains(body, "Цена: 5 000 ₽") ||
		!strings.Contains(body, "Действует: да → нет") {
		_, rows, _ := strings.Cut(body, `<tbody`)
		t.Errorf("the offer's rows: %.3000s", rows)
	}
}

// TestARefusedBookingFormKeepsTheServiceChosen: a booking refused because
// the master does not do the service comes back with that service still
// chosen beside its error, not the master's first service in its place
// (sent again, it would have booked a service nobody chose).
func TestARefusedBookingFormKeepsTheServiceChosen(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	ctx := bookingtest.System()
	ms, err := w.Svc.Masters(ctx, w.salon.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := w.Svc.CreateService(ctx, w.salon.ID, booking.SalonService{Name: "Nobody's trim", DurationMin: 30, Price: 90000})
	if err != nil {
		t.Fatal(err)
	}
	m := ms[0]
	a := b.post("/panel/bookings", url.Values{"master": {fmt.Sprint(m.ID)}, "service": {fmt.Sprint(sv.ID)},
		"date": {w.today().AddDays(1).String()}, "time": {"15:00"}, "phone": {"+79995550002"}, "name": {"Client"}, "key": {"kept-1"}})
	if a.status != http.StatusUnprocessableEntity && a.status != http.StatusConflict && a.status != http.StatusBadRequest {
		t.Fatalf("booking a service the master does not do: %d", a.status)
	}
	if !regexp.MustCompile(fmt.Sprintf(`<option value="%d" selected[^>]*>Nobody&#39;s trim`, sv.ID)).MatchString(a.body) {
		t.Errorf("the form came back without the service chosen:\n%s", a.body)
	}
}

// TestTheAuditLogReadsInEnglish: an English reader of the audit log reads
// names in English quotes, dates as "7 Dec 2026", prices in the salon's
// currency and every column by its name, never the database's (the
// log said «Renée», 31.03.2027, Price: 800.5 and cancel_reason).
func TestTheAuditLogReadsInEnglish(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	ctx := context.Background()
	owner := booking.As(ctx, booking.ByStaff(booking.User{ID: scalar[int64](t, w, `SELECT id FROM users WHERE email = $1`, demo.Email),
		SalonID: w.salon.ID, Role: booking.RoleOwner, Email: demo.Email}))
	sv, err := w.Svc.CreateService(owner, w.salon.ID, booking.SalonService{Name: "Renée's cut", DurationMin: 30, Price: 80050})
	if err != nil {
		t.Fatal(err)
	}
	m, err := w.Svc.CreateMaster(owner, w.salon.ID, booking.Master{Name: "Zoë"}, booking.Offer{ServiceID: sv.ID})
	if err != nil {
		t.Fatal(err)
	}
	day := w.today().AddDays(1)
	w.Shift(t, w.salon, m, day, 1, "10:00", "18:00")
	bk, err := w.Svc.Book(owner, booking.BookRequest{SalonID: w.salon.ID, ServiceID: sv.ID, MasterID: m.ID, StartsAt: bookingtest.At(w.salon, day, "12:00"),
		Client: booking.ClientInput{Name: "Meera", Phone: bookingtest.Phone(), Email: "meera@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Svc.Cancel(owner, booking.CancelRequest{SalonID: w.salon.ID, BookingID: bk.ID, Reason: "ill", ForClient: true, Stated: true}); err != nil {
		t.Fatal(err)
	}
	b.do("POST", "/panel/lang", url.Values{"lang": {"en"}, "csrf": {b.csrf}}, "Referer", w.base+"/panel/audit")
	audit := html.UnescapeString(b.get("/panel/audit").body)
	audit = strings.ReplaceAll(audit[strings.Index(audit, `id="audit"`):], "\u00a0", " ")
	for _, bad := range []string{"«", "cancel_reason", "created_by_kind", "origin_channel", "contact_email", "client_confirmed", "800.5<",
		"Visit took place", "did not come", "master's service #"} {
		if strings.Contains(audit, bad) {
			t.Errorf("the English audit log shows %q", bad)
		}
	}
	if regexp.MustCompile(`\d\d\.\d\d\.\d{4}`).MatchString(audit) {
		t.Errorf("the English audit log writes a date dotted: %s", regexp.MustCompile(`\d\d\.\d\d\.\d{4}`).FindString(audit))
	}
	for _, want := range []string{"“Renée's cut”", "Price: 800.50 ₽", "Service added to a master: Zoë — “Renée's cut”", "Cancellation reason: — → ill", "Time: " + fmt.Sprint(day.Day) + " "} {
		if !strings.Contains(audit, want) {
			t.Errorf("the English audit log lacks %q:\n%s", want, audit[:min(len(audit), 3000)])
		}
	}
}

// TestTheServicesListSaysWhichNoMasterDoes: a service no active master
// does (clients are not offered it) is marked on the services page, so
// the owner sees why it cannot be booked.
func TestTheServicesListSaysWhichNoMasterDoes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	if _, err := w.Svc.CreateService(bookingtest.System(), w.salon.ID, booking.SalonService{Name: "Nobody's trim", DurationMin: 30, Price: 90000}); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.get("/panel/services").body)
	marks := regexp.MustCompile(`(?s)<a href="/panel/services/\d+">([^<]*)</a><br><small class="unserved">`).FindAllStringSubmatch(page, -1)
	if len(marks) != 1 || marks[0][1] != "Nobody's trim" {
		t.Errorf("services marked as done by no master: %q, want only Nobody's trim", marks)
	}
}

// TestTheAuditLogReadsMessageSettingsInWords: a change of what e-mails
// carry and of the quiet hours reads in the page's words ("подтверждение",
// "22:00"), not the database's ("confirmation", "22:00:00"; helper-49 L8).
func TestTheAuditLogReadsMessageSettingsInWords(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	b := w.owner()
	b.get("/panel/settings")
	if a := b.post("/panel/settings/messages", url.Values{"reminder_offsets": {"24 ч"}, "quiet_from": {"22:00"}, "quiet_to": {"08:00"},
		"email_confirmation": {"on"}, "email_waitlist_offer": {"on"}}); a.status != http.StatusSeeOther {
		t.Fatalf("save: %d", a.status)
	}
	page := html.UnescapeString(b.get("/panel/audit?entity=salon").body)
	for _, want := range []string{"подтверждение", "предложение из листа ожидания", "22:00"} {
		if !strings.Contains(page, want) {
			t.Errorf("the audit log lacks %q", want)
		}
	}
	for _, not := range []string{"waitlist_offer", "hold_expired", "22:00:00"} {
		if strings.Contains(page, not) {
			t.Errorf("the audit log reads %q", not)
		}
	}
}
