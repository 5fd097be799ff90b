package booking

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
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

// SaveUpload keeps a file of the kind for the calling panel user, who must
// hold the role that imports it (UploadRole), and forgets uploads older
// than an hour. It returns the upload's id. Errors: ErrForbidden.
func (s *Service) SaveUpload(ctx context.Context, kind, name string, file []byte) (string, error) {
	u, err := panelUser(ctx)
	if err != nil {
		return "", err
	}
	if err := authorize(ctx, u.SalonID, UploadRole(kind)); err != nil {
		return "", err
	}
	id := randomHex(16)
	if _, err := s.pool.Exec(ctx, `DELETE FROM uploads WHERE created_at < $1`, s.now().Add(-time.Hour)); err != nil {
		return "", dbErr(err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO uploads (id, salon_id, user_id, kind, name, file, phase, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, 'checking', $7, $7)`, id, u.SalonID, u.ID, kind, name, file, s.now())
	if err != nil {
		return "", fmt.Errorf("upload: %w", dbErr(err))
	}
	return id, nil
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
	err = s.pool.QueryRow(ctx, `SELECT id, kind, name, salon_id, user_id, length(file), phase, read_bytes, rows_read,
		summary, lines, error, updated_at FROM uploads WHERE id = $1 AND salon_id = $2 AND user_id = $3`, id, u.SalonID, u.ID).
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

// UploadFile returns the calling user's uploaded file.
// Errors: ErrNotFound, ErrForbidden.
func (s *Service) UploadFile(ctx context.Context, id string) ([]byte, error) {
	u, err := panelUser(ctx)
	if err != nil {
		return nil, err
	}
	var file []byte
	err = s.pool.QueryRow(ctx, `SELECT file FROM uploads WHERE id = $1 AND salon_id = $2 AND user_id = $3`, id, u.SalonID, u.ID).Scan(&file)
	if isNoRows(err) {
		return nil, fmt.Errorf("upload: %w", ErrNotFound)
	}
	return file, dbErr(err)
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
		return fmt.Errorf("the upload is not ready to apply: %w", ErrConflict)
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
