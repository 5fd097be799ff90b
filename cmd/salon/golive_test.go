package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"salon/booking/bookingtest"
	"salon/bot/tgtest"
	"salon/internal/browsertest"
)

// From an empty database: salon init, then only the panel in a browser (a
// service, a master, the weekly hours, the online booking page), to a
// booking link on which a client books.
func TestANewSalonGoesLiveFromThePanel(t *testing.T) {
	url := bookingtest.ConnString(t)
	var out syncBuffer
	if code := run(context.Background(), []string{"init", "--name", "Студия Анны", "--slug", "anna", "--tz", "Europe/Moscow",
		"--email", "owner@anna.test", "--password-stdin"}, envOf("DATABASE_URL", url), strings.NewReader("anna-secret\n"), &out, &out); code != 0 {
		t.Fatalf("init: %s", out.String())
	}
	addr := bookingtest.FreeAddr(t)
	base := "http://" + addr
	tg := tgtest.NewServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve"}, envOf("DATABASE_URL", url, "SALON_HTTP_ADDR", addr, "SALON_PUBLIC_URL", base,
			"PAYMENT_PROVIDER", "sandbox", "TELEGRAM_BOT_TOKEN", tg.Token, "TELEGRAM_API_URL", tg.URL), nil, &out, &out)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	bookingtest.WaitFor(t, 30*time.Second, "serve to answer", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	tab := browsertest.Tab(t, 1280, 900)
	step := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, scancel := context.WithTimeout(tab, 30*time.Second)
		defer scancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			diag, _ := chromedp.Run(tab, chromedp.Evaluate[string](`location.href + ' | ' + document.body.innerText.slice(0, 800)`))
			t.Fatalf("%s: %v\npage: %s\nserve: %s", what, err, diag, out.String())
		}
	}
	step("sign in",
		chromedp.Navigate(base+"/panel/login"),
		chromedp.SendKeys(chromedp.CSS(`input[name=email]`), "owner@anna.test"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "anna-secret"),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.CSS(`#setup`)),
	)
	step("add a service",
		chromedp.Click(chromedp.CSS(`#setup a[href="/panel/services"]`)),
		chromedp.SendKeys(chromedp.CSS(`form[action="/panel/services"] input[name=name]`), "Стрижка"),
		chromedp.SetValue(chromedp.CSS(`form[action="/panel/services"] input[name=price]`), "2 500 ₽"),
		chromedp.Submit(chromedp.CSS(`form[action="/panel/services"] input[name=name]`)),
		chromedp.WaitVisible(chromedp.CSS(`a[href^="/panel/services/"]`)),
	)
	step("add a master",
		chromedp.Navigate(base+"/panel/"),
		chromedp.Click(chromedp.CSS(`#setup a[href="/panel/masters"]`)),
		chromedp.SendKeys(chromedp.CSS(`form[action="/panel/masters"] input[name=name]`), "Анна"),
		chromedp.Submit(chromedp.CSS(`form[action="/panel/masters"] input[name=name]`)),
		chromedp.WaitVisible(chromedp.CSS(`#template`)),
	)
	step("set the working hours",
		chromedp.Navigate(base+"/panel/"),
		chromedp.Click(chromedp.CSS(`#setup a[href$="#template"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#template`)),
		chromedp.SetValue(chromedp.CSS(`#template input[name=start_1]`), "10:00"),
		chromedp.SetValue(chromedp.CSS(`#template input[name=end_1]`), "20:00"),
		chromedp.Click(chromedp.CSS(`#template button[data-fill-week]`)),
		chromedp.Submit(chromedp.CSS(`#template input[name=start_1]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.notice`)), // saved: the page the form went to
	)
	step("the checklist is done", chromedp.Navigate(base+"/panel/"), chromedp.WaitVisible(chromedp.CSS(`#grid`)))
	if n, _ := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('#setup').length`)); n != 0 {
		t.Fatal("the checklist stays once clients can book")
	}
	step("the online booking page", chromedp.Click(chromedp.CSS(`a[href="/panel/online"]`)), chromedp.WaitVisible(chromedp.CSS(`#widget-url`)))
	link, err := chromedp.Run(tab, chromedp.AttributeValue(chromedp.CSS(`#widget-url`), "href"))
	if err != nil || link.Value != base+"/w/anna" {
		t.Fatalf("the booking link: %v %v", link, err)
	}
	bot, err := chromedp.Run(tab, chromedp.AttributeValue(chromedp.CSS(`#bot-url`), "href"))
	if err != nil || bot.Value != "https://t.me/salon_test_bot?start=anna" {
		t.Errorf("the bot's link: %v %v", bot, err)
	}
	step("a client books on the link",
		chromedp.Navigate(link.Value),
		chromedp.Click(chromedp.CSS(`button[data-service-id]`)),
		chromedp.Click(chromedp.CSS(`#masters button[data-master-id="any"]`)),
		chromedp.Click(chromedp.CSS(`#days button.free`)),
		chromedp.Click(chromedp.CSS(`#times button`)),
		chromedp.SendKeys(chromedp.CSS(`#client-name`), "Первая клиентка"),
		chromedp.SendKeys(chromedp.CSS(`#client-phone`), "8 912 345-67-89"),
		chromedp.Click(chromedp.CSS(`#contact-next`)),
		chromedp.Click(chromedp.CSS(`#confirm`)),
		chromedp.WaitVisible(chromedp.CSS(`section[data-step="done"]`)),
	)
	pool := bookingtest.PoolFor(t, url)
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM bookings b JOIN salons s ON s.id = b.salon_id
		JOIN clients c ON c.id = b.client_id WHERE s.slug = 'anna' AND b.status = 'confirmed' AND c.phone = '+79123456789' AND b.price = 2500`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d bookings of the first client (%v)", n, err)
	}
}
