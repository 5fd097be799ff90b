// Package pgcluster runs a private PostgreSQL cluster from the server binaries
// installed on the machine (initdb, postgres), listening only on a unix
// socket in a directory of its own. `salon dev` keeps one under ./.salon/pg;
// tests start an ephemeral one when no other database is configured.
//
// PostgreSQL refuses to run as root, so when the process is root the cluster
// is initialised and run as an unprivileged user (postgres, else nobody).
package pgcluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Config describes a cluster.
type Config struct {
	// Dir is the data directory; it is initialised when empty or missing.
	Dir string
	// Ephemeral tunes the server for throwaway data (no fsync) and removes
	// Dir when the cluster stops.
	Ephemeral bool
	// Port names the socket file (.s.PGSQL.<port>); 0 picks one.
	Port int
	// Settings are extra server settings (name -> value).
	Settings map[string]string
}

// Cluster is a running (or reused) cluster.
type Cluster struct {
	Dir       string
	SocketDir string
	Port      int

	ephemeral bool
	cmd       *exec.Cmd
	exited    chan struct{}
	logPath   string
}

// Superuser is the database superuser of clusters this package creates.
const Superuser = "postgres"

// Start initialises the cluster when needed and starts it, or reuses it when
// a server already answers on its socket.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, Port: cfg.Port, ephemeral: cfg.Ephemeral, logPath: filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".log")}
	if c.Port == 0 {
		c.Port = 20000 + rand.IntN(30000)
		if !cfg.Ephemeral {
			c.Port = 5432
		}
	}
	c.SocketDir = dir
	if len(filepath.Join(dir, ".s.PGSQL.65535")) > 100 { // sun_path is 104 bytes on macOS
		sum := sha256.Sum256([]byte(dir))
		c.SocketDir = filepath.Join(os.TempDir(), "salon-sock-"+hex.EncodeToString(sum[:6]))
	}
	if !cfg.Ephemeral && c.ping(ctx) == nil {
		return c, nil // someone (an earlier `salon dev`) runs it already
	}
	// Parents are created traversable: the server may run as another user.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if err := os.MkdirAll(c.SocketDir, 0o700); err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if cred != nil {
		for _, d := range []string{dir, c.SocketDir} {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, fmt.Errorf("pgcluster: %w", err)
			}
		}
		if err := checkReachable(dir, cred); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := initdb(ctx, dir, cred); err != nil {
			return nil, err
		}
	}
	if err := c.start(ctx, cfg, cred); err != nil {
		return nil, err
	}
	return c, nil
}

// ConnString returns a connection string for database db over the socket.
func (c *Cluster) ConnString(db string) string {
	q := url.Values{"host": {c.SocketDir}, "port": {strconv.Itoa(c.Port)}, "user": {Superuser}, "sslmode": {"disable"}}
	return "postgres:///" + url.PathEscape(db) + "?" + q.Encode()
}

// Owned reports whether this process started the server (and Stop stops it).
func (c *Cluster) Owned() bool { return c.cmd != nil }

// Stop shuts down a server this process started (fast shutdown: sessions are
// ended) and removes an ephemeral cluster's files. It does nothing for a
// reused server.
func (c *Cluster) Stop() error {
	if c.cmd == nil {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	c.cmd = nil
	if c.ephemeral {
		_ = os.Remove(c.logPath)
		_ = os.RemoveAll(c.Dir)
		if c.SocketDir != c.Dir {
			_ = os.RemoveAll(c.SocketDir)
		}
	}
	return nil
}

func (c *Cluster) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, c.ConnString("postgres"))
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

