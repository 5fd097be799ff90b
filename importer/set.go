package importer

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"salon/booking"
	"salon/i18n"
)

// File is one file of a set to import: its name and content, and its kind
// (when zero, read from its name: services.csv, услуги.csv, ...).
type File struct {
	Name string
	Kind Kind
	R    io.Reader
}

// Result is one file's outcome in a set: its summary and its lines, or why
// it could not be read.
type Result struct {
	File    string
	Kind    Kind
	Summary *Summary
	Lines   []Line
	Err     error
}

// MaxSetFiles is the most files one set holds.
const MaxSetFiles = 10

// kindNames are the words a file's name starts with, for each kind.
var kindNames = map[Kind][]string{
	Services: {"services", "service", "услуги", "услуга"},
	Masters:  {"masters", "master", "мастера", "мастер", "staff"},
	Schedule: {"schedule", "shifts", "расписание", "график", "смены"},
	Clients:  {"clients", "client", "клиенты", "клиент"},
	Bookings: {"bookings", "booking", "записи", "запись"},
}

// KindOfName reads a kind from a file's name (services.csv,
// 2-мастера.csv, salon-bookings.csv).
func KindOfName(name string) (Kind, bool) {
	base := strings.ToLower(strings.TrimSuffix(path.Base(name), path.Ext(name)))
	for _, k := range Kinds {
		for _, w := range kindNames[k] {
			if strings.Contains(base, w) {
				return k, true
			}
		}
	}
	return "", false
}

// ImportSet imports several files in the order a salon is built (services,
// masters, schedule, clients, bookings), whatever order they come in. With
// opt.DryRun it is one rehearsal: each file sees what the files before it
// would have written (the masters their services), and nothing is
// written. A file whose kind cannot be told, or two of one kind, refuse
// the set before anything is read.
func ImportSet(ctx context.Context, svc *booking.Service, files []File, opt Options) ([]Result, error) {
	if len(files) == 0 || len(files) > MaxSetFiles {
		return nil, invalidSet("a set is 1 to %d files, not %d", MaxSetFiles, len(files))
	}
	seen := map[Kind]string{}
	for i, f := range files {
		if f.Kind == "" {
			k, ok := KindOfName(f.Name)
			if !ok {
				return nil, invalidSet("%s: cannot tell what it holds; name it services, masters, schedule, clients or bookings (.csv)", f.Name)
			}
			files[i].Kind = k
		}
		if other, ok := seen[files[i].Kind]; ok {
			return nil, invalidSet("%s and %s both hold %s", other, f.Name, string(files[i].Kind))
		}
		seen[files[i].Kind] = f.Name
	}
	slices.SortStableFunc(files, func(a, b File) int { return slices.Index(Kinds, a.Kind) - slices.Index(Kinds, b.Kind) })
	out := make([]Result, 0, len(files))
	each := func(ctx context.Context) error {
		for _, f := range files {
			res := Result{File: f.Name, Kind: f.Kind}
			o := opt
			o.Kind, o.File = f.Kind, f.Name
			report := opt.Report
			o.Report = func(l Line) error {
				res.Lines = append(res.Lines, l)
				if report != nil {
					return report(l)
				}
				return nil
			}
			res.Summary, res.Err = Import(ctx, svc, f.R, o)
			if res.Err != nil && !isFileProblem(res.Err) {
				return res.Err
			}
			out = append(out, res)
		}
		return nil
	}
	if !opt.DryRun {
		return out, each(ctx)
	}
	caller := booking.ByImport(opt.Salon.ID, "a set of files")
	if opt.User != nil {
		caller = booking.ByUserImport(*opt.User, "a set of files")
	}
	return out, svc.Rehearse(booking.As(ctx, caller), each)
}

// isFileProblem reports an error that is the file's (no header, a line
// that is not one): the set goes on with the next file.
func isFileProblem(err error) bool {
	var fe *FileError
	return errors.As(err, &fe) || errors.Is(err, booking.ErrInvalid)
}

// ZipFiles opens the CSV files of a zip archive as a set (at most
// MaxSetFiles, each at most limit bytes uncompressed).
func ZipFiles(r io.ReaderAt, size, limit int64) ([]File, error) {
	z, err := zip.NewReader(r, size)
	if err != nil {
		return nil, invalidSet("not a zip archive")
	}
	var out []File
	for _, f := range z.File {
		if f.FileInfo().IsDir() || !strings.EqualFold(path.Ext(f.Name), ".csv") && !strings.EqualFold(path.Ext(f.Name), ".txt") {
			continue
		}
		if len(out) == MaxSetFiles {
			return nil, invalidSet("more than %d files in the archive", MaxSetFiles)
		}
		if f.UncompressedSize64 > uint64(limit) {
			return nil, invalidSet("%s: larger than %d MiB", f.Name, limit>>20)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, limit+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if int64(len(b)) > limit {
			return nil, invalidSet("%s: larger than %d MiB", f.Name, limit>>20)
		}
		out = append(out, File{Name: path.Base(f.Name), R: bytes.NewReader(b)})
	}
	if len(out) == 0 {
		return nil, invalidSet("no CSV files in the archive")
	}
	return out, nil
}

// invalidSet refuses a set: why, in words i18n translates, and
// booking.ErrInvalid.
func invalidSet(why string, args ...any) error {
	return fmt.Errorf("%w: %w", i18n.New(why, args...), booking.ErrInvalid)
}
