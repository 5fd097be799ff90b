package panel

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"salon/booking"
	"salon/i18n"
	"salon/importer"
	"salon/internal/bodylimit"
)

// The upload page: choose a kind and a file, see the dry run's report,
// then apply. The file is kept in the database (uploads); the dry run and
// the real run go in the background (a large file does not hold a request
// or the server), record their progress and report there, and the page,
// on any replica, polls them.

// MaxUpload is the largest file the upload page takes.
const MaxUpload = booking.MaxUploadSize

// UploadPath is where the upload page posts its file. Its body is
// streamed: checked as it comes (the CSRF token and the kind before the
// file) and stored in chunks, never held whole.
const UploadPath = "/panel/import"

// MaxUploadBody is the largest upload request: the file and the form's
// few small fields.
const MaxUploadBody = MaxUpload + 64<<10

// maxShown is the most rejected rows the page shows (the counts are whole).
const maxShown = 200

type importPage struct {
	Kinds  []importer.Kind
	Job    *importView
	Error  string
	Poll   string
	MaxMiB int
	Docs   []kindDoc // each kind's columns, template and export
}

// kindDoc is a kind as the import page explains it.
type kindDoc struct {
	Kind    importer.Kind
	Columns []importer.ColumnDoc
	Export  bool // the user may export it (owners)
}

// docsFor lists the kinds the user may import, with their columns.
func docsFor(u *booking.User, lang string) []kindDoc {
	var out []kindDoc
	for _, k := range kindsFor(u) {
		out = append(out, kindDoc{Kind: k, Columns: importer.Columns(k, lang), Export: u.Role == booking.RoleOwner})
	}
	return out
}

// importTemplate downloads a kind's template: its header and example
// rows, in the page's language (for ru, as a Russian Excel opens it).
func (h *Handler) importTemplate(c *fiber.Ctx) error {
	kind, err := importer.ParseKind(c.Params("kind"))
	if err != nil {
		return errNoPage
	}
	l := langOf(c)
	var b bytes.Buffer
	if err := importer.Template(&b, kind, l.Code); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s-template.csv"`, kind))
	return c.Send(b.Bytes())
}

// export downloads a kind of the salon's data in the import's format
// (owners: the core refuses others).
func (h *Handler) export(c *fiber.Ctx) error {
	kind, err := importer.ParseKind(c.Params("kind"))
	if err != nil {
		return errNoPage
	}
	var b bytes.Buffer
	if err := importer.Export(c.UserContext(), h.svc, &b, kind, salonOf(c), langOf(c).Code); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s-%s.csv"`, salonOf(c).Slug, kind))
	return c.Send(b.Bytes())
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
	return h.render(c, "import", langOf(c).T("Import"), importPage{Kinds: kindsFor(user(c)), MaxMiB: MaxUpload >> 20,
		Docs: docsFor(user(c), langOf(c).Code)})
}

// kindsFor is what the user may import: an admin the schedule, an owner
// everything (the core decides: booking.UploadRole).
func kindsFor(u *booking.User) []importer.Kind {
	var out []importer.Kind
	for _, k := range importer.Kinds {
		if u.Role == booking.RoleOwner || booking.UploadRole(string(k)) == u.Role {
			out = append(out, k)
		}
	}
	return out
}

