package panel

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"salon/booking"
	"salon/i18n"

	"github.com/gofiber/fiber/v2"
)

// A booking's history and the audit log read as sentences, in the salon's
// time, with names: "Перенесена: Анна 12:15 → Борис 11:30", never internal
// columns, ids or <nil>.

// historyLine is one event of a booking's history.
type historyLine struct {
	At   string
	Text string // what happened
	Who  string // who did it
}

// historyLines puts a booking's events in words, on the salon's clock
// and in its currency; masters names the salon's masters by id, services
// the visit's services (a move of one of them names it).
func historyLines(events []booking.Event, masters, services map[int64]string, salon *booking.Salon, l *lang) []historyLine {
	loc := salon.Location()
	out := make([]historyLine, 0, len(events))
	for _, e := range events {
		h := historyLine{At: l.DateTime(e.At.In(loc)), Text: l.T(eventNames[e.Action])}
		if h.Text == "" {
			h.Text = l.T(e.Action)
		}
		d := e.Details
		switch e.Action {
		case "rescheduled":
			from, to := stamp(d["from"], loc, l), stamp(d["to"], loc, l)
			fm, tm := masters[idOf(d["from_master_id"])], masters[idOf(d["to_master_id"])]
			if fm == tm {
				fm, tm = "", ""
			}
			if bySalon, _ := d["by_salon"].(bool); bySalon {
				h.Text += " " + l.T("by the salon")
			}
			if forClient, _ := d["for_client"].(bool); forClient {
				h.Text += " " + l.T("at the client's request")
			}
			h.Text += ": "
			if svc := services[idOf(d["service_id"])]; svc != "" {
				h.Text += svc + ", " // (one service of a visit)
			}
			h.Text += strings.TrimSpace(fm+" "+from) + " → " + strings.TrimSpace(tm+" "+to)
		case "cancelled":
			if asked, ok := d["for_client"].(bool); ok { // (the desk's)
				h.Text += " " + map[bool]string{true: l.T("at the client's request"), false: l.T("by the salon")}[asked]
			}
			if r, _ := d["reason"].(string); r != "" {
				h.Text += ": " + r
			}
		case "paid_with_balance":
			if hint, _ := d["code_hint"].(string); hint != "" {
				h.Text += ": " + l.T(fmt.Sprint(d["kind"])) + " …" + hint
			}
			if n, ok := d["units"].(float64); ok {
				h.Text += ", " + units(l, salon, booking.BalanceKind(fmt.Sprint(d["kind"])), int64(n))
			}
		case "completed":
			if auto, _ := d["auto"].(bool); auto {
				h.Text += " " + l.T("(marked by itself after the day)")
			}
		}
		switch {
		case e.By != "":
			h.Who = e.By
		default:
			h.Who = l.T(actorNames[string(e.Actor.Kind)])
			if ch := e.Actor.Channel; ch != "" && ch != "system" && e.Actor.Kind != "system" {
				h.Who += " · " + l.T(channelNames[string(ch)])
			}
		}
		out = append(out, h)
	}
	return out
}

var eventNames = map[string]string{
	"created": "Booked", "rescheduled": "Moved", "cancelled": "Cancelled", "completed": "Visit completed",
	"no_show": "The client did not show up", "hold_expired": "Not paid in time: the time was released",
	"confirmed": "Deposit paid: confirmed", "paid": "Deposit paid", "refunded": "Deposit refunded",
	"imported": "Changed by an import", "client_confirmed": "The client confirmed they will come",
	"deposit_paid_in_salon": "Deposit paid in the salon", "deposit_due_paid_in_salon": "The rest of the deposit paid in the salon",
	"paid_late": "Deposit paid late: booked again", "paid_with_balance": "Paid at the desk with",
}

var actorNames = map[string]string{"admin": "the salon", "client": "the client", "system": "automatically", "import": "an import"}

var channelNames = map[string]string{"telegram": "Telegram", "widget": "online booking", "panel": "the panel",
	"email": "e-mail", "sms": "SMS", "import": "an import"}

// stamp is a time of the details (RFC 3339 text) on the salon's clock,
// as the reader writes it.
func stamp(v any, loc *time.Location, l *lang) string {
	s, _ := v.(string)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return l.When(t.In(loc), time.Now())
}

