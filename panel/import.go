package panel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/importer"
)

// The upload page: choose a kind and a file, see the dry run's report,
// then apply. The file is kept in a temporary file; the dry run and the
// real run go in the background (a large file does not hold a request or
// the server), and the page polls their progress.

// MaxUpload is the largest file the upload page takes.
const MaxUpload = 32 << 20

// importTTL is how long an upload waits to be applied.
const importTTL = time.Hour

// maxShown is the most report lines the page keeps (the counts are whole).
const maxShown = 200

// importJob is an uploaded file and what was done with it.
type importJob struct {
	id, path, name string
	kind           importer.Kind
	salonID        int64
	userID         int64
	size           int64
	created        time.Time

	mu      sync.Mutex
	phase   string // checking, checked, applying, applied, failed
	read    int64
	rows    int
	summary *importer.Summary
	lines   []importer.Line
	err     string
}

type imports struct {
	mu   sync.Mutex
	jobs map[string]*importJob
}

func (h *Handler) job(c *fiber.Ctx) (*importJob, error) {
	h.imports.mu.Lock()
	defer h.imports.mu.Unlock()
	j, ok := h.imports.jobs[c.Params("job")]
	u := user(c)
	if !ok || j.salonID != u.SalonID || j.userID != u.ID {
		return nil, errNoPage
	}
	return j, nil
}

type importPage struct {
	Kinds  []importer.Kind
	Job    *importView
	Error  string
	Poll   string
	MaxMiB int
}

// importView is a job as the page shows it.
type importView struct {
	ID, Name, Kind, Phase string
	PhaseText             string
	Percent               int
	Rows                  int
	Summary               *importer.Summary
	Rejected, Changed     []importer.Line
	More                  bool
	Error                 string
	Done                  bool
}

func (h *Handler) importForm(c *fiber.Ctx) error {
	return h.render(c, "import", langOf(c).T("Import"), importPage{Kinds: importer.Kinds, MaxMiB: MaxUpload >> 20})
}

// upload keeps the file and starts its dry run.
func (h *Handler) upload(c *fiber.Ctx) error {
	u := user(c)
	l := langOf(c)
	page := importPage{Kinds: importer.Kinds, MaxMiB: MaxUpload >> 20}
	kind, err := importer.ParseKind(c.FormValue("kind"))
	if err != nil {
		page.Error = l.T("Choose what the file holds.")
		c.Status(fiber.StatusUnprocessableEntity)
		return h.render(c, "import", l.T("Import"), page)
	}
	fh, err := c.FormFile("file")
	if err != nil || fh.Size == 0 {
		page.Error = l.T("Choose a file.")
		c.Status(fiber.StatusUnprocessableEntity)
		return h.render(c, "import", l.T("Import"), page)
	}
	if fh.Size > MaxUpload {
		page.Error = l.T("The file is larger than %d MiB.", MaxUpload>>20)
		c.Status(fiber.StatusRequestEntityTooLarge)
		return h.render(c, "import", l.T("Import"), page)
	}
	src, err := fh.Open()
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	defer src.Close()
	f, err := os.CreateTemp("", "salon-import-*.csv")
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	if _, err := io.Copy(f, io.LimitReader(src, MaxUpload)); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("upload: %w", err)
	}
	f.Close()
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	j := &importJob{id: hex.EncodeToString(b), path: f.Name(), name: filepath.Base(strings.Clone(fh.Filename)), kind: kind,
		salonID: u.SalonID, userID: u.ID, size: fh.Size, created: time.Now(), phase: "checking"}
	h.imports.mu.Lock()
	h.sweepImports()
	h.imports.jobs[j.id] = j
	h.imports.mu.Unlock()
	go h.runImport(j, u, true)
	return c.Redirect("/panel/import/"+j.id, fiber.StatusSeeOther)
}

// sweepImports forgets uploads older than importTTL (the lock is held).
func (h *Handler) sweepImports() {
	for id, j := range h.imports.jobs {
		if time.Since(j.created) > importTTL {
			os.Remove(j.path)
			delete(h.imports.jobs, id)
		}
	}
}

