package booking

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPassingFailuresAreUnavailable: a server restarting or shutting down
// (57P01, 57P03) answered 500 "internal error"; every failure that passes
// with time is ErrUnavailable (a 503), and a real error stays internal.
func TestPassingFailuresAreUnavailable(t *testing.T) {
	for _, code := range []string{"57P01", "57P02", "57P03", "08006", "08001", "53300", "53200", "25P03", "55P03", "57014", "40P01"} {
		if err := dbErr(&pgconn.PgError{Code: code}); !errors.Is(err, ErrUnavailable) {
			t.Errorf("SQLSTATE %s: %v, want ErrUnavailable", code, err)
		}
	}
	for _, code := range []string{"42P01", "23505", "XX000"} {
		if err := dbErr(&pgconn.PgError{Code: code}); errors.Is(err, ErrUnavailable) {
			t.Errorf("SQLSTATE %s is not passing: %v", code, err)
		}
	}
}
