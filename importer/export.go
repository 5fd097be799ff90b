package importer

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"salon/booking"
)

// Export writes a kind of the salon's data in the import format, the
// header in lang (ru or en), rows in a stable order, so that exporting,
// importing into another salon and exporting again gives the same bytes.
// In Russian it is what a Russian spreadsheet opens as it is: UTF-8 with a
// BOM, semicolon-separated; in English, UTF-8 with a BOM (without one,
// Excel on Windows reads "Zoë" as "ZoÃ«") and commas. A cell that a
// spreadsheet would take for a formula (one that starts with =, +, -, @,
// a tab or a carriage return: a phone's "+" too) is written with a leading
// apostrophe, as OWASP advises, so it opens as the text it is; the import
// reads it back without. Cancelled bookings, holds awaiting their deposit
// and inactive services are left out; a master's own duration and price for a service are not in the
// format.
func Export(ctx context.Context, svc *booking.Service, w io.Writer, kind Kind, salon *booking.Salon, lang string) error {
	if lang == "" {
		lang = salon.Locale
	}
	cw, err := newSheet(w, kind, lang)
	if err != nil {
		return err
	}
	loc := salon.Location()
	hm := func(t interface{ Format(string) string }) string { return t.Format("15:04") }
	// Amounts as the file's spreadsheet reads numbers: 1500,50 in Russian
	// (a Russian Excel takes 1500.50 for text), 1500.50 in English.
	amount := func(m booking.Money) string {
		if lang == "ru" {
			return strings.Replace(m.String(), ".", ",", 1)
		}
		return m.String()
	}
	switch kind {
	case Services:
		var list []booking.SalonService
		if list, err = svc.AllServices(ctx, salon.ID); err != nil {
			return err
		}
		slices.SortFunc(list, func(a, b booking.SalonService) int { return strings.Compare(a.Name, b.Name) })
		for _, s := range list {
			if !s.Active {
				continue
			}
			if err = cw.Write([]string{s.Name, strconv.Itoa(s.DurationMin), amount(s.Price), amount(s.Deposit),
				strconv.Itoa(s.BufferMin), strconv.Itoa(s.ProcessingMin), strconv.Itoa(s.FinishMin)}); err != nil {
				return err
			}
		}
	case Masters:
		svcs, err := svc.AllServices(ctx, salon.ID)
		if err != nil {
			return err
		}
		names := map[int64]string{}
		for _, s := range svcs {
			names[s.ID] = s.Name
		}
		ms, err := svc.AllMasters(ctx, salon.ID)
		if err != nil {
			return err
		}
		slices.SortFunc(ms, func(a, b booking.Master) int { return strings.Compare(a.Name, b.Name) })
		for _, m := range ms {
			var list []string
			for _, id := range m.ServiceIDs {
				list = append(list, names[id])
			}
			slices.Sort(list)
			if len(list) == 0 {
				list = []string{noServices} // (an empty cell would make a new master do every service)
			}
			if err := cw.Write([]string{m.Name, m.Phone, strings.Join(list, "|")}); err != nil {
				return err
			}
		}
	case Schedule:
		err = svc.EachShift(ctx, salon.ID, func(master string, sh booking.Shift) error {
			row := []string{master, sh.Date.String(), hm(sh.Start.In(loc)), endClock(sh.EndClock(loc)), "", ""}
			if !sh.BreakStart.IsZero() {
				row[4], row[5] = hm(sh.BreakStart.In(loc)), hm(sh.BreakEnd.In(loc))
			}
			return cw.Write(row)
		})
	case Clients:
		err = svc.EachClient(ctx, salon.ID, func(c booking.Client, tg string) error {
			return cw.Write([]string{c.Name, c.Phone, tg, c.Notes})
		})
	case Bookings:
		// A visit of several services is numbered in the file's order
		// (1, 2, ...), so that the same calendar exports the same file
		// whatever its ids; a single service has none.
		visits := map[int64]int{}
		err = svc.EachBooking(ctx, salon.ID, func(l booking.Listing) error {
			if l.Status == booking.StatusPending {
				return nil // a hold awaiting its deposit: not a booking yet (nor one the import takes)
			}
			t := l.StartsAt.In(loc)
			visit := ""
			if l.InVisit {
				if visits[l.VisitID] == 0 {
					visits[l.VisitID] = len(visits) + 1
				}
				visit = strconv.Itoa(visits[l.VisitID])
			}
			return cw.Write([]string{l.MasterName, l.ServiceName, t.Format("2006-01-02"), t.Format("15:04"), l.ClientPhone,
				l.ClientName, string(l.Status), visit})
		})
	}
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// noServices is a masters file's services cell of a master who does no
// service (the import reads "-" too).
const noServices = "—"

// endClock writes a shift's end as the import reads it: 24:00 for the
// midnight that ends its day, 26:00 for 02:00 of the next (not +02:00,
// which a spreadsheet would take for a formula).
func endClock(c booking.Clock) string { return fmt.Sprintf("%02d:%02d", int(c)/60, int(c)%60) }

// newSheet starts a file of the kind in lang, its header written after a
// BOM (Excel reads UTF-8 only with one); for ru semicolons, as a Russian
// Excel opens and saves a CSV.
func newSheet(w io.Writer, kind Kind, lang string) (*cellWriter, error) {
	if _, err := io.WriteString(w, "\ufeff"); err != nil {
		return nil, err
	}
	cw := &cellWriter{csv.NewWriter(w)}
	if lang == "ru" {
		cw.Comma = ';'
	}
	return cw, cw.Write(exportHeader(kind, lang))
}

// cellWriter writes rows whose cells are neutralized (see Export).
type cellWriter struct{ *csv.Writer }

func (w *cellWriter) Write(row []string) error {
	out := make([]string, len(row))
	for i, c := range row {
		out[i] = Neutralize(c)
	}
	return w.Writer.Write(out)
}

// Neutralize makes a cell that a spreadsheet would run as a formula (it
// starts with =, +, -, @, a tab or a carriage return) text, with a leading
// apostrophe; the import reads it back without (see Reader.Next).
func Neutralize(cell string) string {
	if cell != "" && strings.ContainsRune(formulaStarts, rune(cell[0])) {
		return "'" + cell
	}
	return cell
}

// formulaStarts are the first characters that make a spreadsheet read a
// cell as a formula.
const formulaStarts = "=+-@\t\r"

// unneutralize is Neutralize undone.
func unneutralize(cell string) string {
	if len(cell) >= 2 && cell[0] == '\'' && strings.ContainsRune(formulaStarts, rune(cell[1])) {
		return cell[1:]
	}
	return cell
}
