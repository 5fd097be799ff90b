package booking

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Uploads are files given to the panel's import page, kept in the
// database with the progress and report of their dry run and real run, so
// that any replica shows them and one applies them, once.

// Upload is an uploaded file and what was done with it.
type Upload struct {
	ID, Kind, Name string
	SalonID        int64
	UserID         int64
	Size           int64
	Phase          string // checking, checked, applying, applied, failed
	ReadBytes      int64
	Rows           int
	Summary        json.RawMessage
	Lines          json.RawMessage
	Error          string
	UpdatedAt      time.Time
}

// UploadStale is how long a run may go without progress before it counts
// as interrupted (its replica stopped): it may then be applied again (an
// import is idempotent).
const UploadStale = 2 * time.Minute

// panelUser is the panel user who asks (about their uploads, their own
// settings): a staff caller
// (ErrForbidden for anyone else).
func panelUser(ctx context.Context) (User, error) {
	c, err := asked(ctx)
	if err != nil {
		return User{}, err
	}
	if c.kind != callerStaff {
		return User{}, fmt.Errorf("uploads are a panel user's: %w", ErrForbidden)
	}
	return c.user, nil
}

// UploadRole is the role that may upload (and so import) a kind of file:
// an admin may import the schedule, only an owner the rest.
func UploadRole(kind string) Role {
	if kind == "schedule" {
		return RoleAdmin
	}
	return RoleOwner
}

// MaxUploadSize is the largest file an upload keeps.
const MaxUploadSize = 32 << 20

// uploadChunk is how much of a file one row of upload_chunks holds.
const uploadChunk = 256 << 10

