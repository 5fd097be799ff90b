package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"salon/booking"
	"salon/importer"
)

// cmdImport is `salon import KIND FILE --salon SLUG [--dry-run] [--report FILE]`.
// Exit 0: every row accepted; 1: some rows rejected; 2: usage, or the file
// or database failed.
func cmdImport(ctx context.Context, args []string, getenv env, stdout, stderr io.Writer) error {
	const use = "usage: salon import services|masters|schedule|clients|bookings FILE --salon SLUG [--dry-run] [--report FILE.csv|FILE.json]" +
		" (or: salon import all FILE.csv...|FILE.zip --salon SLUG [--dry-run])"
	fs := newFlagSet("import")
	slug := fs.String("salon", "", "salon slug")
	dry := fs.Bool("dry-run", false, "write nothing; report what a real run would do")
	reportPath := fs.String("report", "", "write a report of rejected and changed rows (CSV, or JSON by extension)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) >= 2 && pos[0] == "all" && *slug != "" {
		return importSet(ctx, getenv, stdout, pos[1:], *slug, *dry)
	}
	if len(pos) != 2 || *slug == "" {
		return usagef("%s", use)
	}
	kind, err := importer.ParseKind(pos[0])
	if err != nil {
		return usagef("%v", err)
	}
	f, err := os.Open(pos[1])
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer f.Close()
	// A signal stops the import at once, even while it waits for input (a
	// pipe, a terminal): closing the file ends the read in progress. The
	// chunk being written rolls back; those before it stay.
	stop := context.AfterFunc(ctx, func() { _ = f.Close() })
	defer stop()
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	var report *importer.ReportWriter
	if *reportPath != "" {
		rf, err := os.Create(*reportPath)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		defer rf.Close()
		if report, err = importer.NewReportWriter(rf, strings.EqualFold(filepath.Ext(*reportPath), ".json")); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	svc, s, closeDB, err := openSalon(ctx, getenv, *slug)
	if err != nil {
		return err
	}
	defer closeDB()
	opt := importer.Options{Kind: kind, Salon: s, File: filepath.Base(pos[1]), DryRun: *dry}
	// The first rejected rows are printed whatever the report: what to fix
	// is seen without another run.
	var first firstRejected
	opt.Report = func(l importer.Line) error {
		first.add(l)
		if report != nil {
			return report.Add(l)
		}
		return nil
	}
	// A progress bar when a person watches (stderr is a terminal): rows,
	// bytes of the file, rate and time left.
	if out, ok := stderr.(*os.File); ok && term.IsTerminal(int(out.Fd())) {
		bar := progressbar.NewOptions64(size, progressbar.OptionSetWriter(out), progressbar.OptionShowBytes(true),
			progressbar.OptionSetDescription("importing "+string(kind)), progressbar.OptionShowCount(),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		opt.Progress = func(n int64, rows int) {
			bar.Describe(fmt.Sprintf("importing %s: %d rows", kind, rows))
			_ = bar.Set64(n)
		}
		defer func() { _ = bar.Finish() }()
	}
	sum, err := importer.Import(ctx, svc, f, opt)
	var fe *importer.FileError
	if errors.As(err, &fe) && sum != nil {
		// Stopped at a line that is not a row: what came before it is
		// reported, then the line.
		printSummary(stdout, kind, sum, *dry)
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("import %s: stopped by a signal; the rows before the chunk in progress were imported, none of that chunk", pos[1])
	case err != nil:
		return fmt.Errorf("import %s: %w", pos[1], err)
	}
	if report != nil {
		if err := report.Close(sum); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	printSummary(stdout, kind, sum, *dry)
	printRejected(stdout, first.lines, sum.Rejected)
	if sum.Rejected > 0 {
		return rejectedRows{n: sum.Rejected, report: *reportPath}
	}
	return nil
}

// shownRejected is how many rejected rows an import prints.
const shownRejected = 10

// firstRejected keeps the report lines of the first shownRejected
// rejected rows (a row with several bad columns has a line for each).
type firstRejected struct {
	lines []importer.Line
	rows  int
}

func (f *firstRejected) add(l importer.Line) {
	if l.Outcome != booking.Rejected {
		return
	}
	if n := len(f.lines); n == 0 || f.lines[n-1].Line != l.Line {
		if f.rows == shownRejected {
			return
		}
		f.rows++
	}
	f.lines = append(f.lines, l)
}

// printRejected prints the first rejected rows: line, column, value and
// why, as a person fixes them in the file.
func printRejected(w io.Writer, lines []importer.Line, total int) {
	for _, l := range lines {
		where := fmt.Sprintf("line %d", l.Line)
		if l.Column != "" {
			where += ", " + l.Column
		}
		if l.Value != "" {
			where += fmt.Sprintf(" %q", l.Value)
		}
		fmt.Fprintf(w, "  %s: %s\n", where, l.Reason)
		if len(l.Alternatives) > 0 {
			fmt.Fprintf(w, "    free: %s\n", strings.Join(l.Alternatives, "; "))
		}
	}
	rows := 0
	for i, l := range lines {
		if i == 0 || lines[i-1].Line != l.Line {
			rows++
		}
	}
	if total > rows {
		fmt.Fprintf(w, "  … and %d more rejected rows\n", total-rows)
	}
}

// printSummary prints an import's counts and its unknown columns.
func printSummary(w io.Writer, kind importer.Kind, sum *importer.Summary, dry bool) {
	mode := ""
	if dry {
		mode = " (dry run: nothing written)"
	}
	fmt.Fprintf(w, "%s: read %d, created %d, updated %d, unchanged %d, rejected %d%s\n",
		kind, sum.Read, sum.Created, sum.Updated, sum.Unchanged, sum.Rejected, mode)
	if len(sum.Unknown) > 0 {
		more := ""
		if sum.MoreUnknown > 0 {
			more = fmt.Sprintf(" and %d more", sum.MoreUnknown)
		}
		fmt.Fprintf(w, "unknown columns, ignored: %s%s\n", strings.Join(sum.Unknown, ", "), more)
	}
}

// rejectedRows ends an import that rejected rows: exit 1.
type rejectedRows struct {
	n      int
	report string
}

func (e rejectedRows) Error() string {
	rows := fmt.Sprintf("%d rows", e.n)
	if e.n == 1 {
		rows = "1 row"
	}
	if e.report != "" {
		return fmt.Sprintf("%s rejected (see %s)", rows, e.report)
	}
	if e.n <= shownRejected {
		return rows + " rejected (listed above)"
	}
	return fmt.Sprintf("%s rejected (run with --report FILE for every one)", rows)
}

// cmdExport is `salon export KIND --salon SLUG [--out FILE] [--lang ru|en]`.
func cmdExport(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	fs := newFlagSet("export")
	slug := fs.String("salon", "", "salon slug")
	out := fs.String("out", "", "file to write (default: standard output)")
	lang := fs.String("lang", "", "language of the header: ru or en (default: the salon's)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *slug == "" || (*lang != "" && *lang != "ru" && *lang != "en") {
		return usagef("usage: salon export services|masters|schedule|clients|bookings --salon SLUG [--out FILE] [--lang ru|en]")
	}
	kind, err := importer.ParseKind(pos[0])
	if err != nil {
		return usagef("%v", err)
	}
	svc, s, closeDB, err := openSalon(ctx, getenv, *slug)
	if err != nil {
		return err
	}
	defer closeDB()
	w, closeOut, err := output(*out, stdout)
	if err != nil {
		return err
	}
	defer closeOut()
	return importer.Export(ctx, svc, w, kind, s, *lang)
}

// output is the file named (created), or stdout when none is.
func output(name string, stdout io.Writer) (io.Writer, func(), error) {
	if name == "" {
		return stdout, func() {}, nil
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, nil, fmt.Errorf("export: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// parseInterspersed parses flags that may come before, between or after
// the positional arguments, and returns those.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil, &helpAsked{fs}
		} else if err != nil {
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// importSet is `salon import all FILE... --salon SLUG [--dry-run]`: a
// salon's files (or one .zip of them), each named by what it holds
// (services.csv, мастера.csv, ...), imported in the order a salon is built;
// with --dry-run, checked as one rehearsal in which each file sees what the
// files before it would write.
func importSet(ctx context.Context, getenv env, stdout io.Writer, paths []string, slug string, dry bool) error {
	var files []importer.File
	for _, p := range paths {
		if strings.EqualFold(filepath.Ext(p), ".zip") {
			f, err := os.Open(p)
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			zf, err := importer.ZipFiles(f, st.Size(), booking.MaxUploadSize)
			if err != nil {
				return fmt.Errorf("import %s: %w", p, err)
			}
			files = append(files, zf...)
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		files = append(files, importer.File{Name: filepath.Base(p), R: f})
	}
	svc, s, closeDB, err := openSalon(ctx, getenv, slug)
	if err != nil {
		return err
	}
	defer closeDB()
	res, err := importer.ImportSet(ctx, svc, files, importer.Options{Salon: s, DryRun: dry})
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	rejected := 0
	for _, r := range res {
		fmt.Fprintf(stdout, "%s: ", r.File)
		if r.Err != nil {
			fmt.Fprintf(stdout, "not read: %s\n", oneLine(r.Err))
			rejected++
			continue
		}
		printSummary(stdout, r.Kind, r.Summary, dry)
		var first firstRejected
		for _, l := range r.Lines {
			first.add(l)
		}
		printRejected(stdout, first.lines, r.Summary.Rejected)
		rejected += r.Summary.Rejected
	}
	if rejected > 0 {
		return rejectedRows{n: rejected}
	}
	return nil
}
