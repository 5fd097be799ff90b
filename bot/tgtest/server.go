// Package tgtest is a fake Telegram Bot API server for tests. It speaks the
// real HTTP protocol (https://core.telegram.org/bots/api): getMe,
// getUpdates with offset and timeout (long polling), setWebhook and
// deleteWebhook (then it delivers updates by POST, with the secret header),
// sendMessage, editMessageText, editMessageReplyMarkup and
// answerCallbackQuery, with form, multipart or JSON parameters. It keeps
// each chat's messages as Telegram would show them, records every call, can
// fail chosen calls with 429 (retry_after) or 5xx, and plays users who type,
// share their phone and tap buttons.
package tgtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Server is a fake Bot API server.
type Server struct {
	URL   string // the API base URL (what TELEGRAM_API_URL takes)
	Token string
	t     testing.TB
	http  *httptest.Server

	mu         sync.Mutex
	changed    chan struct{}           // closed and replaced on every change
	chatCh     map[int64]chan struct{} // the same, per chat (bot calls to it)
	nextUpdate int64
	queue      []update // not yet confirmed by getUpdates' offset
	webhook    webhook
	nextMsg    map[int64]int
	chats      map[int64][]*Message
	calls      []Call
	callbacks  map[string]bool // callback query id -> answered
	failures   []failure
	slow       []slowdown
	nextUser   int64
	closed     bool
}

type update struct {
	ID   int64
	JSON map[string]any
	Raw  json.RawMessage // sent as is, instead of JSON
}

// body is the update as Telegram sends it.
func (u update) body() json.RawMessage {
	if u.Raw != nil {
		return u.Raw
	}
	b, _ := json.Marshal(u.JSON)
	return b
}

type webhook struct {
	URL, Secret string
	delivering  bool
}

type slowdown struct {
	method  string
	left    int
	delay   time.Duration
	entered chan struct{} // closed when the first slowed call arrives
}

type failure struct {
	method     string
	left       int
	status     int
	retryAfter int
}

// Call is one API call the bot made.
type Call struct {
	Method string
	ChatID int64
	At     time.Time
	Params map[string]string
	Status int // the HTTP status answered
}

// Message is a message of the bot as the chat shows it now (edits applied).
type Message struct {
	ID       int
	ChatID   int64
	Text     string
	Inline   [][]Button // inline keyboard
	Reply    [][]Button // reply keyboard (Data "contact" for a request_contact button)
	SentAt   time.Time
	EditedAt time.Time
	Edits    int
}

// Button is a keyboard button.
type Button struct {
	Text string
	Data string
	URL  string // a link button
}

// NewServer starts a fake server, stopped when t ends.
func NewServer(t testing.TB) *Server {
	s := &Server{Token: "123456:TEST-token", t: t, changed: make(chan struct{}), chatCh: map[int64]chan struct{}{}, nextUpdate: 1000,
		nextMsg: map[int64]int{}, chats: map[int64][]*Message{}, callbacks: map[string]bool{}, nextUser: 5000}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.http.URL
	t.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.notifyLocked()
	s.mu.Unlock()
	s.http.CloseClientConnections()
	s.http.Close()
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// notifyChatLocked wakes the waiters of one chat (and everyone's).
func (s *Server) notifyChatLocked(chat int64) {
	if ch, ok := s.chatCh[chat]; ok {
		close(ch)
		delete(s.chatCh, chat)
	}
	s.notifyLocked()
}

// waitChat is Wait for a condition on one chat: it wakes only on calls to
// that chat, so many simulated users do not all wake on every call.
func (s *Server) waitChat(chat int64, d time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok := cond()
		ch, exists := s.chatCh[chat]
		if !exists {
			ch = make(chan struct{})
			s.chatCh[chat] = ch
		}
		closed := s.closed
		s.mu.Unlock()
		if ok {
			return true
		}
		if closed {
			return false
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// FailNext makes the next n calls of method fail with status (429 with
// retry_after seconds, or a 5xx).
func (s *Server) FailNext(method string, n, status, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{method: method, left: n, status: status, retryAfter: retryAfter})
}

// SlowNext makes the next n calls of method take d before they are
// answered (and take effect). The channel is closed when the first of them
// arrives.
func (s *Server) SlowNext(method string, n int, d time.Duration) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.slow = append(s.slow, slowdown{method: method, left: n, delay: d, entered: ch})
	return ch
}

// delayFor takes one slowdown of method, if any is left.
func (s *Server) delayFor(method string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.slow {
		sd := &s.slow[i]
		if sd.method != method || sd.left == 0 {
			continue
		}
		sd.left--
		select {
		case <-sd.entered:
		default:
			close(sd.entered)
		}
		return sd.delay
	}
	return 0
}

// PushRaw queues an update given as raw JSON (its update_id is set when it
// is a JSON object) and returns the id: for updates the bot cannot read.
func (s *Server) PushRaw(raw string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextUpdate++
	var obj map[string]json.RawMessage
	body := json.RawMessage(raw)
	if json.Unmarshal(body, &obj) == nil {
		obj["update_id"], _ = json.Marshal(s.nextUpdate)
		body, _ = json.Marshal(obj)
	}
	s.queue = append(s.queue, update{ID: s.nextUpdate, Raw: body})
	s.notifyLocked()
	s.deliverLocked()
	return s.nextUpdate
}

// Calls returns the calls made so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Unanswered returns the callback queries the bot has not answered.
func (s *Server) Unanswered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, ok := range s.callbacks {
		if !ok {
			out = append(out, id)
		}
	}
	return out
}

