package widget_test

import (
	"io"
	"log/slog"
	"net"
	"net/http"
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
	h.RegisterOutbox(app, x.Text, x.Refunds)
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
	if resp.StatusCode != http.StatusOK || strings.Count(page, "balance_refunded") != 2 || !strings.Contains(page, "2,100") ||
		!strings.Contains(page, "900") {
		t.Fatalf("the outbox page: %d\n%s", resp.StatusCode, page)
	}
}
