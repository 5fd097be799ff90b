// Package bookingtest gives tests a real PostgreSQL database of their own and
// small helpers to fill it.
//
// The server is found once per test binary: TEST_DATABASE_URL when set (the
// role needs CREATEDB), else a PostgreSQL container through testcontainers-go
// when a Docker engine answers, else an ephemeral cluster started from the
// installed server binaries (as an unprivileged user when run as root). The
// migrations are applied once to a template database; every test gets a
// clone of it in milliseconds, dropped when the test ends.
//
// A test package that uses it calls Main from TestMain, so the server it
// started is stopped:
//
//	func TestMain(m *testing.M) { bookingtest.Main(m) }
package bookingtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"

	"salon/internal/pgcluster"
	"salon/migrations"
)

// server is the database server the tests of this binary share.
type server struct {
	admin    string        // connection string of a maintenance database
	pool     *pgxpool.Pool // on admin: creates and drops the test databases
	template string        // the migrated template database
	how      string        // where the server came from, for messages
	stop     func()
}

var (
	once    sync.Once
	shared  *server
	initErr error
	seq     atomic.Int64
)

// Main runs the tests and stops the database server they started, if any.
func Main(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.pool.Close()
		if shared.stop != nil {
			shared.stop()
		}
	}
	os.Exit(code)
}

// ConnString returns the connection string of a new, migrated database that
// is dropped when t ends.
func ConnString(t testing.TB) string {
	t.Helper()
	srv := getServer(t)
	name := fmt.Sprintf("salon_t_%d_%d", os.Getpid(), seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := srv.pool.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()+
		` TEMPLATE `+pgx.Identifier{srv.template}.Sanitize()); err != nil {
		t.Fatalf("bookingtest: create database (%s): %v", srv.how, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if _, err := srv.pool.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`); err != nil {
			t.Logf("bookingtest: drop database %s: %v", name, err)
		}
	})
	return withDatabase(srv.admin, name)
}

// Pool returns a pool on a new, migrated database that is closed and dropped
// when t ends. It allows enough connections for tests that release many
// goroutines at once.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return PoolFor(t, ConnString(t))
}

// PoolFor returns a pool on the database of connString (from ConnString),
// closed when t ends.
func PoolFor(t testing.TB, connString string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		t.Fatalf("bookingtest: %v", err)
	}
	cfg.MaxConns = 64
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("bookingtest: %v", err)
	}
	t.Cleanup(pool.Close) // runs before the drop registered by ConnString
	return pool
}

func getServer(t testing.TB) *server {
	t.Helper()
	once.Do(func() { shared, initErr = startServer() })
	if initErr != nil {
		t.Fatalf("bookingtest: no PostgreSQL for the tests: %v", initErr)
	}
	return shared
}

func startServer() (*server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv := &server{}
	switch {
	case os.Getenv("TEST_DATABASE_URL") != "":
		srv.admin, srv.how = os.Getenv("TEST_DATABASE_URL"), "TEST_DATABASE_URL"
	case dockerAnswers(ctx):
		ctr, err := tcpostgres.Run(ctx, "postgres:16-alpine",
			tcpostgres.WithDatabase("postgres"), tcpostgres.WithUsername("postgres"),
			tcpostgres.WithPassword("postgres"), tcpostgres.BasicWaitStrategies(),
			testcontainers.WithCmdArgs("-c", "fsync=off", "-c", "max_connections=300"))
		if err != nil {
			return nil, fmt.Errorf("testcontainers: %w", err)
		}
		srv.stop = func() { _ = testcontainers.TerminateContainer(ctr) }
		url, err := ctr.ConnectionString(ctx, "sslmode=disable")
		if err != nil {
			srv.stop()
			return nil, fmt.Errorf("testcontainers: %w", err)
		}
		srv.admin, srv.how = url, "testcontainers"
	default:
		removeStaleClusters()
		dir, err := os.MkdirTemp("", "salon-pg-")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(dir+".owner", []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return nil, err
		}
		c, err := pgcluster.Start(ctx, pgcluster.Config{Dir: dir, Ephemeral: true})
		if err != nil {
			_ = os.RemoveAll(dir)
			_ = os.Remove(dir + ".owner")
			return nil, err
		}
		srv.stop = func() {
			_ = c.Stop()
			_ = os.RemoveAll(dir)
			_ = os.Remove(dir + ".owner")
		}
		srv.admin, srv.how = c.ConnString("postgres"), "local cluster in "+dir
	}
	pool, err := pgxpool.New(ctx, srv.admin)
	if err == nil {
		err = pool.Ping(ctx)
	}
	if err != nil {
		if srv.stop != nil {
			srv.stop()
		}
		return nil, fmt.Errorf("%s: %w", srv.how, err)
	}
	srv.pool = pool
	if srv.template, err = ensureTemplate(ctx, srv); err != nil {
		pool.Close()
		if srv.stop != nil {
			srv.stop()
		}
		return nil, fmt.Errorf("%s: %w", srv.how, err)
	}
	return srv, nil
}

// ensureTemplate creates the migrated template database, named after a hash
// of the migrations so that a changed schema gets a new one. Test binaries
// sharing a server build it once, under an advisory lock; it is renamed into
// place only when complete.
func ensureTemplate(ctx context.Context, srv *server) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		fmt.Fprintf(h, "%s\x00%s\x00", path, b)
		return err
	})
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "river\x00%v", migrations.RiverVersions())
	name := "salon_tmpl_" + hex.EncodeToString(h.Sum(nil))[:16]

	conn, err := srv.pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended('bookingtest-template', 0))`); err != nil {
		return "", err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended('bookingtest-template', 0))`) //nolint:errcheck
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_new"
	if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{building}.Sanitize()+` WITH (FORCE)`); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{building}.Sanitize()); err != nil {
		return "", err
	}
	pool, err := pgxpool.New(ctx, withDatabase(srv.admin, building))
	if err != nil {
		return "", err
	}
	err = migrations.Up(ctx, pool)
	pool.Close()
	if err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{building}.Sanitize()+` RENAME TO `+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	return name, nil
}

// withDatabase returns connString pointing at database db.
func withDatabase(connString, db string) string {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err == nil {
			u.Path = "/" + db
			u.RawPath = ""
			return u.String()
		}
	}
	return connString + " dbname=" + db
}

// dockerAnswers reports whether a Docker engine answers its API ping.
func dockerAnswers(ctx context.Context) bool {
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		host = "unix:///var/run/docker.sock"
		if _, err := os.Stat("/var/run/docker.sock"); err != nil {
			return false
		}
	}
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	client := &http.Client{Timeout: 3 * time.Second}
	base := "http://" + u.Host
	if u.Scheme == "unix" {
		path := u.Path
		client.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}}
		base = "http://docker"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/_ping", nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// removeStaleClusters deletes the ephemeral clusters of test binaries that
// died without cleaning up (their server died with them).
func removeStaleClusters() {
	owners, _ := filepath.Glob(filepath.Join(os.TempDir(), "salon-pg-*.owner"))
	for _, o := range owners {
		b, err := os.ReadFile(o)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			dir := strings.TrimSuffix(o, ".owner")
			_ = os.RemoveAll(dir)
			_ = os.Remove(dir + ".log")
			_ = os.Remove(o)
		}
	}
}