// Pending returns how many updates getUpdates has not had confirmed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Wait blocks until cond (called under the server's lock) holds or d passes.
func (s *Server) Wait(d time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok := cond()
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// Push queues an update (its update_id is set) and returns the id.
func (s *Server) Push(u map[string]any) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextUpdate++
	u["update_id"] = s.nextUpdate
	s.queue = append(s.queue, update{ID: s.nextUpdate, JSON: u})
	s.notifyLocked()
	s.deliverLocked()
	return s.nextUpdate
}

// Redeliver queues the update with that id again, as Telegram does when it
// is not sure the bot got it.
func (s *Server) Redeliver(id int64, u map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u["update_id"] = id
	s.queue = append(s.queue, update{ID: id, JSON: u})
	s.notifyLocked()
	s.deliverLocked()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/bot")
	token, method, ok := strings.Cut(path, "/")
	if !ok || token != s.Token {
		writeJSON(w, 401, map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized"})
		return
	}
	params, err := readParams(r)
	if err != nil {
		writeJSON(w, 400, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + err.Error()})
		return
	}
	if method == "getUpdates" {
		s.getUpdates(w, r, params)
		return
	}
	if d := s.delayFor(method); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return // the caller gave up: as far as it knows, the call failed
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	chat, _ := strconv.ParseInt(params["chat_id"], 10, 64)
	call := Call{Method: method, ChatID: chat, At: time.Now(), Params: params}
	status, body := s.failLocked(method)
	if status == 0 {
		status, body = s.callLocked(method, params, chat)
	}
	call.Status = status
	s.calls = append(s.calls, call)
	s.notifyChatLocked(chat)
	writeJSON(w, status, body)
}

func (s *Server) failLocked(method string) (int, map[string]any) {
	for i := range s.failures {
		f := &s.failures[i]
		if f.method != method || f.left == 0 {
			continue
		}
		f.left--
		if f.status == 429 {
			return 429, map[string]any{"ok": false, "error_code": 429, "description": fmt.Sprintf("Too Many Requests: retry after %d", f.retryAfter),
				"parameters": map[string]any{"retry_after": f.retryAfter}}
		}
		return f.status, map[string]any{"ok": false, "error_code": f.status, "description": "Internal Server Error"}
	}
	return 0, nil
}

func okResult(v any) map[string]any { return map[string]any{"ok": true, "result": v} }

func bad(desc string) (int, map[string]any) {
	return 400, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + desc}
}