// SaveUpload keeps a file of the kind for the calling panel user, who must
// hold the role that imports it (UploadRole; checked before the file is
// read), and forgets uploads untouched for an hour. The file is read from r
// as it comes, chunk by chunk, and never held whole: a file over
// MaxUploadSize is refused (ErrInvalid, field "file") and nothing of it
// kept. It returns the upload's id. Errors: ErrForbidden, ErrInvalid.
func (s *Service) SaveUpload(ctx context.Context, kind, name string, file io.Reader) (string, error) {
	u, err := panelUser(ctx)
	if err != nil {
		return "", err
	}
	if err := authorize(ctx, u.SalonID, UploadRole(kind)); err != nil {
		return "", err
	}
	id := randomHex(16)
	// Uploads untouched for an hour go (a run touches its upload as it
	// goes: one being checked or applied is never among them).
	if _, err := s.pool.Exec(ctx, `DELETE FROM uploads WHERE updated_at < $1`, s.now().Add(-time.Hour)); err != nil {
		return "", dbErr(err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO uploads (id, salon_id, user_id, kind, name, phase, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, 'receiving', $6, $6)`, id, u.SalonID, u.ID, kind, name, s.now()); err != nil {
		return "", fmt.Errorf("upload: %w", dbErr(err))
	}
	// Each chunk is written as it arrives, outside any transaction (the
	// client may be slow); a file that does not arrive whole is forgotten.
	size, err := s.receive(ctx, id, file)
	if err == nil && size == 0 {
		err = Invalid("file", "the file is empty")
	}
	if err == nil {
		_, err = s.pool.Exec(ctx, `UPDATE uploads SET phase = 'checking', size = $2, updated_at = $3 WHERE id = $1`, id, size, s.now())
		err = dbErr(err)
	}
	if err != nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, derr := s.pool.Exec(dctx, `DELETE FROM uploads WHERE id = $1`, id); derr != nil {
			s.log.Warn("upload: forget a file that did not arrive", "err", derr)
		}
		return "", err
	}
	return id, nil
}

// receive writes file into upload id's chunks and returns its size. A
// file whose reader fails (a client gone mid-file: a truncated form) is an
// error, not a shorter file.
func (s *Service) receive(ctx context.Context, id string, file io.Reader) (int64, error) {
	src := &watchedReader{r: file}
	buf := make([]byte, uploadChunk)
	var size int64
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(src, buf)
		if src.err != nil {
			return 0, fmt.Errorf("upload: read the file: %w", src.err)
		}
		if n > 0 {
			if size += int64(n); size > MaxUploadSize {
				return 0, Invalid("file", "larger than %d MiB", MaxUploadSize>>20)
			}
			if _, err := s.pool.Exec(ctx, `INSERT INTO upload_chunks (upload_id, seq, data) VALUES ($1, $2, $3)`, id, seq, buf[:n]); err != nil {
				return 0, fmt.Errorf("upload: %w", dbErr(err))
			}
		}
		switch {
		case err == io.EOF, err == io.ErrUnexpectedEOF:
			return size, nil
		case err != nil:
			return 0, fmt.Errorf("upload: read the file: %w", err)
		}
	}
}

// watchedReader remembers its reader's first error other than io.EOF.
type watchedReader struct {
	r   io.Reader
	err error
}

func (w *watchedReader) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if err != nil && err != io.EOF && w.err == nil {
		w.err = err
	}
	return n, err
}

// GetUpload returns the calling user's upload (without its file).
// Errors: ErrNotFound, ErrForbidden.
func (s *Service) GetUpload(ctx context.Context, id string) (*Upload, error) {
	u, err := panelUser(ctx)
	if err != nil {
		return nil, err
	}
	var up Upload
	var summary, lines []byte
	err = s.pool.QueryRow(ctx, `SELECT id, kind, name, salon_id, user_id, size, phase, read_bytes, rows_read,
		summary, lines, error, updated_at FROM uploads WHERE id = $1 AND salon_id = $2 AND user_id = $3 AND phase <> 'receiving'`,
		id, u.SalonID, u.ID).
		Scan(&up.ID, &up.Kind, &up.Name, &up.SalonID, &up.UserID, &up.Size, &up.Phase, &up.ReadBytes, &up.Rows,
			&summary, &lines, &up.Error, &up.UpdatedAt)
	if isNoRows(err) {
		return nil, fmt.Errorf("upload: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("upload: %w", dbErr(err))
	}
	up.Summary, up.Lines = summary, lines
	if (up.Phase == "checking" || up.Phase == "applying") && s.now().Sub(up.UpdatedAt) > UploadStale {
		up.Phase, up.Error = "failed", "interrupted: the server stopped; apply again (an import changes nothing twice)"
	}
	return &up, nil
}

// UploadFile returns the calling user's uploaded file, read chunk by chunk
// as it is read. Errors: ErrNotFound, ErrForbidden.
func (s *Service) UploadFile(ctx context.Context, id string) (io.Reader, error) {
	up, err := s.GetUpload(ctx, id)
	if err != nil {
		return nil, err
	}
	return &chunks{ctx: ctx, pool: s.pool, id: id, size: up.Size}, nil
}

// chunks reads an upload's chunks in order, one query each. An upload that
// ends before its size (it was deleted meanwhile: an erasure, say) is an
// error, never a shorter file.
type chunks struct {
	ctx        context.Context
	pool       *pgxpool.Pool
	id         string
	size, read int64
	seq        int
	buf        []byte
}

func (c *chunks) Read(p []byte) (int, error) {
	for len(c.buf) == 0 {
		if c.read >= c.size {
			return 0, io.EOF
		}
		err := c.pool.QueryRow(c.ctx, `SELECT data FROM upload_chunks WHERE upload_id = $1 AND seq = $2`, c.id, c.seq).Scan(&c.buf)
		switch {
		case isNoRows(err):
			return 0, fmt.Errorf("upload: the file is gone after %d of its %d bytes: %w", c.read, c.size, ErrNotFound)
		case err != nil:
			return 0, fmt.Errorf("upload: %w", dbErr(err))
		}
		c.seq++
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	c.read += int64(n)
	return n, nil
}

// ClaimApply moves the calling user's checked upload (or one whose run was
// interrupted) to applying: one replica, once. Errors: ErrNotFound,
// ErrConflict, ErrForbidden.
func (s *Service) ClaimApply(ctx context.Context, id string) error {
	u, err := panelUser(ctx)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE uploads SET phase = 'applying', read_bytes = 0, rows_read = 0, error = '', updated_at = $4
		WHERE id = $1 AND salon_id = $2 AND user_id = $3
		  AND (phase = 'checked' OR (phase IN ('checking', 'applying') AND updated_at < $5)
		       OR (phase = 'failed' AND error LIKE 'interrupted%'))`, id, u.SalonID, u.ID, s.now(), s.now().Add(-UploadStale))
	if err != nil {
		return fmt.Errorf("upload: %w", dbErr(err))
	}
	if tag.RowsAffected() == 0 {
		if _, err := s.GetUpload(ctx, id); err != nil {
			return err
		}
		return conflict("the upload is not ready to apply")
	}
	return nil
}

// UploadProgress records a run's progress on the calling user's upload.
// Errors: ErrNotFound, ErrForbidden.
func (s *Service) UploadProgress(ctx context.Context, id string, read int64, rows int) error {
	u, err := panelUser(ctx)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE uploads SET read_bytes = $4, rows_read = $5, updated_at = $6
		WHERE id = $1 AND salon_id = $2 AND user_id = $3`, id, u.SalonID, u.ID, read, rows, s.now())
	return updated(tag, err, "upload")
}

// UploadDone records a run's end on the calling user's upload: its phase,
// summary, report lines and error. Errors: ErrNotFound, ErrForbidden.
func (s *Service) UploadDone(ctx context.Context, id, phase string, summary, lines any, failure string) error {
	u, err := panelUser(ctx)
	if err != nil {
		return err
	}
	sj, _ := json.Marshal(summary)
	lj, _ := json.Marshal(lines)
	tag, err := s.pool.Exec(ctx, `UPDATE uploads SET phase = $4, summary = $5, lines = $6, error = $7, updated_at = $8
		WHERE id = $1 AND salon_id = $2 AND user_id = $3`, id, u.SalonID, u.ID, phase, sj, lj, failure, s.now())
	return updated(tag, err, "upload")
}

// updated is the error of an UPDATE of one record: the database's, or
// ErrNotFound when it changed no row.
func updated(tag pgconn.CommandTag, err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, dbErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}