// runImport runs the file's dry run or real run in the background, as an
// import of the file (audited as "import:" and the file name, with the
// user who applied it).
func (h *Handler) runImport(j *importJob, u *booking.User, dry bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	salon, err := h.svc.Salon(ctx, u.SalonID)
	var sum *importer.Summary
	if err == nil {
		var f *os.File
		if f, err = os.Open(j.path); err == nil {
			defer f.Close()
			j.mu.Lock()
			j.lines = nil
			j.mu.Unlock()
			sum, err = importer.Import(ctx, h.svc, f, importer.Options{
				Kind: j.kind, Salon: salon, File: j.name + " (" + u.Email + ")", DryRun: dry, Lang: u.Lang, User: u,
				Report: func(l importer.Line) error {
					j.mu.Lock()
					defer j.mu.Unlock()
					if len(j.lines) < 4*maxShown {
						j.lines = append(j.lines, l)
					}
					return nil
				},
				Progress: func(n int64, rows int) {
					j.mu.Lock()
					j.read, j.rows = n, rows
					j.mu.Unlock()
				},
			})
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case errors.Is(err, booking.ErrForbidden):
		j.phase, j.err = "failed", "only the salon's owner may import "+string(j.kind)
	case err != nil:
		j.phase, j.err = "failed", err.Error()
		if !strings.Contains(err.Error(), "header") && !strings.Contains(err.Error(), "empty") {
			h.log.Error("panel: import failed", "err", err, "file", j.name)
			j.err = "internal error"
		}
	case dry:
		j.phase, j.summary = "checked", sum
	default:
		j.phase, j.summary = "applied", sum
		os.Remove(j.path)
	}
}

func (h *Handler) importStatus(c *fiber.Ctx) error {
	j, err := h.job(c)
	if err != nil {
		return err
	}
	v := j.view()
	v.PhaseText = langOf(c).T(phaseTexts[v.Phase])
	page := importPage{Kinds: importer.Kinds, Job: v, MaxMiB: MaxUpload >> 20}
	if !v.Done {
		page.Poll = "/panel/import/" + j.id
	}
	if c.Get("HX-Request") != "" {
		return h.fragment(c, "import", "job", page)
	}
	return h.render(c, "import", langOf(c).T("Import"), page)
}

var phaseTexts = map[string]string{
	"checking": "Checking; nothing is written yet.", "checked": "Checked: this is what the import will do.",
	"applying": "Importing.", "applied": "Imported.", "failed": "The file could not be read.",
}

func (j *importJob) view() *importView {
	j.mu.Lock()
	defer j.mu.Unlock()
	v := &importView{ID: j.id, Name: j.name, Kind: string(j.kind), Phase: j.phase, Rows: j.rows, Summary: j.summary, Error: j.err,
		Done: j.phase == "checked" || j.phase == "applied" || j.phase == "failed"}
	if j.size > 0 {
		v.Percent = int(min(100, j.read*100/j.size))
	}
	if v.Done && j.phase != "failed" {
		v.Percent = 100
	}
	for _, l := range j.lines {
		switch {
		case l.Outcome == booking.Rejected && len(v.Rejected) < maxShown:
			v.Rejected = append(v.Rejected, l)
		case l.Outcome != booking.Rejected && len(v.Changed) < 20:
			v.Changed = append(v.Changed, l)
		default:
			v.More = true
		}
	}
	return v
}

// applyImport runs the checked file for real.
func (h *Handler) applyImport(c *fiber.Ctx) error {
	j, err := h.job(c)
	if err != nil {
		return err
	}
	j.mu.Lock()
	if j.phase != "checked" {
		j.mu.Unlock()
		return fmt.Errorf("the file is %s: %w", j.phase, booking.ErrConflict)
	}
	j.phase, j.read, j.rows = "applying", 0, 0
	j.mu.Unlock()
	go h.runImport(j, user(c), false)
	return c.Redirect("/panel/import/"+j.id, fiber.StatusSeeOther)
}