func (s *Server) callLocked(method string, p map[string]string, chat int64) (int, map[string]any) {
	switch method {
	case "getMe":
		return 200, okResult(map[string]any{"id": 1, "is_bot": true, "first_name": "Salon", "username": "salon_test_bot"})
	case "setWebhook":
		s.webhook = webhook{URL: p["url"], Secret: p["secret_token"]}
		s.deliverLocked()
		return 200, okResult(true)
	case "deleteWebhook":
		s.webhook = webhook{}
		return 200, okResult(true)
	case "sendMessage":
		if chat == 0 || p["text"] == "" {
			return bad("chat_id and text are required")
		}
		s.nextMsg[chat]++
		m := &Message{ID: s.nextMsg[chat], ChatID: chat, Text: p["text"], SentAt: time.Now()}
		if err := m.setMarkup(p["reply_markup"]); err != nil {
			return bad(err.Error())
		}
		s.chats[chat] = append(s.chats[chat], m)
		return 200, okResult(m.json())
	case "editMessageText", "editMessageReplyMarkup":
		id, _ := strconv.Atoi(p["message_id"])
		m := s.messageLocked(chat, id)
		if m == nil {
			return bad("message to edit not found")
		}
		before := m.json()
		if method == "editMessageText" {
			if p["text"] == "" {
				return bad("text is required")
			}
			m.Text = p["text"]
		}
		m.Inline = nil
		if err := m.setMarkup(p["reply_markup"]); err != nil {
			return bad(err.Error())
		}
		if fmt.Sprint(before) == fmt.Sprint(m.json()) {
			return bad("message is not modified: specified new message content and reply markup are exactly the same")
		}
		m.Edits++
		m.EditedAt = time.Now()
		return 200, okResult(m.json())
	case "answerCallbackQuery":
		id := p["callback_query_id"]
		if _, ok := s.callbacks[id]; !ok {
			return bad("query is too old and response timeout expired or query ID is invalid")
		}
		s.callbacks[id] = true
		return 200, okResult(true)
	}
	return 404, map[string]any{"ok": false, "error_code": 404, "description": "Not Found"}
}

