package widget_test

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"salon/booking"
	"salon/booking/bookingtest"
	"salon/internal/courier"
	"salon/widget"
)

// TestTheDevOutboxShowsEveryMailOfASale: the development outbox page lists
// a sale's refunds' e-mails each on its own, beside the messages of the
// database, none in another's place.
func TestTheDevOutboxShowsEveryMailOfASale(t *testing.T) {
	e := bookingtest.New(t)
	salon := e.Salon(t, booking.Salon{Slug: "studio", Name: "Studio"})
	x := &courier.Outbox{Base: "https://salon.test", Channel: booking.ChannelEmail}
	mail := booking.SaleMail{SaleID: 1, To: "maria@example.com", Lang: "en", Salon: *salon, Kind: booking.BalanceCertificate,
		Title: "Gift certificate", Units: 300000}
	for _, amount := range []booking.Money{210000, 90000} {
		m := mail
		m.Refund, m.Refunded, m.Price = amount, amount, 300000
		if _, err := x.DeliverSale(t.Context(), &m); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	app := widget.NewApp(log)
	h := widget.New(e.Svc, widget.Config{Log: log})
	h.Register(app)
	h.RegisterOutbox(app, x.Text, x.Extra)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck // ends at Shutdown
	t.Cleanup(func() { _ = app.ShutdownWithTimeout(5 * time.Second) })
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + ln.Addr().String() + widget.OutboxPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	page := string(body)
	articles := regexp.MustCompile(`(?s)<article class="message" id="(message--\d+)".*?</article>`).FindAllStringSubmatch(page, -1)
	if resp.StatusCode != http.StatusOK || len(articles) != 2 || articles[0][1] == articles[1][1] ||
		!strings.Contains(articles[0][0], "balance_refunded") || !strings.Contains(articles[0][0], "900") ||
		!strings.Contains(articles[1][0], "balance_refunded") || !strings.Contains(articles[1][0], "2,100") {
		t.Fatalf("the outbox page: %d\n%s", resp.StatusCode, page)
	}
}