func (c *Cluster) start(ctx context.Context, cfg Config, cred *syscall.Credential) error {
	bin, err := FindBin("postgres")
	if err != nil {
		return err
	}
	settings := map[string]string{
		"listen_addresses":        "",
		"unix_socket_directories": c.SocketDir,
		"port":                    strconv.Itoa(c.Port),
		"max_connections":         "200",
		"log_min_messages":        "warning",
		"log_min_error_statement": "panic",
	}
	if cfg.Ephemeral {
		for k, v := range map[string]string{
			"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
			"max_connections": "300", "shared_buffers": "128MB", "checkpoint_timeout": "30min",
			"max_wal_size": "4GB", "autovacuum": "off",
		} {
			settings[k] = v
		}
	}
	for k, v := range cfg.Settings {
		settings[k] = v
	}
	args := []string{"-D", c.Dir}
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		args = append(args, "-c", k+"="+settings[k])
	}
	logf, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = c.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)

	// The death signal fires when the thread that started the child exits, so
	// start it from a locked thread that lives as long as the server.
	started := make(chan error, 1)
	c.exited = make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(c.exited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("pgcluster: start postgres: %w", err)
	}
	c.cmd = cmd

	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-c.exited:
			c.cmd = nil
			return fmt.Errorf("pgcluster: postgres exited at start: %s", c.logTail())
		default:
		}
		if err := c.ping(ctx); err == nil {
			return nil
		} else if time.Now().After(deadline) || ctx.Err() != nil {
			_ = c.Stop()
			return fmt.Errorf("pgcluster: postgres did not answer in time (%v): %s", err, c.logTail())
		}
		select {
		case <-c.exited:
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Cluster) logTail() string {
	b, _ := os.ReadFile(c.logPath)
	b = bytes.TrimSpace(b)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func initdb(ctx context.Context, dir string, cred *syscall.Credential) error {
	bin, err := FindBin("initdb")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, "-D", dir, "-U", Superuser, "-A", "trust", "-E", "UTF8",
		"--no-locale", "--no-sync", "--no-instructions")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgcluster: initdb: %w: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// serverCredential returns the user to run the server as when this process
// is root (PostgreSQL refuses root), or nil.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, errors.New("pgcluster: running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as")
}

// checkReachable fails clearly when the unprivileged server user cannot
// reach dir (a parent directory without x for others, like /root).
func checkReachable(dir string, cred *syscall.Credential) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode().Perm()
		reachable := mode&0o001 != 0 || (ok && st.Uid == cred.Uid && mode&0o100 != 0) || (ok && st.Gid == cred.Gid && mode&0o010 != 0)
		if !reachable {
			return fmt.Errorf("pgcluster: PostgreSQL runs as uid %d, which cannot enter %s; move the project or set DATABASE_URL", cred.Uid, d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// FindBin finds a PostgreSQL server program on PATH or in the usual install
// places (Debian's /usr/lib/postgresql/N/bin, Homebrew, Postgres.app),
// preferring the newest version.
func FindBin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	var candidates []string
	for _, pattern := range []string{
		"/usr/lib/postgresql/*/bin/" + name,
		"/usr/pgsql-*/bin/" + name,
		"/opt/homebrew/opt/postgresql@*/bin/" + name,
		"/usr/local/opt/postgresql@*/bin/" + name,
		"/opt/homebrew/bin/" + name,
		"/Applications/Postgres.app/Contents/Versions/*/bin/" + name,
	} {
		m, _ := filepath.Glob(pattern)
		candidates = append(candidates, m...)
	}
	slices.SortFunc(candidates, func(a, b string) int { return versionOf(b) - versionOf(a) })
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && fi.Mode()&0o111 != 0 {
			return c, nil
		}
	}
	return "", fmt.Errorf("pgcluster: PostgreSQL's %s was not found on PATH or under /usr/lib/postgresql/*/bin; install the PostgreSQL server (15 or newer) or set DATABASE_URL", name)
}

// versionOf extracts the major version from an install path, 0 when none.
func versionOf(path string) int {
	for _, part := range strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '@' || r == '-' }) {
		if v, err := strconv.Atoi(part); err == nil {
			return v
		}
	}
	return 0
}
