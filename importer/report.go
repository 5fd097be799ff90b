package importer

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReportWriter writes report lines to a file as they come: CSV or JSON
// (an object with the summary and an array of lines), so a report of a
// million rows needs no memory.
type ReportWriter struct {
	w     io.Writer
	json  bool
	csv   *cellWriter // (a report is opened in a spreadsheet: its cells are never formulas)
	lines int
}

// NewReportWriter writes a report to w, as JSON when asJSON, else CSV.
func NewReportWriter(w io.Writer, asJSON bool) (*ReportWriter, error) {
	r := &ReportWriter{w: w, json: asJSON}
	if asJSON {
		if _, err := io.WriteString(w, "{\"lines\": [\n"); err != nil {
			return nil, err
		}
		return r, nil
	}
	r.csv = &cellWriter{csv.NewWriter(w)}
	if err := r.csv.Write([]string{"line", "outcome", "key", "column", "value", "reason", "alternatives"}); err != nil {
		return nil, err
	}
	return r, nil
}

// Add writes one line.
func (r *ReportWriter) Add(l Line) error {
	r.lines++
	if r.json {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		sep := ",\n"
		if r.lines == 1 {
			sep = ""
		}
		_, err = fmt.Fprintf(r.w, "%s  %s", sep, b)
		return err
	}
	return r.csv.Write([]string{strconv.Itoa(l.Line), string(l.Outcome), l.Key, l.Column, l.Value, l.Reason,
		strings.Join(l.Alternatives, "; ")})
}

// Close ends the report with the summary (JSON) and flushes it.
func (r *ReportWriter) Close(sum *Summary) error {
	if r.json {
		b, err := json.Marshal(sum)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(r.w, "\n], \"summary\": %s}\n", b)
		return err
	}
	r.csv.Flush()
	return r.csv.Error()
}