// upload keeps the file and starts its dry run. The form is read as it
// streams in: its CSRF token and kind (which come first, in the form's
// order) are checked before a byte of the file is read or kept.
func (h *Handler) upload(c *fiber.Ctx) error {
	u := user(c)
	l := langOf(c)
	page := importPage{Kinds: kindsFor(u), MaxMiB: MaxUpload >> 20}
	refuse := func(status int, msg string) error {
		page.Error = msg
		c.Status(status)
		return h.render(c, "import", l.T("Import"), page)
	}
	tooLarge := func() error {
		bodylimit.Drain(c) // the rest of the body is not kept
		return refuse(fiber.StatusRequestEntityTooLarge, l.T("The file is larger than %d MiB.", MaxUpload>>20))
	}
	boundary := string(c.Request().Header.MultipartFormBoundary())
	if boundary == "" {
		// Not a file upload: a small form at most.
		if err := bodylimit.Read(c, MaxForm); err != nil || !h.csrfValid(c, c.FormValue("csrf")) {
			return errCSRF
		}
		return refuse(fiber.StatusUnprocessableEntity, l.T("Choose a file."))
	}
	body, err := bodylimit.Stream(c, MaxUploadBody)
	switch {
	case errors.Is(err, bodylimit.ErrTooLarge):
		return tooLarge()
	case err != nil:
		return refuse(fiber.StatusUnprocessableEntity, l.T("Choose a file."))
	}
	mr := multipart.NewReader(body, boundary)
	var token, kindName string
	for {
		part, err := mr.NextPart()
		switch {
		case errors.Is(err, io.EOF):
			if !h.csrfValid(c, token) {
				return errCSRF
			}
			return refuse(fiber.StatusUnprocessableEntity, l.T("Choose a file."))
		case errors.Is(err, bodylimit.ErrTooLarge):
			return tooLarge()
		case err != nil:
			return refuse(fiber.StatusBadRequest, l.T("The request was not understood."))
		}
		switch part.FormName() {
		case "csrf":
			token = formField(part)
		case "kind":
			kindName = formField(part)
		case "file":
			if !h.csrfValid(c, token) {
				return errCSRF
			}
			kind, err := importer.ParseKind(kindName)
			if kindName == string(setKind) && u.Role == booking.RoleOwner {
				kind, err = setKind, nil
			}
			if err != nil {
				return refuse(fiber.StatusUnprocessableEntity, l.T("Choose what the file holds."))
			}
			name := filepath.Base(part.FileName())
			id, err := h.svc.SaveUpload(c.UserContext(), string(kind), name, part)
			var ve *booking.ValidationError
			switch {
			case errors.Is(err, bodylimit.ErrTooLarge), errors.As(err, &ve) && strings.HasPrefix(ve.Fields["file"].Key, "larger"):
				return tooLarge()
			case errors.As(err, &ve):
				return refuse(fiber.StatusUnprocessableEntity, l.T("Choose a file."))
			case err != nil:
				return err
			}
			go h.runImport(id, *u, kind, name, true)
			return c.Redirect("/panel/import/"+id, fiber.StatusSeeOther)
		}
	}
}

// setKind is an upload of several kinds at once: a zip of the salon's
// files, each named by what it holds (owners).
const setKind importer.Kind = "all"

// runSet checks (dry) or imports a zip of files as one set, in the order a
// salon is built: a dry run is one rehearsal, in which each file sees what
// the files before it would write. The set's summary adds its files' up;
// each line names its file.
func (h *Handler) runSet(ctx context.Context, id string, u booking.User, salon *booking.Salon, name string, dry bool) (*importer.Summary, []importer.Line, error) {
	file, err := h.svc.UploadFile(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(io.LimitReader(file, MaxUpload+1))
	if err != nil {
		return nil, nil, err
	}
	files, err := importer.ZipFiles(bytes.NewReader(b), int64(len(b)), MaxUpload)
	if err != nil {
		return nil, nil, err
	}
	res, err := importer.ImportSet(ctx, h.svc, files, importer.Options{Salon: salon, DryRun: dry, Lang: u.Lang, User: &u})
	if err != nil {
		return nil, nil, err
	}
	sum := &importer.Summary{DryRun: dry, Encoding: "zip"}
	var lines []importer.Line
	for _, r := range res {
		if r.Err != nil {
			return nil, nil, fmt.Errorf("%s: %w", r.File, r.Err)
		}
		sum.Read += r.Summary.Read
		sum.Created += r.Summary.Created
		sum.Updated += r.Summary.Updated
		sum.Unchanged += r.Summary.Unchanged
		sum.Rejected += r.Summary.Rejected
		for _, l := range r.Lines {
			if len(lines) < 4*maxShown {
				l.Key = r.File + ": " + l.Key
				lines = append(lines, l)
			}
		}
	}
	return sum, lines, nil
}

// formField reads a small field of a streamed form.
func formField(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 1<<10))
	return string(b)
}

