// Package importer reads CSV files of services, masters, schedules, clients
// and bookings into a salon, and writes them back out (CONTRACT section 5).
// It is used by `salon import`, `salon export` and the panel's upload page.
//
// A file is streamed: read in chunks, each chunk parsed (every problem
// named with its physical line, column, value and reason, in the salon's
// language) and written through booking's batch methods, which accept or
// reject each row whole, by natural key, in a few round trips: catalogue
// rows and clients in one transaction per chunk, shifts with one delete and
// one COPY, bookings grouped per master in one transaction with a
// savepoint per row against the exclusion constraint. Memory holds one
// chunk, never the file. Every change is audited as "import:" and the file
// name. A dry run rehearses every transaction and rolls it back.
package importer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"salon/booking"
	"salon/i18n"
)

// Options says what to import and how.
type Options struct {
	Kind   Kind
	Salon  *booking.Salon
	File   string // the file's name, recorded in the audit log
	DryRun bool
	// Lang is the language of the reasons (default: the salon's).
	Lang string
	// Report receives one line per changed row and per bad column of a
	// rejected row, in file order.
	Report func(Line) error
	// Progress, when set, is called after each chunk with the bytes and
	// rows read so far.
	Progress func(bytes int64, rows int)
	// User, when set, is the panel user running the import: held to their
	// role, and named in the audit log.
	User *booking.User
}

// Summary counts the rows of a run.
type Summary struct {
	Read      int      `json:"read"`
	Created   int      `json:"created"`
	Updated   int      `json:"updated"`
	Unchanged int      `json:"unchanged"`
	Rejected  int      `json:"rejected"`
	Unknown   []string `json:"unknown_columns,omitempty"` // header cells that name no column: ignored (the first MaxUnknownShown)
	// MoreUnknown counts the unknown columns past those named.
	MoreUnknown int    `json:"more_unknown_columns,omitempty"`
	Encoding    string `json:"encoding"`
	Delimiter   string `json:"delimiter"`
	DryRun      bool   `json:"dry_run"`
}

