package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/booking/psp/psptest"
	"salon/bot/tgtest"
)

// childEnv, set in the environment of this test binary, makes it run the
// salon command (its arguments in childArgs, separated by U+001F) instead of
// the tests: the replicas test starts real processes of the platform.
const (
	childEnv  = "SALON_TEST_CHILD"
	childArgs = "SALON_TEST_ARGS"
)

func init() {
	if os.Getenv(childEnv) == "" {
		return
	}
	ctx, stop := signalContext()
	code := run(ctx, strings.Split(os.Getenv(childArgs), "\x1f"), os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// child starts the salon command as a process of its own.
func child(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), childEnv+"=1", childArgs+"="+strings.Join(args, "\x1f")), env...)
	return cmd
}

// TestThreeReplicas runs three salon serve processes on one PostgreSQL and
// drives 10,000 mixed operations at all of them: widget bookings (with and
// without deposits), slots, cancellations, Telegram updates to any
// replica's webhook, panel pages with a session made on another replica,
// deposit payments through the fake YooKassa with notifications to any
// replica, and a CSV import of bookings. Afterwards: no overlapping active
// bookings, no duplicate ledger entry, the ledger equals the provider,
// every queued Telegram call made exactly once, every job run once.
func TestThreeReplicas(t *testing.T) {
	t.Parallel()
	conn := bookingtest.ConnString(t)
	ctx := bookingtest.System()
	pool := bookingtest.PoolFor(t, conn)
	svc := booking.New(pool)
	e := &bookingtest.Env{Pool: pool, Svc: svc, Clock: bookingtest.NewClock(time.Now())}
	salon := e.Salon(t, booking.Salon{Slug: "chain", Name: "Chain", Locale: "en", MinNoticeMin: 0, HorizonDays: 30, HoldMin: 15})
	cut := e.Service(t, salon, booking.SalonService{Name: "Cut", DurationMin: 30})
	colour := e.Service(t, salon, booking.SalonService{Name: "Colour", DurationMin: 60, Price: 300000, Deposit: 50000})
	day := salon.Today(time.Now()).AddDays(2)
	var masters []*booking.Master
	for range 6 {
		m := e.Master(t, salon, cut, colour)
		e.Shift(t, salon, m, day, 3, "08:00", "22:00")
		masters = append(masters, m)
	}
	if _, err := svc.CreateUser(ctx, salon.ID, "owner@chain.test", "owner-password", booking.RoleOwner); err != nil {
		t.Fatal(err)
	}
	tg := tgtest.NewServer(t)
	yk := psptest.New(t)
	const secret = "replica-webhook-secret"
	var bases []string
	for i := range 3 {
		addr := bookingtest.FreeAddr(t)
		base := "http://" + addr
		bases = append(bases, base)
		logs := &syncBuffer{}
		cmd := child(t, []string{"DATABASE_URL=" + conn, "SALON_HTTP_ADDR=" + addr, "SALON_PUBLIC_URL=" + base,
			"TELEGRAM_BOT_TOKEN=" + tg.Token, "TELEGRAM_API_URL=" + tg.URL, "TELEGRAM_WEBHOOK_SECRET=" + secret,
			"PAYMENT_PROVIDER=yookassa", "YOOKASSA_API_URL=" + yk.URL, "YOOKASSA_SHOP_ID=" + yk.ShopID, "YOOKASSA_SECRET_KEY=" + yk.Secret,
			"SALON_BOOKING_RATE_LIMIT=0"}, "serve")
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
			}
			if t.Failed() {
				t.Logf("replica %d log (tail): %s", i, tail(logs.String(), 3000))
			}
		})
		bookingtest.WaitFor(t, 60*time.Second, fmt.Sprintf("replica %d", i), func() bool {
			resp, err := http.Get(base + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		})
	}

	// The import, beside the traffic: a bookings file in a process of its own.
	var file strings.Builder
	file.WriteString("master,service,date,start,client_phone,client_name\n")
	ms, _ := svc.AllMasters(ctx, salon.ID)
	for k := range 200 {
		m := ms[k%len(ms)]
		at := bookingtest.At(salon, day.AddDays(1), "08:00").Add(time.Duration(k/len(ms)) * 30 * time.Minute)
		fmt.Fprintf(&file, "%s,Cut,%s,%s,+7998%07d,Imported\n", m.Name, at.In(salon.Location()).Format("2006-01-02"), at.In(salon.Location()).Format("15:04"), k)
	}
	csv := filepath.Join(t.TempDir(), "bookings.csv")
	if err := os.WriteFile(csv, []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	imp := child(t, []string{"DATABASE_URL=" + conn}, "import", "bookings", csv, "--salon", "chain")
	var impOut bytes.Buffer
	imp.Stdout, imp.Stderr = &impOut, &impOut
	if err := imp.Start(); err != nil {
		t.Fatal(err)
	}

	// A waiting list: 100 clients wait for a cut, each with one master on
	// one of the traffic's days in two hours of it, each reachable on
	// Telegram (a proven chat): a cancellation's freed time is offered to
	// those who want it, and told to them there.
	waitClient := &http.Client{Timeout: 20 * time.Second}
	for i := range 100 {
		d, from := day.AddDays((i/len(masters))%3), 8+2*((i/(3*len(masters)))%7)
		body := fmt.Sprintf(`{"service_id": %d, "master_id": %d, "from_date": %q, "to_date": %q, "times": [{"from": "%02d:00", "to": "%02d:00"}],
			"client": {"name": "Waiting %d", "phone": "+7995%07d"}}`, cut.ID, masters[i%len(masters)].ID, d, d, from, from+2, i, i)
		resp, err := waitClient.Post(bases[i%len(bases)]+"/api/v1/salons/chain/waitlist", "application/json", strings.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("joining the waiting list: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	// (No quiet hours: the offers go now, whenever the test runs.)
	if _, err := pool.Exec(ctx, `UPDATE salons SET quiet_from = '00:00', quiet_to = '00:00' WHERE id = $1`, salon.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO client_identities (salon_id, client_id, channel, external_id, verified_by)
		SELECT salon_id, client_id, 'telegram', (700000 + id)::text, 'contact' FROM waitlist_entries WHERE salon_id = $1`, salon.ID); err != nil {
		t.Fatal(err)
	}

	// The traffic.
	const total = 10_000
	var ops atomic.Int64
	var mu sync.Mutex
	counts := map[string]int{}
	bad := map[string]int{}
	type made struct {
		id    int64
		token string
	}
	var booked []made
	count := func(op string, status int) {
		mu.Lock()
		defer mu.Unlock()
		counts[op]++
		if status >= 500 && status != 503 || status == 0 {
			bad[fmt.Sprintf("%s %d", op, status)]++
		}
	}
	client := &http.Client{Timeout: 20 * time.Second}
	do := func(method, u, body string, headers ...string) (int, []byte) {
		req, _ := http.NewRequest(method, u, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	slotAt := func(r *rand.Rand) (int64, string) {
		m := masters[r.IntN(len(masters))]
		at := bookingtest.At(salon, day.AddDays(r.IntN(3)), "08:00").Add(time.Duration(r.IntN(28)) * 30 * time.Minute)
		return m.ID, at.Format(time.RFC3339)
	}
	var updateID atomic.Int64
	updateID.Store(100000)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 12 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			jar, _ := cookiejar.New(nil)
			panel := &http.Client{Jar: jar, Timeout: 20 * time.Second}
			csrf := ""
			for ops.Add(1) <= total {
				base := bases[r.IntN(len(bases))]
				switch p := r.IntN(100); {
				case p < 40: // a widget booking
					m, at := slotAt(r)
					st, raw := do("POST", base+"/api/v1/salons/chain/bookings", fmt.Sprintf(`{"service_id": %d, "master_id": %d,
						"starts_at": %q, "client": {"name": "Web", "phone": "+7997%07d"}}`, cut.ID, m, at, r.IntN(5000)))
					count("book", st)
					if st == 201 {
						var b struct {
							ID    int64  `json:"id"`
							Token string `json:"manage_token"`
						}
						_ = json.Unmarshal(raw, &b)
						mu.Lock()
						booked = append(booked, made{b.ID, b.Token})
						mu.Unlock()
					}
				case p < 50: // a deposit booking, paid, the provider notifying any replica
					m, at := slotAt(r)
					st, raw := do("POST", base+"/api/v1/salons/chain/bookings", fmt.Sprintf(`{"service_id": %d, "master_id": %d,
						"starts_at": %q, "client": {"name": "Payer", "phone": "+7996%07d"}}`, colour.ID, m, at, r.IntN(5000)))
					count("deposit", st)
					var b struct {
						Payment struct {
							URL string `json:"url"`
						} `json:"payment"`
					}
					if st == 201 && json.Unmarshal(raw, &b) == nil && b.Payment.URL != "" {
						id := b.Payment.URL[strings.LastIndex(b.Payment.URL, "/")+1:]
						if r.IntN(5) > 0 {
							yk.Pay(id)
						} else {
							yk.Decline(id)
						}
						st, _ := yk.Notify(bases[r.IntN(len(bases))]+"/webhooks/payments/yookassa", id)
						count("webhook", st)
					}
				case p < 60:
					m, _ := slotAt(r)
					st, _ := do("GET", fmt.Sprintf("%s/api/v1/salons/chain/slots?service_id=%d&master_id=%d&date=%s", base, cut.ID, m, day), "")
					count("slots", st)
				case p < 68: // cancel one of ours
					mu.Lock()
					var b made
					if len(booked) > 0 {
						k := r.IntN(len(booked))
						b = booked[k]
						booked = append(booked[:k], booked[k+1:]...)
					}
					mu.Unlock()
					if b.id != 0 {
						st, _ := do("POST", fmt.Sprintf("%s/api/v1/bookings/%d/cancel", base, b.id), "{}", "X-Manage-Token", b.token)
						count("cancel", st)
					}
				case p < 85: // Telegram, to any replica
					text := []string{"/start chain", "/my", "/help", "/book"}[r.IntN(4)]
					user := 5000 + r.IntN(40)
					body := fmt.Sprintf(`{"update_id": %d, "message": {"message_id": %d, "date": %d, "chat": {"id": %d, "type": "private"},
						"from": {"id": %d, "is_bot": false, "first_name": "U", "language_code": "en"}, "text": %q}}`,
						updateID.Add(1), r.IntN(1<<30), time.Now().Unix(), user, user, text)
					st, _ := do("POST", base+"/telegram/webhook", body, "X-Telegram-Bot-Api-Secret-Token", secret)
					count("telegram", st)
				default: // the panel: the session made on one replica works on the others
					if csrf == "" {
						resp, err := panel.PostForm(base+"/panel/login", url.Values{"email": {"owner@chain.test"}, "password": {"owner-password"}})
						if err == nil {
							raw, _ := io.ReadAll(resp.Body)
							resp.Body.Close()
							if m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(raw); m != nil {
								csrf = string(m[1])
							}
							count("panel-login", resp.StatusCode)
						}
						continue
					}
					resp, err := panel.Get(fmt.Sprintf("%s/panel/day/%s", base, day))
					if err != nil {
						count("panel", 0)
						continue
					}
					io.Copy(io.Discard, resp.Body) //nolint:errcheck
					resp.Body.Close()
					if resp.StatusCode != 200 {
						t.Errorf("panel day view on another replica: %d", resp.StatusCode)
					}
					count("panel", resp.StatusCode)
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if err := imp.Wait(); err != nil && imp.ProcessState.ExitCode() != exitRejected {
		t.Errorf("import: %v %s", err, impOut.String())
	}

	// One gift certificate of a colour's price, spent from all three
	// replicas at once (three requests to each, released together, each
	// for another master or time): one booking is paid with it, the others
	// are refused as exhausted, and its ledger has one reservation.
	certDay := day.AddDays(5)
	for _, m := range masters {
		e.Shift(t, salon, m, certDay, 1, "08:00", "22:00")
	}
	cert, err := svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: salon.ID, Kind: booking.BalanceCertificate, Amount: colour.Price})
	if err != nil {
		t.Fatal(err)
	}
	statuses := make([]string, 9)
	bookingtest.Race(9, func(i int) {
		at := bookingtest.At(salon, certDay, "10:00").Add(time.Duration(i/len(masters)) * 2 * time.Hour)
		st, raw := do("POST", bases[i%3]+"/api/v1/salons/chain/bookings", fmt.Sprintf(`{"service_id": %d, "master_id": %d,
			"starts_at": %q, "client": {"name": "Gift", "phone": "+7993%07d"}, "pay_with": {"certificate": %q}}`,
			colour.ID, masters[i%len(masters)].ID, at.Format(time.RFC3339), i, strings.ToLower(cert.Code)))
		var answer struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(raw, &answer)
		statuses[i] = strings.TrimSpace(fmt.Sprint(st, " ", answer.Error))
	})
	var reserved, remaining int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM balance_entries WHERE balance_id = $1 AND type = 'reserve'), remaining
		FROM balances WHERE id = $1`, cert.ID).Scan(&reserved, &remaining); err != nil {
		t.Fatal(err)
	}
	slices.Sort(statuses)
	want := append([]string{"201"}, slices.Repeat([]string{"409 balance_exhausted"}, 8)...)
	if !slices.Equal(statuses, want) || reserved != 1 || remaining != 0 {
		t.Errorf("one certificate from three replicas at once: answers %v, %d reservations, %d left", statuses, reserved, remaining)
	}
	t.Logf("one certificate, nine bookings at once on three replicas: answers %v; %d reservation", statuses, reserved)

	// The panel's upload page across replicas: upload to one, watch the dry
	// run on another, apply on the third.
	panelUpload(t, bases, masters[0], svc, salon, day.AddDays(10))

	// Let the background work settle: jobs, the outbox, payments in flight.
	var jobs, outbox, flight int
	settled := func() bool {
		_ = pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM river_job WHERE state IN ('available', 'running', 'retryable')
			AND kind NOT IN ('booking_remind', 'expire_holds', 'prune_idempotency_keys', 'complete_past_bookings', 'sweep_payments')),
			(SELECT count(*) FROM tg_outbox WHERE state = 'queued'),
			(SELECT count(*) FROM payment_sessions WHERE status IN ('registering', 'unknown', 'authorized', 'canceling', 'refunding'))`).
			Scan(&jobs, &outbox, &flight)
		return jobs == 0 && outbox == 0 && flight == 0
	}
	func() {
		defer func() {
			if t.Failed() {
				t.Logf("unsettled: %d jobs, %d Telegram messages queued, %d payments in flight", jobs, outbox, flight)
			}
		}()
		bookingtest.WaitFor(t, 240*time.Second, "the background work to settle (Telegram allows 25 messages a second)", settled)
	}()

	var overlaps, dupLedger, retried int
	var received, sent int64
	if err := pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM bookings a JOIN bookings b ON a.master_id = b.master_id AND a.id < b.id
		 WHERE a.status IN ('pending', 'confirmed') AND b.status IN ('pending', 'confirmed')
		   AND tstzrange(a.starts_at, booking_slot_end(a.starts_at, a.duration_min + a.buffer_min))
		    && tstzrange(b.starts_at, booking_slot_end(b.starts_at, b.duration_min + b.buffer_min))),
		(SELECT count(*) FROM (SELECT payment_session_id, entry_type FROM ledger_entries GROUP BY 1, 2 HAVING count(*) > 1) d),
		(SELECT count(*) FROM river_job WHERE attempt > 1),
		(SELECT COALESCE(sum(amount) FILTER (WHERE entry_type = 'deposit_received'), 0) * 100 FROM ledger_entries),
		(SELECT count(*) FROM tg_outbox WHERE state = 'sent')`).Scan(&overlaps, &dupLedger, &retried, &received, &sent); err != nil {
		t.Fatal(err)
	}
	captured, _ := yk.Totals()
	calls := 0
	for _, c := range tg.Calls() {
		switch {
		case (c.Method == "sendMessage" || c.Method == "editMessageText" || c.Method == "answerCallbackQuery") && c.Status == 200:
			calls++
		case c.Method == "editMessageReplyMarkup":
			calls++ // (a stale screen's buttons removed: tried once, whatever the answer)
		}
	}
	if overlaps != 0 {
		t.Errorf("%d overlapping active bookings", overlaps)
	}
	if dupLedger != 0 || received != captured {
		t.Errorf("%d duplicate ledger entries; ledger %d, provider captured %d", dupLedger, received, captured)
	}
	if int64(calls) != sent {
		t.Errorf("%d Telegram calls made for %d outbox entries sent", calls, sent)
	}
	if len(bad) > 0 {
		t.Errorf("failed requests: %v", bad)
	}
	// The waiting list: every offer told once on Telegram (one message row
	// sent, one call of the Bot API with its words), and how long the first
	// offer of each freed time took after the time freed.
	offers, offerMsgs, offerSent, offerDropped, freed, p50, p99, worst := waitDelays(t, pool, salon.ID)
	seen := map[string]int{}
	offerCalls := 0
	for _, c := range tg.Calls() {
		if c.Method == "sendMessage" && c.Status == 200 && strings.Contains(c.Params["text"], "A time you are waiting for is free") {
			offerCalls++
			seen[fmt.Sprintf("%d|%s", c.ChatID, c.Params["text"])]++
		}
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("an offer told %d times: %q", n, k)
		}
	}
	// (A message whose time was booked again before it went is dropped,
	// not sent: a client is never offered a time that is gone.)
	if offers == 0 || offerMsgs != offers || offerSent+offerDropped != offers || offerCalls != offerSent {
		t.Errorf("%d offers, %d messages of them (%d sent, %d dropped), %d Telegram calls: want a message per offer, sent or dropped, "+
			"and a call per message sent", offers, offerMsgs, offerSent, offerDropped, offerCalls)
	}
	if p99 > 1 {
		t.Errorf("the first offer of a freed time came %.3f s after it freed (p99), want at most 1 s", p99)
	}
	t.Logf("waiting list: %d freed times offered, %d offers, each told once on Telegram (%d calls; %d dropped, their time booked "+
		"again first); freed -> first offer p50 %.0f ms, p99 %.0f ms, max %.0f ms", freed, offers, offerCalls, offerDropped,
		p50*1000, p99*1000, worst*1000)

	var bookings, imported, entries int
	_ = pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE source = 'import'), (SELECT count(*) FROM ledger_entries) FROM bookings`).
		Scan(&bookings, &imported, &entries)
	t.Logf("%d operations over 3 replicas in %v (%.0f/s): %v; %d bookings (%d imported); 0 overlaps; %d ledger entries "+
		"equal to the provider (captured %s); %d Telegram calls for %d outbox entries; %d jobs retried; import: %s",
		total, took.Round(time.Millisecond), float64(total)/took.Seconds(), counts, bookings, imported, entries,
		booking.Money(captured).String(), calls, sent, retried, strings.TrimSpace(impOut.String()))
}

// waitDelays reads the waiting list's offers: how many, their messages
// (and how many sent), the freed times they were made of, and the delay
// from a time freeing to its first offer (seconds: p50, p99, max).
func waitDelays(t *testing.T, pool interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, salonID int64) (offers, msgs, sent, dropped, freed int, p50, p99, worst float64) {
	t.Helper()
	err := pool.QueryRow(context.Background(), `
		WITH first AS (
		    SELECT extract(epoch FROM min(o.created_at) - f.created_at)::float8 AS d
		    FROM waitlist_offers o JOIN waitlist_freed f ON f.id = o.freed_id
		    WHERE o.salon_id = $1 GROUP BY f.id, f.created_at
		)
		SELECT (SELECT count(*) FROM waitlist_offers WHERE salon_id = $1),
		       (SELECT count(*) FROM messages WHERE salon_id = $1 AND offer_id IS NOT NULL),
		       (SELECT count(*) FROM messages WHERE salon_id = $1 AND offer_id IS NOT NULL AND state = 'sent'),
		       (SELECT count(*) FROM messages WHERE salon_id = $1 AND offer_id IS NOT NULL AND state = 'dropped'),
		       (SELECT count(*) FROM first),
		       COALESCE((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY d) FROM first), 0),
		       COALESCE((SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY d) FROM first), 0),
		       COALESCE((SELECT max(d) FROM first), 0)`, salonID).Scan(&offers, &msgs, &sent, &dropped, &freed, &p50, &p99, &worst)
	if err != nil {
		t.Fatal(err)
	}
	return
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// panelUpload uploads a schedule on replica 0, reads its dry run on
// replica 1, applies it on replica 2 and sees it applied on replica 0.
func panelUpload(t *testing.T, bases []string, m *booking.Master, svc *booking.Service, salon *booking.Salon, day booking.Date) {
	t.Helper()
	ctx := bookingtest.System()
	ms, _ := svc.AllMasters(ctx, salon.ID)
	name := ""
	for _, x := range ms {
		if x.ID == m.ID {
			name = x.Name
		}
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	csrfRE := regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	page := func(resp *http.Response, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return string(raw)
	}
	body := page(c.PostForm(bases[0]+"/panel/login", url.Values{"email": {"owner@chain.test"}, "password": {"owner-password"}}))
	csrf := csrfRE.FindStringSubmatch(body)
	if csrf == nil {
		t.Fatalf("no login on replica 0")
	}
	// The cookie's path is /panel on every replica's host: copy it over.
	u0, _ := url.Parse(bases[0] + "/panel/")
	for _, b := range bases[1:] {
		u, _ := url.Parse(b + "/panel/")
		jar.SetCookies(u, jar.Cookies(u0))
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("csrf", csrf[1])
	_ = mw.WriteField("kind", "schedule")
	fw, _ := mw.CreateFormFile("file", "week.csv")
	fmt.Fprintf(fw, "master,date,start,end\n%s,%s,09:00,18:00\n", name, day)
	mw.Close()
	req, _ := http.NewRequest("POST", bases[0]+"/panel/import", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	noFollow := &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("upload: %v %v", resp, err)
	}
	resp.Body.Close()
	job := resp.Header.Get("Location")
	bookingtest.WaitFor(t, 30*time.Second, "the dry run, seen on replica 1", func() bool {
		return strings.Contains(page(c.Get(bases[1]+job)), `id="apply"`)
	})
	resp, err = noFollow.PostForm(bases[2]+job+"/apply", url.Values{"csrf": {csrf[1]}})
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("apply on replica 2: %v %v", resp, err)
	}
	resp.Body.Close()
	bookingtest.WaitFor(t, 30*time.Second, "the import applied, seen on replica 0", func() bool {
		return strings.Contains(page(c.Get(bases[0]+job)), "phase-applied")
	})
	// Applied once: a second apply is refused.
	resp, err = noFollow.PostForm(bases[1]+job+"/apply", url.Values{"csrf": {csrf[1]}})
	if err != nil || resp.StatusCode != http.StatusConflict {
		t.Errorf("second apply: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	sh, err := svc.Shifts(ctx, salon.ID, m.ID, day, 1)
	if err != nil || len(sh) != 1 {
		t.Errorf("the imported shift: %v %v", sh, err)
	}
}