func (s *Server) messageLocked(chat int64, id int) *Message {
	for _, m := range s.chats[chat] {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (m *Message) setMarkup(raw string) error {
	if raw == "" {
		return nil
	}
	var mk struct {
		Inline [][]struct {
			Text string `json:"text"`
			Data string `json:"callback_data"`
			URL  string `json:"url"`
			// CopyText is another kind of button: its text is 1 to 256
			// characters (the Bot API's CopyTextButton), and a button is
			// of one kind.
			CopyText *struct {
				Text string `json:"text"`
			} `json:"copy_text"`
		} `json:"inline_keyboard"`
		Keyboard [][]struct {
			Text    string `json:"text"`
			Contact bool   `json:"request_contact"`
		} `json:"keyboard"`
	}
	if err := json.Unmarshal([]byte(raw), &mk); err != nil {
		return fmt.Errorf("can't parse reply keyboard markup JSON object")
	}
	for _, row := range mk.Inline {
		var r []Button
		for _, b := range row {
			if len(b.Data) > 64 {
				return fmt.Errorf("BUTTON_DATA_INVALID")
			}
			if b.CopyText != nil {
				if n := utf8.RuneCountInString(b.CopyText.Text); n < 1 || n > 256 {
					return fmt.Errorf("BUTTON_COPY_TEXT_INVALID")
				}
				return fmt.Errorf("BUTTON_TYPE_INVALID") // this fake plays no copy buttons
			}
			if (b.Data == "") == (b.URL == "") {
				return fmt.Errorf("BUTTON_TYPE_INVALID")
			}
			r = append(r, Button{Text: b.Text, Data: b.Data, URL: b.URL})
		}
		m.Inline = append(m.Inline, r)
	}
	if mk.Keyboard != nil {
		m.Reply = nil
		for _, row := range mk.Keyboard {
			var r []Button
			for _, b := range row {
				d := ""
				if b.Contact {
					d = "contact"
				}
				r = append(r, Button{Text: b.Text, Data: d})
			}
			m.Reply = append(m.Reply, r)
		}
	}
	return nil
}

func (m *Message) json() map[string]any {
	out := map[string]any{"message_id": m.ID, "date": m.SentAt.Unix(), "text": m.Text,
		"chat": map[string]any{"id": m.ChatID, "type": "private"}}
	if len(m.Inline) > 0 {
		var rows [][]map[string]any
		for _, row := range m.Inline {
			var r []map[string]any
			for _, b := range row {
				r = append(r, map[string]any{"text": b.Text, "callback_data": b.Data})
			}
			rows = append(rows, r)
		}
		out["reply_markup"] = map[string]any{"inline_keyboard": rows}
	}
	return out
}

// getUpdates answers the queued updates from offset on, waiting up to
// timeout seconds for some; updates below offset are confirmed and dropped.
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, p map[string]string) {
	offset, _ := strconv.ParseInt(p["offset"], 10, 64)
	timeout, _ := strconv.Atoi(p["timeout"])
	limit, _ := strconv.Atoi(p["limit"])
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	deadline := time.Now().Add(time.Duration(timeout) * time.Second)
	for {
		s.mu.Lock()
		status, body := s.failLocked("getUpdates")
		if status == 0 && s.webhook.URL != "" {
			status, body = 409, map[string]any{"ok": false, "error_code": 409, "description": "Conflict: can't use getUpdates method while webhook is active"}
		}
		if status != 0 {
			s.calls = append(s.calls, Call{Method: "getUpdates", At: time.Now(), Params: p, Status: status})
			s.mu.Unlock()
			writeJSON(w, status, body)
			return
		}
		if offset > 0 {
			kept := s.queue[:0]
			for _, u := range s.queue {
				if u.ID >= offset {
					kept = append(kept, u)
				}
			}
			s.queue = kept
		}
		var out []json.RawMessage
		for _, u := range s.queue {
			if len(out) < limit {
				out = append(out, u.body())
			}
		}
		ch := s.changed
		closed := s.closed
		if len(out) > 0 || time.Now().After(deadline) || closed {
			s.calls = append(s.calls, Call{Method: "getUpdates", At: time.Now(), Params: p, Status: 200})
			s.mu.Unlock()
			if out == nil {
				out = []json.RawMessage{}
			}
			writeJSON(w, 200, okResult(out))
			return
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		case <-r.Context().Done():
			return
		}
	}
}

// deliverLocked posts the queued updates to the webhook, in order, one at a
// time, until each is answered 200 (as Telegram does).
func (s *Server) deliverLocked() {
	if s.webhook.URL == "" || s.webhook.delivering || len(s.queue) == 0 {
		return
	}
	s.webhook.delivering = true
	go func() {
		backoff := 20 * time.Millisecond
		for {
			s.mu.Lock()
			if s.closed || s.webhook.URL == "" || len(s.queue) == 0 {
				s.webhook.delivering = false
				s.mu.Unlock()
				return
			}
			u, hook := s.queue[0], s.webhook
			s.mu.Unlock()
			body := u.body()
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, hook.URL, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if hook.Secret != "" {
				req.Header.Set("X-Telegram-Bot-Api-Secret-Token", hook.Secret)
			}
			resp, err := http.DefaultClient.Do(req)
			ok := err == nil && resp.StatusCode == 200
			if resp != nil {
				resp.Body.Close()
			}
			s.mu.Lock()
			if ok && len(s.queue) > 0 && s.queue[0].ID == u.ID {
				s.queue = s.queue[1:]
				s.notifyLocked()
				backoff = 20 * time.Millisecond
			}
			s.mu.Unlock()
			if !ok {
				time.Sleep(backoff) // Telegram's own retry delay, in small
				backoff = min(backoff*2, time.Second)
			}
		}
	}()
}

// readParams reads a Bot API call's parameters from a query string, a form,
// a multipart form or a JSON object; non-string JSON values are kept as JSON.
func readParams(r *http.Request) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range r.URL.Query() {
		out[k] = v[0]
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var m map[string]any
		b, _ := io.ReadAll(r.Body)
		if len(bytes.TrimSpace(b)) == 0 {
			return out, nil
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		for k, v := range m {
			if s, ok := v.(string); ok {
				out[k] = s
			} else {
				j, _ := json.Marshal(v)
				out[k] = string(j)
			}
		}
	case "multipart/form-data":
		b, _ := io.ReadAll(r.Body)
		if len(b) == 0 {
			return out, nil // a call without parameters (getMe) sends none
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			return nil, err
		}
		for k, v := range r.MultipartForm.Value {
			out[k] = v[0]
		}
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		for k, v := range r.PostForm {
			out[k] = v[0]
		}
	}
	return out, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// WaitAnswered waits until every callback query users made is answered.
func (s *Server) WaitAnswered(d time.Duration) bool {
	return s.Wait(d, func() bool {
		for _, ok := range s.callbacks {
			if !ok {
				return false
			}
		}
		return true
	})
}

// Changes returns a channel closed at the next change (a call, an update).
func (s *Server) Changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// MaxPerWindow returns the most messages (sendMessage and edits that
// succeeded) the bot made within any window: to one chat, and overall.
func MaxPerWindow(calls []Call, window time.Duration) (perChat, overall int) {
	var all []time.Time
	byChat := map[int64][]time.Time{}
	for _, c := range calls {
		if c.Status != 200 || (c.Method != "sendMessage" && c.Method != "editMessageText" && c.Method != "editMessageReplyMarkup") {
			continue
		}
		all = append(all, c.At)
		byChat[c.ChatID] = append(byChat[c.ChatID], c.At)
	}
	most := func(ts []time.Time) int {
		n, j := 0, 0
		for i := range ts { // ts is in call order, which is time order
			for ts[i].Sub(ts[j]) >= window {
				j++
			}
			n = max(n, i-j+1)
		}
		return n
	}
	for _, ts := range byChat {
		perChat = max(perChat, most(ts))
	}
	return perChat, most(all)
}
