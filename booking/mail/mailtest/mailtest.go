// Package mailtest runs a real SMTP server for tests: Mailpit
// (github.com/axllent/mailpit, a tool of this module, built once), and
// reads back what it received through Mailpit's API.
package mailtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"salon/booking/bookingtest"
	"sync"
	"testing"
	"time"
)

// Server is a running Mailpit.
type Server struct {
	SMTP string // host:port
	API  string // http://host:port
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// mailpit builds Mailpit once per machine and cache (the go tool's build
// cache makes a second build quick).
func mailpit() (string, error) {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "salon-mailpit-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "mailpit")
		out, err := exec.Command("go", "build", "-o", binary, "github.com/axllent/mailpit").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("build mailpit: %v: %s", err, out)
		}
	})
	return binary, buildErr
}

// Start runs a Mailpit for the test, accepting any login (and PLAIN over
// plain text, as a local relay would), and stops it at the end.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := mailpit()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{SMTP: bookingtest.FreeAddr(t), API: "http://" + bookingtest.FreeAddr(t)}
	// No limit on what it keeps: by default Mailpit deletes all but the
	// newest 500 messages each minute, which a test counting thousands
	// would read as mail lost.
	cmd := exec.Command(bin, "--quiet", "--max", "0", "--smtp", s.SMTP, "--listen", s.API[len("http://"):],
		"--database", filepath.Join(t.TempDir(), "mailpit.db"), "--smtp-auth-accept-any", "--smtp-auth-allow-insecure")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	bookingtest.WaitFor(t, 30*time.Second, "mailpit to answer", func() bool {
		resp, err := http.Get(s.API + "/api/v1/info")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return s
}

// Message is a received e-mail as Mailpit parsed it.
type Message struct {
	ID      string                         `json:"ID"`
	Subject string                         `json:"Subject"`
	Text    string                         `json:"Text"`
	HTML    string                         `json:"HTML"`
	To      []struct{ Address string }     `json:"To"`
	From    struct{ Name, Address string } `json:"From"`
	// Attachments are the files sent with it.
	Attachments []struct {
		FileName    string `json:"FileName"`
		ContentType string `json:"ContentType"`
		PartID      string `json:"PartID"`
	} `json:"Attachments"`
	Headers map[string][]string `json:"-"`
}

// Count is how many messages Mailpit holds.
func (s *Server) Count(t testing.TB) int {
	t.Helper()
	var list struct {
		Total int `json:"total"`
	}
	s.get(t, "/api/v1/messages?limit=1", &list)
	return list.Total
}

// Part reads an attachment of a message whole.
func (s *Server) Part(t testing.TB, id, part string) []byte {
	t.Helper()
	resp, err := http.Get(s.API + "/api/v1/message/" + id + "/part/" + part)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("mailpit part %s/%s: %d %v", id, part, resp.StatusCode, err)
	}
	return b
}

// Messages lists what Mailpit received (the newest 500), newest first,
// each read whole.
func (s *Server) Messages(t testing.TB) []Message {
	t.Helper()
	var list struct {
		Messages []struct {
			ID string `json:"ID"`
		} `json:"messages"`
	}
	s.get(t, "/api/v1/messages?limit=500", &list)
	out := make([]Message, 0, len(list.Messages))
	for _, m := range list.Messages {
		var full Message
		s.get(t, "/api/v1/message/"+m.ID, &full)
		s.get(t, "/api/v1/message/"+m.ID+"/headers", &full.Headers)
		out = append(out, full)
	}
	return out
}

func (s *Server) get(t testing.TB, path string, v any) {
	t.Helper()
	resp, err := http.Get(s.API + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("mailpit %s: %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("mailpit %s: %v", path, err)
	}
}
