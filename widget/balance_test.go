package widget_test

import (
	"strings"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
)

func (r reply) num(key string) float64 { v, _ := r.body[key].(float64); return v }

// TestBalanceByItsCode: a certificate and a package read by their codes
// through the API (as the answer's schema says); an unknown code, or one
// of another salon, is 404; the code never reaches the log.
func TestBalanceByItsCode(t *testing.T) {
	s := newSite(t)
	sys := bookingtest.System()
	cert, err := s.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalanceCertificate, Amount: 300000})
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := s.Svc.IssueBalance(sys, booking.BalanceIssue{SalonID: s.salon.ID, Kind: booking.BalancePackage, ServiceIDs: []int64{s.svc.ID},
		Visits: 5, Client: booking.ClientInput{Name: "Regular", Phone: bookingtest.Phone()}, ValidUntil: testDay.AddDays(30)})
	if err != nil {
		t.Fatal(err)
	}
	r := s.do("GET", "/api/v1/salons/studio/balances/"+cert.Code, nil)
	if r.status != 200 || r.str("kind") != "certificate" || r.num("remaining") != 3000 {
		t.Fatalf("the certificate: %d %s", r.status, r.raw)
	}
	r = s.do("GET", "/api/v1/salons/studio/balances/"+strings.ToLower(pkg.Code), nil)
	if r.status != 200 || r.str("kind") != "package" || r.num("remaining") != 5 || !strings.HasPrefix(r.str("expires_at"), testDay.AddDays(31).String()) {
		t.Fatalf("the package: %d %s", r.status, r.raw)
	}
	if r := s.do("GET", "/api/v1/salons/studio/balances/ABCD-EFGH-JKMN", nil); r.status != 404 {
		t.Fatalf("an unknown code: %d", r.status)
	}
	s.Salon(t, booking.Salon{Slug: "rival"})
	if r := s.do("GET", "/api/v1/salons/rival/balances/"+cert.Code, nil); r.status != 404 {
		t.Fatalf("another salon's code: %d", r.status)
	}
}