// idOf reads an id of JSON details (a number).
func idOf(v any) int64 {
	switch x := v.(type) {
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// auditNames is what the audit log's values are read with: the salon's
// masters and services by id, its clock and its currency.
type auditNames struct {
	masters, services map[int64]string
	loc               *time.Location
	currency          string
}

// auditText puts a change of the audit log in words: what was done to
// which record, and each changed column as "label: before → after".
func auditText(r booking.AuditEntry, n auditNames, l *lang) (what string, changes []string) {
	name := ""
	kind := ""
	for _, m := range []map[string]any{r.New, r.Old} {
		for _, k := range []string{"name", "title"} {
			if v, ok := m[k].(string); ok && v != "" && name == "" {
				name = l.Quote(v)
			}
		}
		if e, ok := m["email"].(string); ok && e != "" && name == "" {
			name = e
		}
		if h, ok := m["code_hint"].(string); ok && h != "" && name == "" {
			name = "…" + h
		}
		if k, ok := m["kind"].(string); ok && kind == "" {
			kind = k
		}
	}
	if name == "" {
		name = "#" + strconv.FormatInt(r.EntityID, 10)
	}
	what = l.T(auditActions[r.Action])
	if what == "" {
		what = l.T(r.Action)
	}
	if r.Entity == "invitation" && r.Action == "delete" && r.Old["email"] == r.Actor {
		what = l.T("Accepted") // (used up by its invitee, who became the user: not withdrawn)
	}
	what += ": " + l.T(entityNames[r.Entity]) + " " + name
	if r.Entity == "master_service" { // (a pair: the master, by the entry's id, and the service)
		m := r.New
		if m == nil {
			m = r.Old
		}
		master, service := n.masters[r.EntityID], n.services[idOf(m["service_id"])]
		if master == "" {
			master = "#" + strconv.FormatInt(r.EntityID, 10)
		}
		if service == "" {
			service = "#" + fmt.Sprint(m["service_id"])
		} else {
			service = l.Quote(service)
		}
		what = l.T(masterServiceActions[r.Action]) + ": " + master + " — " + service
	}
	keys := map[string]bool{}
	for k := range r.Old {
		keys[k] = true
	}
	for k := range r.New {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if hiddenColumns[k] || strings.HasSuffix(k, "_hash") || strings.HasSuffix(k, "_token") {
			continue
		}
		if r.Entity == "master_service" && (k == "master_id" || r.Old == nil && r.New[k] == nil) {
			continue // (named above; a service added keeps its own price and duration)
		}
		if k == "remaining" && r.Action == "create" {
			continue // (a balance is created empty: its credit is the ledger's)
		}
		key, as := k, k // the column's label, and how its value reads
		if r.Entity == "payment_session" && k == "status" {
			key, as = "payment", "payment" // (a payment's status, not a booking's)
		}
		if r.Entity == "balance" || r.Entity == "balance_offer" {
			switch {
			case balanceUnits[k] && kind == string(booking.BalanceCertificate):
				key, as = "amount", "amount" // a certificate's units are money
			case balanceUnits[k]:
				key, as = "visits", "visits" // a package's, visits
			case k == "price":
				as = "amount" // (in minor units, as the units)
			}
		}
		before, after := auditValue(as, r.Old[k], n, l), auditValue(as, r.New[k], n, l)
		if r.Old != nil && r.New != nil && before == after {
			continue
		}
		label := i18n.Field(key).In(l.Code)
		if k == "remaining" {
			label = l.T("Left")
		}
		switch {
		case r.Old == nil:
			changes = append(changes, label+": "+after)
		case r.New == nil:
			changes = append(changes, label+": "+before)
		default:
			changes = append(changes, label+": "+before+" → "+after)
		}
	}
	return what, changes
}

// hiddenColumns are what a person does not read in a change.
var hiddenColumns = map[string]bool{"id": true, "salon_id": true, "version": true, "created_at": true, "updated_at": true,
	"catalog_version": true, "client_id": true, "service_id": true, "visit_id": true, "idempotency_key": true,
	"request_hash": true, "request_key": true, "origin_ref": true, "calendar_token": true, "manage_token": true, "code_key": true,
	"created_by_id": true, "invited_by": true, "mailed_at": true, "mail_error": true}

var auditActions = map[string]string{"create": "Created", "update": "Changed", "delete": "Deleted",
	"reschedule": "Moved", "cancelled": "Cancelled", "completed": "Visit completed", "no_show": "The client did not show up",
	"confirmed": "Confirmed", "refund": "Refunded",
	"payment_retry": "Checked again with the payment service", "payment_release": "Money held released",
	"payment_refund": "Refund asked", "payment_paid_in_salon": "Deposit paid in the salon",
	"payment_refund_recorded": "Refund recorded as made at the payment service",
	"refund_recorded":         "Refund recorded as made at the payment service",
	"paid_booking":            "A booking paid with it at the desk",
	"code_renewed":            "Given a new code (the old one no longer works)"}

// masterServiceActions say what was done to which master's services.
var masterServiceActions = map[string]string{"create": "Service added to a master", "delete": "Service taken from a master",
	"update": "Master's price or duration of a service changed"}

var entityNames = map[string]string{"booking": "booking", "client": "client", "master": "master", "master_service": "master's service",
	"service": "service", "shift": "shift", "salon": "salon", "user": "user", "client_channels": "client's messages",
	"balance": "package or certificate", "balance_offer": "offer for sale", "payment_session": "payment", "invitation": "invitation"}

// balanceUnits are the columns of balances and offers in their units: a
// package's visits, a certificate's minor units of money.
var balanceUnits = map[string]bool{"units": true, "total": true, "remaining": true}

// auditValue is a column's value as people read it: times on the salon's
// clock, masters and services by name, money in the salon's currency,
// yes/no, "—" for none.
func auditValue(key string, v any, n auditNames, l *lang) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case bool:
		if x {
			return l.T("yes")
		}
		return l.T("no")
	case string:
		if x == "" {
			return "—"
		}
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return l.DateTime(t.In(n.loc))
		}
		if d, err := booking.ParseDate(x); err == nil {
			return l.Date(d)
		}
		if c, err := time.Parse("15:04:05", x); err == nil { // (a time of day: quiet hours)
			return c.Format("15:04")
		}
		switch key {
		case "status":
			return l.Status(booking.Status(x))
		case "source":
			return l.Source(booking.Source(x))
		case "kind", "refund_policy", "role":
			return l.T(x)
		case "created_by_kind":
			if who := actorNames[x]; who != "" {
				return l.T(who)
			}
		case "payment":
			word := "payment " + x // (as the attention page says a payment's status)
			return strings.TrimPrefix(l.T(word), "payment ")
		case "paid_via":
			return l.T(map[string]string{"salon": "paid in the salon", "online": "paid online"}[x])
		}
		return x
	case float64:
		switch key {
		case "master_id":
			if name := n.masters[int64(x)]; name != "" {
				return name
			}
		case "booking":
			return "#" + strconv.FormatInt(int64(x), 10)
		case "amount", "paid_back": // (in minor units)
			if n.currency != "" {
				return booking.Money(x).Format(n.currency, l.Code)
			}
		case "price", "deposit", "prepaid", "deposit_due", "refunded": // (numeric: in major units)
			if n.currency != "" {
				return booking.Money(math.Round(x*100)).Format(n.currency, l.Code)
			}
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		if len(x) == 0 && (key == "service_ids" || strings.HasSuffix(key, "_kinds")) {
			return "—"
		}
		if strings.HasSuffix(key, "_kinds") { // (the messages an e-mail or SMS carries, by name)
			names := make([]string, 0, len(x))
			for _, k := range x {
				names = append(names, l.T(cmp.Or(kindNames[booking.MessageKind(fmt.Sprint(k))], fmt.Sprint(k))))
			}
			return strings.Join(names, ", ")
		}
		if key != "service_ids" {
			break
		}
		names := make([]string, 0, len(x))
		for _, id := range x {
			name := n.services[idOf(id)]
			if name == "" {
				name = "#" + fmt.Sprint(id)
			}
			names = append(names, name)
		}
		return strings.Join(names, ", ")
	}
	return fmt.Sprint(v)
}

// masterNames names every master of the salon (the inactive too: history
// names who it was) by id.
func (h *Handler) masterNames(c *fiber.Ctx) (map[int64]string, error) {
	ms, err := h.svc.AllMasters(c.UserContext(), user(c).SalonID)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]string, len(ms))
	for _, m := range ms {
		out[m.ID] = m.Name
	}
	return out, nil
}