// Line is one line of a report: a row that was rejected or changed.
type Line struct {
	Line         int             `json:"line"`
	Outcome      booking.Outcome `json:"outcome"`
	Key          string          `json:"key"`
	Column       string          `json:"column,omitempty"`
	Value        string          `json:"value,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	Alternatives []string        `json:"alternatives,omitempty"`
}

// Chunk sizes: rows parsed and written together.
var chunkSize = map[Kind]int{Services: 500, Masters: 500, Schedule: 5000, Clients: 2000, Bookings: 5000}

// Import reads r and writes its rows into the salon. It returns an error
// only when the file as a whole cannot be read (no header, a required
// column missing) or the database fails; rejected rows are in the summary
// and the report.
func Import(ctx context.Context, svc *booking.Service, r io.Reader, opt Options) (*Summary, error) {
	if opt.Salon == nil {
		return nil, errors.New("import: no salon")
	}
	if opt.Lang == "" {
		opt.Lang = opt.Salon.Locale
	}
	if opt.File == "" {
		opt.File = "stdin"
	}
	if opt.Report == nil {
		opt.Report = func(Line) error { return nil }
	}
	caller := booking.ByImport(opt.Salon.ID, opt.File)
	if opt.User != nil {
		caller = booking.ByUserImport(*opt.User, opt.File)
	}
	ctx = booking.As(ctx, caller)
	rd, err := NewReader(r, opt.Salon.Locale)
	if err != nil {
		return nil, err
	}
	l, err := mapHeader(opt.Kind, rd.Header)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Unknown: l.unknown, MoreUnknown: l.moreUnknown + rd.HeaderPast, Encoding: rd.Encoding, Delimiter: delimName(rd.Delim), DryRun: opt.DryRun}
	run := &run{ctx: ctx, svc: svc, opt: opt, l: l, header: rd.Header, delim: rd.Delim, sum: sum, lang: opt.Lang,
		tr: func(key string, args ...any) string { return i18n.New(key, args...).In(opt.Lang) }}
	size := chunkSize[opt.Kind]
	var chunk []Record
	var lastKey string
	for {
		if err := ctx.Err(); err != nil {
			return nil, err // stopped: the chunk in flight was rolled back
		}
		rec, err := rd.Next()
		var (
			le *LineError
			fe *FileError
		)
		switch {
		case errors.Is(err, io.EOF):
			if err := run.flush(chunk); err != nil {
				return nil, err
			}
			count(opt.Kind, sum)
			return sum, nil
		case errors.As(err, &le):
			sum.Read++
			run.reject(le.Line, "", run.columnName(le.Column), "", le.Reason.In(run.lang))
			continue
		case errors.As(err, &fe):
			// The rows before the line are taken, as they would be had
			// the file ended there; then the import stops, naming it.
			if err := run.flush(chunk); err != nil {
				return nil, err
			}
			count(opt.Kind, sum)
			fe.msg = run.tr("line %d: %s; the import stopped there", fe.Line, fe.Reason)
			return sum, fe
		case err != nil:
			return nil, err
		}
		sum.Read++
		// A schedule's day (its master and date) stays in one chunk.
		key := ""
		if opt.Kind == Schedule {
			m, _ := l.get(rec.Fields, "master")
			d, _ := l.get(rec.Fields, "date")
			key = strings.ToLower(m) + "\x00" + d
		}
		if len(chunk) >= size && (opt.Kind != Schedule || key != lastKey) || len(chunk) >= 4*size {
			if err := run.flush(chunk); err != nil {
				return nil, err
			}
			chunk = chunk[:0]
			if opt.Progress != nil {
				opt.Progress(rd.Offset(), sum.Read)
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		lastKey = key
		chunk = append(chunk, rec)
	}
}

func delimName(r rune) string {
	switch r {
	case '\t':
		return "tab"
	}
	return string(r)
}

// run is one import in progress.
type run struct {
	ctx         context.Context
	svc         *booking.Service
	opt         Options
	l           *layout
	header      []string
	delim       rune // the file's
	sum         *Summary
	lang        string                      // of the reasons
	tr          func(string, ...any) string // a key of i18n in lang
	pending     []Line                      // the chunk's report lines, sent in file order
	masterNames map[int64]string            // names, for the alternatives offered
}

// problem is what is wrong with a row before it reaches the database: a
// column's, then the next column's (each column's first, in the order
// they are read), so that one report names all of what to fix.
type problem struct {
	column, value, reason string
	next                  *problem
}

// add appends to the problems at *p one of column, unless that column has
// one already.
func add(p **problem, column, value, reason string) {
	for ; *p != nil; p = &(*p).next {
		if (*p).column == column {
			return
		}
	}
	*p = &problem{column: column, value: value, reason: reason}
}

// has reports whether column has a problem among p.
func (p *problem) has(column string) bool {
	for ; p != nil; p = p.next {
		if p.column == column {
			return true
		}
	}
	return false
}

// MaxValueShown is how much of a cell a report line shows.
const MaxValueShown = 200

func (r *run) reject(line int, key, column, value, reason string) {
	r.sum.Rejected++
	r.pending = append(r.pending, Line{Line: line, Outcome: booking.Rejected, Key: shorten(key, MaxValueShown),
		Column: column, Value: shorten(value, MaxValueShown), Reason: reason})
}

// rejectAll rejects a row for its problems p: one report line for each
// column at fault, the row counted once.
func (r *run) rejectAll(line int, key string, p *problem) {
	var all []*problem
	for q := p; q != nil; q = q.next {
		all = append(all, q)
	}
	// In the file's column order, as the row reads.
	at := func(q *problem) int {
		if i := slices.IndexFunc(r.header, func(h string) bool { return strings.TrimSpace(h) == q.column }); i >= 0 {
			return i
		}
		return len(r.header)
	}
	slices.SortStableFunc(all, func(a, b *problem) int { return cmp.Compare(at(a), at(b)) })
	r.reject(line, key, all[0].column, all[0].value, all[0].reason)
	for _, q := range all[1:] {
		r.pending = append(r.pending, Line{Line: line, Outcome: booking.Rejected, Key: shorten(key, MaxValueShown),
			Column: q.column, Value: shorten(q.value, MaxValueShown), Reason: q.reason})
	}
}

// columnName is the header's name of a 1-based column ("" for none).
func (r *run) columnName(col int) string {
	if col < 1 || col > len(r.header) {
		return ""
	}
	return shorten(r.header[col-1], 60)
}

// shorten cuts s to at most n runes, saying how long it was.
func shorten(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i >= len(s) {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:i], len(s))
}

// load parses each record of a chunk with parse (which names the row's key
// and any problem), rejects the rows with a problem, writes the others with
// write (one of booking's batch methods) and records their outcomes.
func load[T any](r *run, chunk []Record, parse func(rec Record, p **problem) (T, string),
	write func(context.Context, int64, []T, bool) ([]booking.RowResult, error)) error {
	var rows []T
	var refs []rowRef
	for _, rec := range chunk {
		var p *problem
		row, key := parse(rec, &p)
		r.overflow(rec, &p)
		if p != nil {
			r.rejectAll(rec.Line, key, p)
			continue
		}
		rows = append(rows, row)
		refs = append(refs, rowRef{rec.Line, key, rec.Fields})
	}
	if len(rows) == 0 {
		return nil
	}
	res, err := write(r.ctx, r.opt.Salon.ID, rows, r.opt.DryRun)
	if err != nil {
		return err
	}
	return r.results(refs, res)
}

// overflow records a row with more values than the header has columns:
// a value that holds the file's delimiter, not quoted (services "A;B" in
// a file separated by semicolons), whose pieces past the header would be
// lost. Empty cells past the header (a trailing delimiter) are no values.
func (r *run) overflow(rec Record, p **problem) {
	if len(rec.Fields) <= len(r.header) || blank(rec.Fields[len(r.header):]) {
		return
	}
	n := len(rec.Fields)
	for n > len(r.header) && strings.TrimSpace(rec.Fields[n-1]) == "" {
		n--
	}
	d := string(r.delim)
	if r.delim == '\t' {
		d = r.tr("tab")
	}
	why := r.tr("%d values, but the header has %d columns: a value with a %q in it must be in double quotes", n, len(r.header), d)
	if r.opt.Kind == Masters {
		why = r.tr("%d values, but the header has %d columns: services with a %q between them must be in double quotes, or separated by |",
			n, len(r.header), d)
	}
	add(p, "", strings.Join(rec.Fields[len(r.header):n], d), why)
}

// keyOf is a row's key in a report: its key columns' values, the empty
// ones left out.
func keyOf(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return strings.TrimSpace(p) == "" }), " ")
}

// rowRef ties a parsed row to its line, key and fields.
type rowRef struct {
	line   int
	key    string
	fields []string
}

// flush parses a chunk, writes it, and reports its lines in file order.
func (r *run) flush(chunk []Record) error {
	if len(chunk) == 0 {
		return nil
	}
	var err error
	switch r.opt.Kind {
	case Services:
		err = r.services(chunk)
	case Masters:
		err = r.masters(chunk)
	case Schedule:
		err = r.schedule(chunk)
	case Clients:
		err = r.clients(chunk)
	case Bookings:
		err = r.bookings(chunk)
	default:
		err = fmt.Errorf("unknown kind %q", r.opt.Kind)
	}
	if err != nil {
		return err
	}
	slices.SortStableFunc(r.pending, func(a, b Line) int { return cmp.Compare(a.Line, b.Line) })
	for _, l := range r.pending {
		if err := r.opt.Report(l); err != nil {
			return err
		}
	}
	r.pending = r.pending[:0]
	return nil
}

// field reads a column of a record, checking required ones.
func (r *run) field(rec Record, key string, required bool, p **problem) string {
	v, _ := r.l.get(rec.Fields, key)
	if v == "" && required {
		add(p, r.l.headerName(key, r.header), "", r.tr("required"))
	}
	return v
}

// bad records what is wrong with the row's column key (unless it has a
// problem already).
func (r *run) bad(p **problem, key, value, reason string) {
	add(p, r.l.headerName(key, r.header), value, reason)
}

// fine reports whether none of the row's columns keys has a problem.
func (r *run) fine(p *problem, keys ...string) bool {
	for _, k := range keys {
		if p.has(r.l.headerName(k, r.header)) {
			return false
		}
	}
	return true
}

// results records the core's outcome of each row.
func (r *run) results(refs []rowRef, res []booking.RowResult) error {
	for i, ref := range refs {
		x := res[i]
		ln := Line{Line: ref.line, Outcome: x.Outcome, Key: ref.key}
		var more []Line
		switch x.Outcome {
		case booking.Created:
			r.sum.Created++
		case booking.Updated:
			r.sum.Updated++
		case booking.Unchanged:
			r.sum.Unchanged++
			continue // not reported
		case booking.Rejected:
			r.sum.Rejected++
			why := r.explain(x.Err)
			ln.Reason = why[0].reason
			if col := why[0].column; col != "" {
				ln.Column = r.l.headerName(col, r.header)
				ln.Value, _ = r.l.get(ref.fields, col)
			}
			for _, w := range why[1:] { // (after this row's line: its other columns)
				v, _ := r.l.get(ref.fields, w.column)
				more = append(more, Line{Line: ref.line, Outcome: booking.Rejected, Key: ln.Key,
					Column: r.l.headerName(w.column, r.header), Value: shorten(v, MaxValueShown), Reason: w.reason})
			}
			if len(x.Alternatives) > 0 && r.masterNames == nil {
				r.masterNames = map[int64]string{}
				if ms, err := r.svc.AllMasters(r.ctx, r.opt.Salon.ID); err == nil {
					for _, m := range ms {
						r.masterNames[m.ID] = m.Name
					}
				}
			}
			for _, a := range x.Alternatives {
				ln.Alternatives = append(ln.Alternatives, a.Start.In(r.opt.Salon.Location()).Format("2006-01-02 15:04")+" "+r.masterNames[a.MasterID])
			}
		}
		r.pending = append(append(r.pending, ln), more...)
	}
	return nil
}

// reason is why the core refused a row: a column key ("" for the row)
// and why, in the run's language.
type reason struct{ column, reason string }

// explain turns a core error into its reasons: one for each field it
// names, in the file's column order (then by name: a row with two bad
// cells names them the same way every time), or one for the row.
func (r *run) explain(err error) []reason {
	var (
		ve *booking.ValidationError
		lb *booking.LostBookingsError
		st *booking.SlotTakenError
	)
	switch {
	case errors.As(err, &lb):
		var ids []string
		for _, b := range lb.Bookings {
			ids = append(ids, fmt.Sprintf("#%d %s", b.ID, b.StartsAt.In(r.opt.Salon.Location()).Format("2006-01-02 15:04")))
		}
		return []reason{{"start", r.tr("bookings would be outside working hours: %s", strings.Join(ids, ", "))}}
	case errors.As(err, &st), errors.Is(err, booking.ErrSlotTaken):
		if st != nil && len(st.Alternatives) == 0 {
			return []reason{{"start", r.tr("this time is taken, and nothing is free nearby")}}
		}
		return []reason{{"start", r.tr("this time is taken; the nearest free starts are listed")}}
	case errors.As(err, &ve) && len(ve.Fields) > 0:
		fields := slices.SortedFunc(maps.Keys(ve.Fields), func(a, b string) int {
			return cmp.Or(cmp.Compare(r.l.column(coreField(a)), r.l.column(coreField(b))), cmp.Compare(a, b))
		})
		var out []reason
		for _, f := range fields {
			if k := coreField(f); len(out) == 0 || out[len(out)-1].column != k { // (two fields of one column: its first)
				out = append(out, reason{k, ve.Fields[f].In(r.lang)})
			}
		}
		return out
	}
	return []reason{{"", i18n.Of(err).In(r.lang)}}
}

// coreField maps the core's field names to this kind's column keys.
func coreField(f string) string {
	switch f {
	case "duration_min":
		return "duration"
	case "buffer_min":
		return "buffer"
	case "processing_min":
		return "processing"
	case "finish_min":
		return "finish"
	case "client_phone", "client_name":
		return f
	case "shifts":
		return "start"
	}
	return f
}

func (r *run) services(chunk []Record) error {
	return load(r, chunk, func(rec Record, p **problem) (booking.ServiceRow, string) {
		name := r.field(rec, "name", true, p)
		dur := r.field(rec, "duration", true, p)
		price := r.field(rec, "price", true, p)
		dep := r.field(rec, "deposit", false, p)
		buf := r.field(rec, "buffer", false, p)
		proc := r.field(rec, "processing", false, p)
		fin := r.field(rec, "finish", false, p)
		row := booking.ServiceRow{SalonService: booking.SalonService{Name: name}, HasDeposit: r.l.has("deposit") && dep != "",
			HasBuffer: r.l.has("buffer") && buf != "", HasProcessing: r.l.has("processing") || r.l.has("finish")}
		row.DurationMin = r.minutes(dur, "duration", p)
		row.Price = r.money(price, "price", p)
		if row.HasDeposit {
			row.Deposit = r.money(dep, "deposit", p)
		}
		if row.HasBuffer {
			row.BufferMin = r.minutes(buf, "buffer", p)
		}
		if proc != "" {
			row.ProcessingMin = r.minutes(proc, "processing", p)
		}
		if fin != "" {
			row.FinishMin = r.minutes(fin, "finish", p)
		}
		return row, name
	}, r.svc.ImportServices)
}

func (r *run) masters(chunk []Record) error {
	return load(r, chunk, func(rec Record, p **problem) (booking.MasterRow, string) {
		name := r.field(rec, "name", true, p)
		phone := r.field(rec, "phone", false, p)
		svcs := r.field(rec, "services", false, p)
		row := booking.MasterRow{Name: name, Phone: phone, HasPhone: r.l.has("phone") && phone != "", HasServices: r.l.has("services")}
		if none := strings.TrimSpace(svcs); none == noServices || none == "-" {
			row.NoServices, svcs = true, ""
		}
		for _, s := range strings.FieldsFunc(svcs, func(c rune) bool { return c == ';' || c == '|' }) {
			if s = strings.TrimSpace(s); s != "" {
				row.Services = append(row.Services, s)
			}
		}
		return row, name
	}, r.svc.ImportMasters)
}

func (r *run) schedule(chunk []Record) error {
	var days []booking.DayRow
	var refs [][]rowRef // the rows of each day
	var parts [][]int   // for each day's shift, its row among refs
	index := map[string]int{}
	broken := map[string]int{} // a day with a row refused as read: its first such line
	for _, rec := range chunk {
		var p *problem
		r.overflow(rec, &p)
		master := r.field(rec, "master", true, &p)
		ds := r.field(rec, "date", true, &p)
		start := r.field(rec, "start", false, &p)
		end := r.field(rec, "end", false, &p)
		bs := r.field(rec, "break_start", false, &p)
		be := r.field(rec, "break_end", false, &p)
		key := keyOf(master, ds)
		d := r.date(ds, "date", &p)
		var sh *booking.ShiftInput
		if start != "" || end != "" {
			in := booking.ShiftInput{Start: r.clock(start, "start", booking.ParseClock, &p), End: r.clock(end, "end", booking.ParseShiftEnd, &p)}
			if bs != "" || be != "" {
				in.BreakStart, in.BreakEnd = r.clock(bs, "break_start", booking.ParseShiftEnd, &p), r.clock(be, "break_end", booking.ParseShiftEnd, &p)
			}
			sh = &in
		}
		k := strings.ToLower(master) + "\x00" + d.String()
		if p != nil {
			r.rejectAll(rec.Line, key, p)
			if _, seen := broken[k]; !seen && master != "" && r.fine(p, "date") {
				broken[k] = rec.Line // (the day's other rows are refused with it)
			}
			continue
		}
		i, ok := index[k]
		if !ok {
			i = len(days)
			index[k] = i
			days = append(days, booking.DayRow{Master: master, Date: d})
			refs, parts = append(refs, nil), append(parts, nil)
		}
		if sh != nil {
			days[i].Shifts = append(days[i].Shifts, *sh)
			parts[i] = append(parts[i], len(refs[i]))
		}
		refs[i] = append(refs[i], rowRef{rec.Line, key, rec.Fields})
	}
	// A day is taken whole: one with a row refused as read is not written
	// (its other rows would replace the day without that row's shift).
	var flat []rowRef
	var fres []booking.RowResult
	kept, keptRefs, keptParts := days[:0], refs[:0], parts[:0]
	for i, d := range days {
		if line, bad := broken[strings.ToLower(d.Master)+"\x00"+d.Date.String()]; bad {
			for _, ref := range refs[i] {
				flat = append(flat, ref)
				fres = append(fres, booking.RowResult{Outcome: booking.Rejected,
					Err: i18n.New("line %d of this day is wrong, and a day is taken whole", line)})
			}
			continue
		}
		kept, keptRefs, keptParts = append(kept, d), append(keptRefs, refs[i]), append(keptParts, parts[i])
	}
	days, refs, parts = kept, keptRefs, keptParts
	if len(days) == 0 {
		return r.results(flat, fres)
	}
	res, err := r.svc.ImportSchedule(r.ctx, r.opt.Salon.ID, days, r.opt.DryRun)
	if err != nil {
		return err
	}
	// Every row of a day shares the day's outcome; a day refused for one
	// of its shifts names that shift's row, and its other rows name it.
	for i := range days {
		at := -1
		if part := res[i].Part; part > 0 && part <= len(parts[i]) {
			at = parts[i][part-1]
		}
		for k, ref := range refs[i] {
			x := res[i]
			if at >= 0 && k != at {
				x.Err = i18n.New("line %d of this day is wrong, and a day is taken whole", refs[i][at].line)
			}
			flat = append(flat, ref)
			fres = append(fres, x)
		}
	}
	return r.results(flat, fres)
}

func (r *run) clients(chunk []Record) error {
	return load(r, chunk, func(rec Record, p **problem) (booking.ClientRow, string) {
		name := r.field(rec, "name", true, p)
		phone := r.field(rec, "phone", true, p)
		tg := r.field(rec, "telegram", false, p)
		notes, _ := r.l.get(rec.Fields, "notes")
		return booking.ClientRow{Name: name, Phone: phone, Telegram: tg, Notes: notes,
			HasTelegram: r.l.has("telegram"), HasNotes: r.l.has("notes")}, phone
	}, r.svc.ImportClients)
}

func (r *run) bookings(chunk []Record) error {
	loc := r.opt.Salon.Location()
	return load(r, chunk, func(rec Record, p **problem) (booking.BookingRow, string) {
		master := r.field(rec, "master", true, p)
		service := r.field(rec, "service", true, p)
		ds := r.field(rec, "date", true, p)
		start := r.field(rec, "start", true, p)
		phone := r.field(rec, "client_phone", true, p)
		name := r.field(rec, "client_name", false, p)
		st := r.field(rec, "status", false, p)
		visit := r.field(rec, "visit", false, p)
		d := r.date(ds, "date", p)
		c := r.clock(start, "start", booking.ParseClock, p)
		at, err := d.AtClock(loc, c)
		if err != nil && r.fine(*p, "date", "start") { // (a time the clocks skip that day)
			r.bad(p, "start", start, i18n.Of(err).In(r.lang))
		}
		return booking.BookingRow{Master: master, Service: service, StartsAt: at, Phone: phone, Name: name,
			Status: r.status(st, p), Visit: strings.TrimSpace(visit)}, keyOf(master, ds, start)
	}, r.svc.ImportBookings)
}

// Values as people write them.

func (r *run) minutes(s, key string, p **problem) int {
	if s == "" {
		return 0
	}
	n, err := parseMinutes(s)
	if err != nil {
		r.bad(p, key, s, r.tr("not a number of minutes like 45, 45 min or 1:30"))
	}
	return n // (out of range, -10 too: the core says which range)
}

// minutesRE is a number of minutes with its unit, as people write it
// in a cell: "45 min", "45 mins", "45 minutes", "45 мин".
var minutesRE = regexp.MustCompile(`^(-?\d+)\s*(?:m|min|mins|minute|minutes|мин|мин\.|минут|минуты)?$`)

// parseMinutes reads minutes: "45", "45 mins", or hours and minutes as a
// spreadsheet's duration cell writes them ("1:30", "1:30:00").
func parseMinutes(s string) (int, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if m := minutesRE.FindStringSubmatch(s); m != nil {
		return strconv.Atoi(m[1])
	}
	if h, rest, ok := strings.Cut(s, ":"); ok {
		rest = strings.TrimSuffix(rest, ":00")
		hours, err1 := strconv.Atoi(h)
		mins, err2 := strconv.Atoi(rest)
		if err1 == nil && err2 == nil && len(rest) == 2 && hours >= 0 && mins >= 0 && mins < 60 {
			return hours*60 + mins, nil
		}
	}
	return 0, fmt.Errorf("%q is not a number of minutes", s)
}

func (r *run) money(s, key string, p **problem) booking.Money {
	if s == "" {
		return 0
	}
	m, err := booking.ParseMoneyIn(s, r.opt.Salon.Currency)
	if err == nil {
		return m
	}
	if _, anyCurrency := booking.ParseMoney(s); anyCurrency == nil {
		r.bad(p, key, s, i18n.Of(err).In(r.lang)) // an amount of another currency
	} else {
		r.bad(p, key, s, r.tr("not an amount like 1500 or 1500.50"))
	}
	return 0
}

func (r *run) date(s, key string, p **problem) booking.Date {
	if s == "" {
		return booking.Date{}
	}
	d, err := ParseDateIn(s, r.opt.Salon.Country)
	// (The examples a salon's people write: dotted in Russian.)
	switch {
	case err == nil:
	case monthFirst[r.opt.Salon.Country]:
		r.bad(p, key, s, r.tr("not a date like 2026-03-08, 03/08/2026 (month first) or Mar 8, 2026"))
	case r.opt.Salon.Locale != "ru":
		r.bad(p, key, s, r.tr("not a date like 2026-03-08, 08/03/2026 (day first) or 8 Mar 2026"))
	default:
		r.bad(p, key, s, r.tr("not a date like 2026-03-08, 08.03.2026 or 08/03/2026"))
	}
	return d
}

func (r *run) clock(s, key string, parse func(string) (booking.Clock, error), p **problem) booking.Clock {
	if s == "" {
		r.bad(p, key, s, r.tr("required"))
		return 0
	}
	s = noSeconds(s)
	c, err := parse(s)
	if h, ok := parse12(s); err != nil && ok {
		// 9:30 am, 6 PM: as spreadsheets in English write them (an end
		// at 12 am is the day's end).
		c, err = h, nil
		if h == 0 && key != "start" && key != "break_start" {
			c = 24 * 60
		}
	}
	switch {
	case err != nil && key == "start":
		r.bad(p, key, s, r.tr("not a time like 9:30 or 18:00"))
	case err != nil:
		r.bad(p, key, s, r.tr("not a time like 9:30 or 18:00 (26:00 for 2 am the next day)"))
	}
	return c
}

func (r *run) status(s string, p **problem) booking.Status {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "confirmed", "подтверждена", "подтверждено":
		return booking.StatusConfirmed
	case "completed", "done", "состоялась", "завершена", "выполнена":
		return booking.StatusCompleted
	case "no_show", "no-show", "noshow", "неявка", "не пришёл", "не пришел":
		return booking.StatusNoShow
	}
	r.bad(p, "status", s, r.tr("confirmed, completed or no_show"))
	return ""
}

// monthFirst are the countries whose people write a date with slashes
// month first (12/14/2026); the rest write it day first (14/12/2026).
var monthFirst = map[string]bool{"US": true, "PR": true, "GU": true, "VI": true, "AS": true, "MP": true, "UM": true}

// ParseDateIn is ParseDate, and a date written with slashes as people of
// country write it: day first (14/12/2026), or month first in the United
// States (12/14/2026).
func ParseDateIn(s, country string) (booking.Date, error) {
	if d, err := ParseDate(s); err == nil {
		return d, nil
	}
	layout := "2/1/2006"
	if monthFirst[country] {
		layout = "1/2/2006"
	}
	t, err := time.Parse(layout, strings.TrimSpace(s))
	if err != nil {
		// Two digits of the year (19/12/26: this century).
		t, err = time.Parse(strings.ReplaceAll(layout, "2006", "06"), strings.TrimSpace(s))
	}
	if err != nil {
		return booking.Date{}, fmt.Errorf("%q is not a date like 2026-03-08, 08.03.2026 or %s", s, time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC).Format(strings.ReplaceAll(strings.ReplaceAll(layout, "2/", "02/"), "1/", "01/")))
	}
	return booking.DateOf(t), nil
}

// secondsRE is a time with zero seconds, as a spreadsheet writes a
// time cell: "09:00:00", "9:00:00 AM".
var secondsRE = regexp.MustCompile(`^(\s*\d{1,2}:\d{2}):00(\s*(?i:[ap]\.?\s*m\.?)?\s*)$`)

// noSeconds drops a time's zero seconds ("09:00:00" is 09:00).
func noSeconds(s string) string { return secondsRE.ReplaceAllString(s, "$1$2") }

// parse12 reads a time of a 12-hour clock: 9:30 am, 9am, 6:15 PM, 12 a.m.
func parse12(s string) (booking.Clock, bool) {
	t := strings.ToLower(strings.ReplaceAll(strings.Join(strings.Fields(s), ""), ".", ""))
	var pm bool
	switch {
	case strings.HasSuffix(t, "am"):
	case strings.HasSuffix(t, "pm"):
		pm = true
	default:
		return 0, false
	}
	t = t[:len(t)-2]
	hs, ms, hasMin := strings.Cut(t, ":")
	h, err := strconv.Atoi(hs)
	if err != nil || len(hs) > 2 || h < 1 || h > 12 {
		return 0, false
	}
	m := 0
	if hasMin {
		if m, err = strconv.Atoi(ms); err != nil || len(ms) != 2 || m < 0 || m > 59 {
			return 0, false
		}
	}
	h %= 12
	if pm {
		h += 12
	}
	return booking.Clock(h*60 + m), true
}

// ParseDate reads YYYY-MM-DD, DD.MM.YYYY (one-digit day and month too)
// and the forms of dateLayouts.
func ParseDate(s string) (booking.Date, error) {
	s = strings.TrimSpace(s)
	if d, err := booking.ParseDate(s); err == nil {
		return d, nil
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return booking.DateOf(t), nil
		}
	}
	return booking.Date{}, fmt.Errorf("%q is not a date like 2026-03-08 or 08.03.2026", s)
}

// dateLayouts are the dates read besides YYYY-MM-DD, in any country: the
// Russian 08.03.2026, the year first with slashes, and a month's English
// name as spreadsheets write it (15-Dec-2026, 15-Dec-26, 15 Dec 2026,
// Dec 15, 2026, December 15, 2026).
var dateLayouts = []string{"2.1.2006", "2006/1/2", "2-Jan-2006", "2-Jan-06", "2 Jan 2006", "Jan 2, 2006", "Jan 2 2006",
	"2 January 2006", "January 2, 2006", "January 2 2006"}