// runImport runs the file's dry run or real run in the background, as an
// import of the file (audited as "import:" and the file name, with the
// user who applied it); its progress and report go to the database, where
// any replica reads them.
func (h *Handler) runImport(id string, u booking.User, kind importer.Kind, name string, dry bool) {
	ctx, cancel := context.WithTimeout(booking.As(context.Background(), booking.ByStaff(u)), 30*time.Minute)
	defer cancel()
	var lines []importer.Line
	var sum *importer.Summary
	salon, err := h.svc.Salon(ctx, u.SalonID)
	if err == nil && kind == setKind {
		sum, lines, err = h.runSet(ctx, id, u, salon, name, dry)
	} else if err == nil {
		var file io.Reader
		if file, err = h.svc.UploadFile(ctx, id); err == nil {
			sum, err = importer.Import(ctx, h.svc, file, importer.Options{
				Kind: kind, Salon: salon, File: name + " (" + u.Email + ")", DryRun: dry, Lang: u.Lang, User: &u,
				Report: func(l importer.Line) error {
					if len(lines) < 4*maxShown {
						lines = append(lines, l)
					}
					return nil
				},
				Progress: func(n int64, rows int) { _ = h.svc.UploadProgress(ctx, id, n, rows) }, // progress is advice
			})
		}
	}
	phase, failure := "applied", ""
	switch {
	case errors.Is(err, booking.ErrForbidden):
		phase, failure = "failed", "only the salon's owner may import "+string(kind)
	case errors.As(err, new(*importer.FileError)):
		phase, failure = "failed", err.Error() // in the user's language
	case kind == setKind && errors.Is(err, booking.ErrInvalid):
		phase, failure = "failed", i18n.Of(err).In(cmp.Or(u.Lang, salonLang(salon)))
	case err != nil:
		phase, failure = "failed", err.Error()
		if !strings.Contains(err.Error(), "header") && !strings.Contains(err.Error(), "empty") {
			h.log.Error("panel: import failed", "err", err, "file", name)
			failure = "internal error"
		}
	case dry:
		phase = "checked"
	}
	if err := h.svc.UploadDone(context.WithoutCancel(ctx), id, phase, sum, lines, failure); err != nil {
		h.log.Error("panel: import result", "err", err, "file", name)
	}
}

func (h *Handler) importStatus(c *fiber.Ctx) error {
	up, err := h.svc.GetUpload(c.UserContext(), c.Params("job"))
	if err != nil {
		return err
	}
	v := view(up)
	v.PhaseText = langOf(c).T(phaseTexts[v.Phase])
	page := importPage{Kinds: kindsFor(user(c)), Job: v, MaxMiB: MaxUpload >> 20}
	if !v.Done {
		page.Poll = "/panel/import/" + up.ID
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

func view(up *booking.Upload) *importView {
	v := &importView{ID: up.ID, Name: up.Name, Kind: up.Kind, Phase: up.Phase, Rows: up.Rows, Error: up.Error,
		Done: up.Phase == "checked" || up.Phase == "applied" || up.Phase == "failed"}
	if len(up.Summary) > 0 {
		_ = json.Unmarshal(up.Summary, &v.Summary)
	}
	if up.Size > 0 {
		v.Percent = int(min(100, up.ReadBytes*100/up.Size))
	}
	if v.Done && up.Phase != "failed" {
		v.Percent = 100
	}
	var lines []importer.Line
	if len(up.Lines) > 0 {
		_ = json.Unmarshal(up.Lines, &lines)
	}
	rows := 0 // rejected rows shown (a row has a line for each bad column)
	for i, l := range lines {
		if l.Outcome == booking.Rejected && (i == 0 || lines[i-1].Line != l.Line || lines[i-1].Key != l.Key) { // (a set's files)
			rows++
		}
		switch {
		case l.Outcome == booking.Rejected && rows <= maxShown:
			v.Rejected = append(v.Rejected, l)
		case l.Outcome != booking.Rejected && len(v.Changed) < 20:
			v.Changed = append(v.Changed, l)
		default:
			v.More = true
		}
	}
	return v
}

// applyImport runs the checked file for real: one replica claims it, once.
func (h *Handler) applyImport(c *fiber.Ctx) error {
	u := user(c)
	id := strings.Clone(c.Params("job"))
	if err := h.svc.ClaimApply(c.UserContext(), id); err != nil {
		return err
	}
	up, err := h.svc.GetUpload(c.UserContext(), id)
	if err != nil {
		return err
	}
	go h.runImport(id, *u, importer.Kind(up.Kind), up.Name, false)
	return c.Redirect("/panel/import/"+id, fiber.StatusSeeOther)
}

// salonLang is the salon's language ("" for no salon).
func salonLang(s *booking.Salon) string {
	if s == nil {
		return ""
	}
	return s.Locale
}
