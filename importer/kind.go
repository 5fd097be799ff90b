package importer

import (
	"fmt"
	"math"
	"strings"
)

// Kind is what a file holds (CONTRACT section 5).
type Kind string

// Kinds, in the order a salon is best imported.
const (
	Services Kind = "services"
	Masters  Kind = "masters"
	Schedule Kind = "schedule"
	Clients  Kind = "clients"
	Bookings Kind = "bookings"
)

// Kinds lists every kind.
var Kinds = []Kind{Services, Masters, Schedule, Clients, Bookings}

// ParseKind reads a kind's name.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds {
		if strings.EqualFold(s, string(k)) {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown kind %q: one of services, masters, schedule, clients, bookings", s)
}

// column is a column of a kind: its key, its English and Russian header
// (the ones exports write) and other names people give it.
type column struct {
	key      string
	en, ru   string
	aliases  []string
	required bool
}

var columns = map[Kind][]column{
	Services: {
		{key: "name", en: "name", ru: "название", aliases: []string{"услуга", "service", "наименование"}, required: true},
		{key: "duration", en: "duration_min", ru: "длительность", aliases: []string{"duration", "длительность_мин", "минут", "minutes"}, required: true},
		{key: "price", en: "price", ru: "цена", aliases: []string{"стоимость", "cost"}, required: true},
		{key: "deposit", en: "deposit", ru: "предоплата", aliases: []string{"prepayment", "депозит"}},
		{key: "buffer", en: "buffer_min", ru: "буфер", aliases: []string{"buffer", "буфер_мин", "перерыв_после"}},
		{key: "processing", en: "processing_min", ru: "выдержка", aliases: []string{"processing", "выдержка_мин"}},
		{key: "finish", en: "finish_min", ru: "завершение", aliases: []string{"finish", "завершение_мин"}},
	},
	Masters: {
		{key: "name", en: "name", ru: "мастер", aliases: []string{"master", "имя", "фио"}, required: true},
		{key: "phone", en: "phone", ru: "телефон", aliases: []string{"tel", "тел"}},
		{key: "services", en: "services", ru: "услуги", aliases: []string{"service"}},
	},
	Schedule: {
		{key: "master", en: "master", ru: "мастер", aliases: []string{"name", "имя"}, required: true},
		{key: "date", en: "date", ru: "дата", aliases: []string{"day", "день"}, required: true},
		{key: "start", en: "start", ru: "начало", aliases: []string{"from", "с"}, required: true},
		{key: "end", en: "end", ru: "конец", aliases: []string{"to", "до", "окончание"}, required: true},
		{key: "break_start", en: "break_start", ru: "перерыв_с", aliases: []string{"break_from", "обед_с", "перерыв_начало"}},
		{key: "break_end", en: "break_end", ru: "перерыв_до", aliases: []string{"break_to", "обед_до", "перерыв_конец"}},
	},
	Clients: {
		{key: "name", en: "name", ru: "имя", aliases: []string{"client", "клиент", "фио"}, required: true},
		{key: "phone", en: "phone", ru: "телефон", aliases: []string{"tel", "тел"}, required: true},
		{key: "telegram", en: "telegram", ru: "телеграм", aliases: []string{"telegram_id", "tg"}},
		{key: "notes", en: "notes", ru: "заметки", aliases: []string{"note", "comment", "комментарий", "примечание"}},
	},
	Bookings: {
		{key: "master", en: "master", ru: "мастер", required: true},
		{key: "service", en: "service", ru: "услуга", required: true},
		{key: "date", en: "date", ru: "дата", aliases: []string{"day", "день"}, required: true},
		{key: "start", en: "start", ru: "начало", aliases: []string{"time", "время"}, required: true},
		{key: "client_phone", en: "client_phone", ru: "телефон", aliases: []string{"phone", "телефон_клиента"}, required: true},
		{key: "client_name", en: "client_name", ru: "имя", aliases: []string{"client", "клиент", "имя_клиента", "name"}},
		{key: "status", en: "status", ru: "статус"},
		{key: "visit", en: "visit", ru: "визит"},
	},
}

// normHeader folds a header cell for matching: case, spaces, dashes, ё.
func normHeader(s string) string {
	s = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(s, "\ufeff")))
	s = headerReplacer.Replace(s)
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	return strings.Trim(s, "_")
}

var headerReplacer = strings.NewReplacer(" ", "_", "-", "_", "ё", "е", ".", "", "(", "", ")", "", ",", "")

// layout is where each column of a kind is in a file.
type layout struct {
	kind    Kind
	index   map[string]int // column key -> field index
	unknown []string       // header cells that name no column (the first MaxUnknownShown)
	// moreUnknown counts the unknown columns past those.
	moreUnknown int
}

// MaxUnknownShown is how many unknown columns a summary names; the rest
// are counted.
const MaxUnknownShown = 20

// mapHeader finds the kind's columns in a header. Missing required
// columns are an error naming them; unknown columns are listed.
func mapHeader(kind Kind, header []string) (*layout, error) {
	cols, ok := columns[kind]
	if !ok {
		return nil, fmt.Errorf("unknown kind %q", kind)
	}
	l := &layout{kind: kind, index: map[string]int{}}
	names := make([]map[string]bool, len(cols)) // each column's names, normalized once
	for k, c := range cols {
		names[k] = map[string]bool{normHeader(c.en): true, normHeader(c.ru): true, c.key: true}
		for _, a := range c.aliases {
			names[k][normHeader(a)] = true
		}
	}
	for i, h := range header {
		n := normHeader(h)
		found := false
		for k, c := range cols {
			if _, taken := l.index[c.key]; taken {
				continue
			}
			if names[k][n] {
				l.index[c.key] = i
				found = true
				break
			}
		}
		if !found && strings.TrimSpace(h) != "" {
			if len(l.unknown) < MaxUnknownShown {
				l.unknown = append(l.unknown, shorten(strings.TrimSpace(h), 60))
			} else {
				l.moreUnknown++
			}
		}
	}
	var missing []string
	for _, c := range cols {
		if _, ok := l.index[c.key]; c.required && !ok {
			missing = append(missing, c.en+" / "+c.ru)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the header has no column %s", strings.Join(missing, ", "))
	}
	return l, nil
}

// get returns a row's value of a column ("" when the file has no such
// column or the row is short), and whether the file has the column.
func (l *layout) get(fields []string, key string) (string, bool) {
	i, ok := l.index[key]
	if !ok {
		return "", false
	}
	if i >= len(fields) {
		return "", true
	}
	return strings.TrimSpace(fields[i]), true
}

// has reports whether the file has a column.
func (l *layout) has(key string) bool { _, ok := l.index[key]; return ok }

// column is the position of a column in the file (past every column for
// one it does not have).
func (l *layout) column(key string) int {
	if i, ok := l.index[key]; ok {
		return i
	}
	return math.MaxInt
}

// headerName is a column's header as the file wrote it, for reports.
func (l *layout) headerName(key string, header []string) string {
	if i, ok := l.index[key]; ok && i < len(header) {
		return strings.TrimSpace(header[i])
	}
	return key
}

// exportHeader is the header an export writes, in lang.
func exportHeader(kind Kind, lang string) []string {
	cols := columns[kind]
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.en
		if lang == "ru" {
			out[i] = c.ru
		}
	}
	return out
}
