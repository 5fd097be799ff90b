// Package smstest is a fake SMS.ru (https://sms.ru/api): POST /sms/send
// and /sms/status as the documented API answers them (json=1), with the
// account's api_id checked, numbers refused as SMS.ru refuses them, and
// faults to inject. Tests read what was sent.
package smstest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"
)

// Message is a text the fake took, and when.
type Message struct {
	ID, To, Text, From string
	At                 time.Time
}

// Server is the fake.
type Server struct {
	URL   string
	APIID string

	mu       sync.Mutex
	sent     []Message
	statuses map[string]int // sms_id -> SMS.ru's status code
	fail     func(path string) int
	n        int
	close    func()
}

// LoseAnswer, returned by a Fail function, has the fake do the call (send
// the text) and then drop the connection without answering: the caller
// cannot know the text went.
const LoseAnswer = -1

var digits = regexp.MustCompile(`^[0-9]{10,15}$`)

// New starts a fake SMS.ru for the test.
func New(t testing.TB) *Server {
	s := &Server{APIID: "TEST-API-ID", statuses: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL, s.close = srv.URL, srv.Close
	return s
}

// Close stops the fake: calls find nobody listening.
func (s *Server) Close() { s.close() }

// Fail makes the fake answer the HTTP status fn returns for a call to path
// (0: answer normally; LoseAnswer: act, then drop the connection), before
// it acts.
func (s *Server) Fail(fn func(path string) int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = fn
}

// Sent lists what was sent, in order.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// PeakPerSecond is the most texts the fake took within one second of the
// clock (the provider's own count).
func (s *Server) PeakPerSecond() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	per := map[int64]int{}
	peak := 0
	for _, m := range s.sent {
		k := m.At.Unix()
		per[k]++
		peak = max(peak, per[k])
	}
	return peak
}

// SetStatus sets what /sms/status reports of a message (103 delivered,
// 104-108 not, 100-102 on its way).
func (s *Server) SetStatus(id string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses[id] = code
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		switch code := s.fail(r.URL.Path); {
		case code == LoseAnswer:
			w = lost{w}
		case code != 0:
			w.WriteHeader(code)
			return
		}
	}
	answer := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	refuse := func(code int, text string) {
		answer(map[string]any{"status": "ERROR", "status_code": code, "status_text": text})
	}
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		refuse(100, "bad request")
		return
	}
	switch {
	case r.PostForm.Get("api_id") != s.APIID:
		refuse(200, "Неправильный api_id")
		return
	case r.PostForm.Get("json") != "1":
		http.Error(w, "100\n", http.StatusOK) // the plain-text API
		return
	}
	switch r.URL.Path {
	case "/sms/send":
		to, msg := r.PostForm.Get("to"), r.PostForm.Get("msg")
		one := map[string]any{"status": "OK", "status_code": 100}
		switch {
		case msg == "":
			refuse(202, "Неправильно указан получатель или текст")
			return
		case !digits.MatchString(to):
			one = map[string]any{"status": "ERROR", "status_code": 207, "status_text": "На этот номер нельзя отправлять сообщения"}
		default:
			s.n++
			id := fmt.Sprintf("000000-%08d", s.n)
			one["sms_id"] = id
			s.statuses[id] = 100
			if r.PostForm.Get("test") != "1" {
				s.sent = append(s.sent, Message{ID: id, To: to, Text: msg, From: r.PostForm.Get("from"), At: time.Now()})
			}
		}
		answer(map[string]any{"status": "OK", "status_code": 100, "sms": map[string]any{to: one}, "balance": 100.5})
	case "/sms/status":
		id := r.PostForm.Get("sms_id")
		code, ok := s.statuses[id]
		one := map[string]any{"status": "OK", "status_code": code}
		if !ok {
			one = map[string]any{"status": "ERROR", "status_code": -1, "status_text": "Сообщение не найдено"}
		}
		answer(map[string]any{"status": "OK", "status_code": 100, "sms": map[string]any{id: one}, "balance": 100.5})
	default:
		http.NotFound(w, r)
	}
}

// lost is a response the fake drops: it writes nothing, and at the first
// write closes the connection.
type lost struct{ http.ResponseWriter }

func (l lost) Header() http.Header { return http.Header{} }
func (l lost) WriteHeader(int)     {}
func (l lost) Write([]byte) (int, error) {
	if hj, ok := l.ResponseWriter.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			_ = c.Close()
		}
	}
	return 0, http.ErrHijacked
}
