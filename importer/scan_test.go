package importer

import (
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
	_, err := NewReader(io.MultiReader(strings.NewReader("name,phone\nAnna,+79990000001\n"), endless(0)))
	if err != nil {
		t.Fatalf("the header: %v", err)
	}
	r, _ := NewReader(io.MultiReader(strings.NewReader("name,phone\nAnna,+79990000001\n"), endless('x')))
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
	if _, err := NewReader(endless(0)); !errors.As(err, &fe) || fe.Line != 1 {
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
	r, err := NewReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || le.Column != 1 || !strings.Contains(le.Reason, "quote") {
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
	r, _ = NewReader(strings.NewReader("name,phone\nAnna,1\n\"Boris,2"))
	_, _ = r.Next()
	if _, err := r.Next(); !errors.As(err, &le) || le.Line != 3 {
		t.Errorf("an open quote at the end: %v", err)
	}
}

// TestALongCellRejectsItsRow: a cell over MaxCell rejects its row (the
// next rows are read), and what is kept of it is bounded.
func TestALongCellRejectsItsRow(t *testing.T) {
	data := "name,phone\n" + strings.Repeat("y", 20<<20) + ",1\n\"" + strings.Repeat("z", 10<<10) + "\",2\nBoris,3\n"
	r, err := NewReader(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var le *LineError
	if _, err := r.Next(); !errors.As(err, &le) || le.Line != 2 || le.Column != 1 {
		t.Fatalf("a 20 MB cell: %v", err)
	}
	if _, err := r.Next(); !errors.As(err, &le) || le.Line != 3 {
		t.Fatalf("a quoted 10 KiB cell: %v", err)
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
