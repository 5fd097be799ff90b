package booking_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"salon/booking"
	"salon/booking/bookingtest"
)

// notSalonData are the methods of Service that read or change no salon's
// data: wiring, the clock, the provider's health.
var notSalonData = []string{"Now", "Pool", "Provider", "PaymentsDown"}

// TestEveryMethodAsksWhoIsAsking calls every exported method of
// booking.Service (found by reflection: a new method fails this test until
// it has a case) twice: with a context that names no caller, which must be
// refused (ErrForbidden) and change nothing; and as an owner of another
// salon, who must find nothing of this one (ErrNotFound), or be refused
// outright where the method is not a salon's staff's to call (the jobs',
// a chat identity's).
func TestEveryMethodAsksWhoIsAsking(t *testing.T) {
	f := setup(t)
	sys := bookingtest.System()
	// The salon asked about: a booking, its client, an owner and an upload.
	b := f.mustBook(t, f.req(f.masters[0], "11:00"))
	owner, err := f.Svc.CreateUser(sys, f.salon.ID, "owner@a.test", "password-a", booking.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	upload, err := f.Svc.SaveUpload(booking.As(context.Background(), booking.ByStaff(*owner)), "clients", "c.csv", strings.NewReader("name,phone\n"))
	if err != nil {
		t.Fatal(err)
	}
	// The other salon's owner.
	other := f.Salon(t, booking.Salon{})
	stranger, err := f.Svc.CreateUser(sys, other.ID, "owner@b.test", "password-b", booking.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	a, m, sv, day := f.salon.ID, f.masters[0].ID, f.svc.ID, f.day
	week := [7][]booking.ShiftInput{}

	// Each case calls its method with ctx; foreign is what the stranger
	// gets (ErrNotFound unless said).
	type call struct {
		run     func(ctx context.Context) error
		foreign error
	}
	e1 := func(_ any, err error) error { return err }
	e2 := func(_, _ any, err error) error { return err }
	cases := map[string]call{
		"AllMasters":     {run: func(ctx context.Context) error { return e1(f.Svc.AllMasters(ctx, a)) }},
		"AllServices":    {run: func(ctx context.Context) error { return e1(f.Svc.AllServices(ctx, a)) }},
		"ApplyWeek":      {run: func(ctx context.Context) error { return f.Svc.ApplyWeek(ctx, a, m, day, day.AddDays(6), week) }},
		"ApplyWeekToAll": {run: func(ctx context.Context) error { return f.Svc.ApplyWeekToAll(ctx, a, day, day.AddDays(6), week) }},
		"AuditActors":    {run: func(ctx context.Context) error { return e1(f.Svc.AuditActors(ctx, a)) }},
		"AuditLog":       {run: func(ctx context.Context) error { return e1(f.Svc.AuditLog(ctx, a, booking.AuditFilter{})) }},
		"Book":           {run: func(ctx context.Context) error { return e1(f.Svc.Book(ctx, f.req(f.masters[1], "12:00"))) }},
		"BookingByCalendarToken": {run: func(ctx context.Context) error {
			return e1(f.Svc.BookingByCalendarToken(ctx, "no-such-token"))
		}},
		"BookingCalendarToken": {run: func(ctx context.Context) error { return e1(f.Svc.BookingCalendarToken(ctx, b.ID)) }},
		"BookingView":          {run: func(ctx context.Context) error { return e1(f.Svc.BookingView(ctx, 0, b.ID)) }},
		"Calendar": {run: func(ctx context.Context) error {
			return e1(f.Svc.Calendar(ctx, booking.CalendarQuery{SalonID: a, First: day, Days: 1}))
		}},
		"CalendarVersion": {run: func(ctx context.Context) error {
			return e1(f.Svc.CalendarVersion(ctx, booking.CalendarQuery{SalonID: a, First: day, Days: 1}))
		}},
		"Cancel": {run: func(ctx context.Context) error {
			return e1(f.Svc.Cancel(ctx, booking.CancelRequest{BookingID: b.ID}))
		}},
		"CheckPayment":   {run: func(ctx context.Context) error { return e1(f.Svc.CheckPayment(ctx, 1)) }, foreign: booking.ErrForbidden},
		"ClaimApply":     {run: func(ctx context.Context) error { return f.Svc.ClaimApply(ctx, upload) }},
		"Client":         {run: func(ctx context.Context) error { return e1(f.Svc.Client(ctx, a, b.ClientID)) }},
		"ClientBookings": {run: func(ctx context.Context) error { return e1(f.Svc.ClientBookings(ctx, a, b.ClientID)) }},
		"ClientBookingsOn": {run: func(ctx context.Context) error {
			return e1(f.Svc.ClientBookingsOn(ctx, a, b.ClientID, b.StartsAt.Add(-time.Hour), b.StartsAt.Add(time.Hour)))
		}},
		"Rehearse": {run: func(ctx context.Context) error {
			return f.Svc.Rehearse(ctx, func(ctx context.Context) error {
				_, err := f.Svc.ImportServices(ctx, a, []booking.ServiceRow{{SalonService: booking.SalonService{Name: "Intruder", DurationMin: 30}}}, true)
				return err
			})
		}},
		"SetupOf":       {run: func(ctx context.Context) error { return e1(f.Svc.SetupOf(ctx, a)) }},
		"ClientByPhone": {run: func(ctx context.Context) error { return e1(f.Svc.ClientByPhone(ctx, a, "+79990000001")) }},
		"CompletePast":  {run: func(ctx context.Context) error { return e1(f.Svc.CompletePast(ctx)) }, foreign: booking.ErrForbidden},
		"CreateMaster": {run: func(ctx context.Context) error {
			return e1(f.Svc.CreateMaster(ctx, a, booking.Master{Name: "Intruder"}))
		}},
		"CreateSalonWithOwner": {run: func(ctx context.Context) error {
			_, _, err := f.Svc.CreateSalonWithOwner(ctx, booking.Salon{Slug: "intruder2", Name: "I", Timezone: "Europe/Moscow"}, "i@example.com", "long enough")
			return err
		}, foreign: booking.ErrForbidden},
		"CheckNewSalon": {run: func(ctx context.Context) error {
			return f.Svc.CheckNewSalon(ctx, booking.Salon{Slug: "intruder3", Name: "I", Timezone: "Europe/Moscow"}, "i3@example.com")
		}, foreign: booking.ErrForbidden},
		"CreateSalon": {run: func(ctx context.Context) error {
			return e1(f.Svc.CreateSalon(ctx, booking.Salon{Slug: "intruder", Name: "I", Timezone: "Europe/Moscow"}))
		}, foreign: booking.ErrForbidden},
		"CreateService": {run: func(ctx context.Context) error {
			return e1(f.Svc.CreateService(ctx, a, booking.SalonService{Name: "Intrusion", DurationMin: 30}))
		}},
		"CreateUser": {run: func(ctx context.Context) error {
			return e1(f.Svc.CreateUser(ctx, a, "intruder@a.test", "password-x", booking.RoleOwner))
		}, foreign: booking.ErrForbidden},
		"DeleteUser": {run: func(ctx context.Context) error { return f.Svc.DeleteUser(ctx, a, owner.ID) }},
		"InviteUser": {run: func(ctx context.Context) error {
			return e1(f.Svc.InviteUser(ctx, a, "intruder@a.test", booking.RoleOwner))
		}},
		"Invitations":      {run: func(ctx context.Context) error { return e1(f.Svc.Invitations(ctx, a)) }},
		"RevokeInvitation": {run: func(ctx context.Context) error { return f.Svc.RevokeInvitation(ctx, a, 1) }},
		// The code is the credential: an unknown one opens nothing.
		"InvitationByCode": {run: func(ctx context.Context) error { return e1(f.Svc.InvitationByCode(ctx, "no-such-code")) }},
		"AcceptInvitation": {run: func(ctx context.Context) error {
			_, _, err := f.Svc.AcceptInvitation(ctx, "no-such-code", "long-enough-password")
			return err
		}},
		"EachBooking": {run: func(ctx context.Context) error {
			return f.Svc.EachBooking(ctx, a, func(booking.Listing) error { return nil })
		}},
		"EachClient": {run: func(ctx context.Context) error {
			return f.Svc.EachClient(ctx, a, func(booking.Client, string) error { return nil })
		}},
		"EachShift": {run: func(ctx context.Context) error {
			return f.Svc.EachShift(ctx, a, func(string, booking.Shift) error { return nil })
		}},
		"EraseClient":    {run: func(ctx context.Context) error { return e1(f.Svc.EraseClient(ctx, a, "", b.ClientID)) }},
		"ExpireHolds":    {run: func(ctx context.Context) error { return e1(f.Svc.ExpireHolds(ctx)) }, foreign: booking.ErrForbidden},
		"ExportClient":   {run: func(ctx context.Context) error { return e1(f.Svc.ExportClient(ctx, a, "", b.ClientID)) }},
		"GetUpload":      {run: func(ctx context.Context) error { return e1(f.Svc.GetUpload(ctx, upload)) }},
		"HasCalendar":    {run: func(ctx context.Context) error { return e1(f.Svc.HasCalendar(ctx, a, m)) }},
		"History":        {run: func(ctx context.Context) error { return e1(f.Svc.History(ctx, a, b.ID)) }},
		"IdentityClient": {run: func(ctx context.Context) error { return e1(f.Svc.IdentityClient(ctx, a)) }, foreign: booking.ErrForbidden},
		"ImportBookings": {run: func(ctx context.Context) error {
			return e1(f.Svc.ImportBookings(ctx, a, []booking.BookingRow{{Master: "x", Service: "y"}}, true))
		}},
		"ImportClients": {run: func(ctx context.Context) error {
			return e1(f.Svc.ImportClients(ctx, a, []booking.ClientRow{{Name: "X", Phone: "+79990000000"}}, true))
		}},
		"ImportMasters": {run: func(ctx context.Context) error {
			return e1(f.Svc.ImportMasters(ctx, a, []booking.MasterRow{{Name: "X"}}, true))
		}},
		"ImportSchedule": {run: func(ctx context.Context) error {
			return e1(f.Svc.ImportSchedule(ctx, a, []booking.DayRow{{Master: "x", Date: day}}, true))
		}},
		"ImportServices": {run: func(ctx context.Context) error {
			return e1(f.Svc.ImportServices(ctx, a, []booking.ServiceRow{{SalonService: booking.SalonService{Name: "X", DurationMin: 30}}}, true))
		}},
		"Ledger":     {run: func(ctx context.Context) error { return e1(f.Svc.Ledger(ctx, a, day, 1)) }},
		"LinkMaster": {run: func(ctx context.Context) error { return e1(f.Svc.LinkMaster(ctx, "NOSUCHCODE")) }, foreign: booking.ErrForbidden},
		// A wrong password: the credential is the argument.
		"Login": {run: func(ctx context.Context) error {
			_, _, err := f.Svc.Login(ctx, "owner@a.test", "wrong", "192.0.2.9")
			return err
		}, foreign: booking.ErrForbidden},
		// Ending a session needs only its id; an unknown one is no error.
		"Logout":           {run: func(ctx context.Context) error { return f.Svc.Logout(ctx, "no-such-session") }, foreign: nil},
		"MarkCompleted":    {run: func(ctx context.Context) error { return e1(f.Svc.MarkCompleted(ctx, b.ID)) }},
		"MarkNoShow":       {run: func(ctx context.Context) error { return e1(f.Svc.MarkNoShow(ctx, b.ID)) }},
		"MasterByID":       {run: func(ctx context.Context) error { return e1(f.Svc.MasterByID(ctx, a, m)) }},
		"MasterFeed":       {run: func(ctx context.Context) error { return e1(f.Svc.MasterFeed(ctx, "no-such-token")) }},
		"Masters":          {run: func(ctx context.Context) error { return e1(f.Svc.Masters(ctx, a, 0)) }},
		"NewCalendarToken": {run: func(ctx context.Context) error { return e1(f.Svc.NewCalendarToken(ctx, a, m)) }},
		"NewLinkCode":      {run: func(ctx context.Context) error { return e2(f.Svc.NewLinkCode(ctx, a, m)) }},
		"PaymentNotified": {run: func(ctx context.Context) error {
			return e1(f.Svc.PaymentNotified(ctx, "yookassa", "no-such-payment"))
		}},
		"PaymentOf": {run: func(ctx context.Context) error { return e1(f.Svc.PaymentOf(ctx, a, b.ID, false)) }},
		"PaymentReturn": {run: func(ctx context.Context) error {
			_, _, err := f.Svc.PaymentReturn(ctx, "no-such-reference")
			return err
		}},
		"PayAgain": {run: func(ctx context.Context) error {
			_, _, err := f.Svc.PayAgain(ctx, "no-such-reference", nil)
			return err
		}},
		"Payments": {run: func(ctx context.Context) error { return e1(f.Svc.Payments(ctx, a, day, 1)) }},
		"PruneIdempotencyKeys": {run: func(ctx context.Context) error {
			return e1(f.Svc.PruneIdempotencyKeys(ctx, time.Hour))
		}, foreign: booking.ErrForbidden},
		"RefundDeposit":       {run: func(ctx context.Context) error { return e1(f.Svc.RefundDeposit(ctx, a, b.ID)) }},
		"RefundDepositPart":   {run: func(ctx context.Context) error { return e1(f.Svc.RefundDepositPart(ctx, a, b.ID, 100)) }},
		"Attention":           {run: func(ctx context.Context) error { return e1(f.Svc.Attention(ctx, a)) }},
		"PaymentHistory":      {run: func(ctx context.Context) error { return e1(f.Svc.PaymentHistory(ctx, a, b.ID)) }},
		"RetryPayment":        {run: func(ctx context.Context) error { return e1(f.Svc.RetryPayment(ctx, a, 1)) }},
		"ReleasePayment":      {run: func(ctx context.Context) error { return e1(f.Svc.ReleasePayment(ctx, a, 1)) }},
		"MarkDepositRefunded": {run: func(ctx context.Context) error { return e1(f.Svc.MarkDepositRefunded(ctx, a, 1)) }},
		"MarkDepositPaid":     {run: func(ctx context.Context) error { return e1(f.Svc.MarkDepositPaid(ctx, a, b.ID)) }},
		"DepositHeld": {run: func(ctx context.Context) error {
			_, _, err := f.Svc.DepositHeld(ctx, a, b.ID)
			return err
		}},
		"PayLink": {run: func(ctx context.Context) error {
			_, _, err := f.Svc.PayLink(ctx, a, b.ID)
			return err
		}},
		"PayByLink": {run: func(ctx context.Context) error { return e1(f.Svc.PayByLink(ctx, "no-such-token", nil)) }},
		"Remind":    {run: func(ctx context.Context) error { return e1(f.Svc.Remind(ctx)) }, foreign: booking.ErrForbidden},
		"Reschedule": {run: func(ctx context.Context) error {
			return e1(f.Svc.Reschedule(ctx, booking.RescheduleRequest{BookingID: b.ID, StartsAt: f.at("15:00")}))
		}},
		"RevokeCalendar": {run: func(ctx context.Context) error { return f.Svc.RevokeCalendar(ctx, a, m) }},
		"Salon":          {run: func(ctx context.Context) error { return e1(f.Svc.Salon(ctx, a)) }},
		"SalonBySlug":    {run: func(ctx context.Context) error { return e1(f.Svc.SalonBySlug(ctx, f.salon.Slug)) }},
		"Salons":         {run: func(ctx context.Context) error { return e1(f.Svc.Salons(ctx, 10)) }, foreign: booking.ErrForbidden},
		// An upload is the caller's own: the stranger's lands in their salon.
		"SaveUpload": {run: func(ctx context.Context) error {
			return e1(f.Svc.SaveUpload(ctx, "clients", "x.csv", strings.NewReader("name,phone\n")))
		}, foreign: nil},
		"SearchClients": {run: func(ctx context.Context) error { return e1(f.Svc.SearchClients(ctx, a, "Client")) }},
		"ServiceByID":   {run: func(ctx context.Context) error { return e1(f.Svc.ServiceByID(ctx, a, sv)) }},
		"Services":      {run: func(ctx context.Context) error { return e1(f.Svc.Services(ctx, a)) }},
		"SessionUser":   {run: func(ctx context.Context) error { return e1(f.Svc.SessionUser(ctx, "no-such-session")) }},
		"Settings":      {run: func(ctx context.Context) error { return e1(f.Svc.Settings(ctx, a)) }},
		"SetOffers": {run: func(ctx context.Context) error {
			return f.Svc.SetOffers(ctx, a, m, []booking.Offer{{ServiceID: sv}})
		}},
		"SetSchedule": {run: func(ctx context.Context) error {
			return f.Svc.SetSchedule(ctx, a, m, []booking.DaySchedule{{Date: day.AddDays(5)}})
		}},
		"SetShifts": {run: func(ctx context.Context) error { return f.Svc.SetShifts(ctx, a, m, day.AddDays(5), nil) }},
		// A user's language is their own.
		"SetUserLang": {run: func(ctx context.Context) error { return f.Svc.SetUserLang(ctx, "en") }, foreign: nil},
		"Shifts":      {run: func(ctx context.Context) error { return e1(f.Svc.Shifts(ctx, a, m, day, 1)) }},
		"Slots": {run: func(ctx context.Context) error {
			return e1(f.Svc.Slots(ctx, booking.SlotQuery{SalonID: a, ServiceID: sv, From: day}))
		}},
		"JoinWaitlist": {run: func(ctx context.Context) error {
			return e1(f.Svc.JoinWaitlist(ctx, booking.WaitRequest{SalonID: a, ServiceID: sv, From: day, To: day,
				Client: booking.ClientInput{Name: "W", Phone: "+79990000077"}}))
		}},
		"WaitlistEntry": {run: func(ctx context.Context) error { return e1(f.Svc.WaitlistEntry(ctx, 1)) }},
		"LeaveWaitlist": {run: func(ctx context.Context) error { return e1(f.Svc.LeaveWaitlist(ctx, 1)) }},
		"AcceptOffer":   {run: func(ctx context.Context) error { return e1(f.Svc.AcceptOffer(ctx, 1, 1)) }},
		"OfferFreed":    {run: func(ctx context.Context) error { return e1(f.Svc.OfferFreed(ctx)) }, foreign: booking.ErrForbidden},
		"IssueBalance": {run: func(ctx context.Context) error {
			return e1(f.Svc.IssueBalance(ctx, booking.BalanceIssue{SalonID: a, Kind: booking.BalanceCertificate, Amount: 100}))
		}},
		"BalanceByCode": {run: func(ctx context.Context) error { return e1(f.Svc.BalanceByCode(ctx, a, "ABCD-EFGH-JKMN")) }},
		"CheckBalance": {run: func(ctx context.Context) error {
			return e1(f.Svc.CheckBalance(ctx, a, "ABCD-EFGH-JKMN", booking.BalanceUse{Phone: "+79990000079"}))
		}},
		"RenewBalanceCode": {run: func(ctx context.Context) error { return e1(f.Svc.RenewBalanceCode(ctx, a, 1, "")) }},
		"Balances":         {run: func(ctx context.Context) error { return e1(f.Svc.Balances(ctx, a)) }},
		"BalanceOf":        {run: func(ctx context.Context) error { return e1(f.Svc.BalanceOf(ctx, a, 1)) }},
		"BalanceLedger":    {run: func(ctx context.Context) error { return e1(f.Svc.BalanceLedger(ctx, a, 1)) }},
		"BalanceMoneyOf":   {run: func(ctx context.Context) error { return e1(f.Svc.BalanceMoneyOf(ctx, a, day)) }},
		"ApplyBalance": {run: func(ctx context.Context) error {
			return e1(f.Svc.ApplyBalance(ctx, a, 1, booking.PayWith{Kind: booking.BalancePackage, BalanceID: 1}))
		}},
		"ClientBalances": {run: func(ctx context.Context) error {
			return e1(f.Svc.ClientBalances(ctx, a, 1, booking.Date{Year: 2030, Month: 1, Day: 1}, []int64{1}))
		}},
		"ClientPackages":     {run: func(ctx context.Context) error { return e1(f.Svc.ClientPackages(ctx, a, 1)) }},
		"BalanceRefundQuote": {run: func(ctx context.Context) error { return e1(f.Svc.BalanceRefundQuote(ctx, a, 1)) }},
		"OwnBalances":        {run: func(ctx context.Context) error { return e1(f.Svc.OwnBalances(ctx, a, "")) }, foreign: booking.ErrForbidden},
		"RefundBalance":      {run: func(ctx context.Context) error { return e1(f.Svc.RefundBalance(ctx, a, 1, "")) }},
		"AddBalanceOffer": {run: func(ctx context.Context) error {
			return e1(f.Svc.AddBalanceOffer(ctx, booking.BalanceOffer{SalonID: a, Kind: booking.BalanceCertificate, Title: "C", Amount: 100, Price: 100}))
		}},
		"SetBalanceOfferActive": {run: func(ctx context.Context) error { return f.Svc.SetBalanceOfferActive(ctx, a, 1, false) }},
		"BalanceOffers":         {run: func(ctx context.Context) error { return e1(f.Svc.BalanceOffers(ctx, a, true)) }},
		"BuyBalance": {run: func(ctx context.Context) error {
			return e1(f.Svc.BuyBalance(ctx, booking.BalancePurchase{SalonID: a, OfferID: 1,
				Buyer: booking.ClientInput{Name: "B", Phone: "+79990000078", Email: "b@example.com"}}, nil))
		}},
		"CheckSale":             {run: func(ctx context.Context) error { return e1(f.Svc.CheckSale(ctx, 1)) }, foreign: booking.ErrForbidden},
		"SaleReturn":            {run: func(ctx context.Context) error { return e1(f.Svc.SaleReturn(ctx, "no-such-reference", "")) }},
		"ReturnAt":              {run: func(ctx context.Context) error { return f.Svc.ReturnAt(ctx, a, "no-such-reference") }},
		"BalanceSales":          {run: func(ctx context.Context) error { return e1(f.Svc.BalanceSales(ctx, a)) }},
		"SalesNeedingAttention": {run: func(ctx context.Context) error { return e1(f.Svc.SalesNeedingAttention(ctx, a)) }},
		"SaleOfBalance":         {run: func(ctx context.Context) error { return e1(f.Svc.SaleOfBalance(ctx, a, 1)) }},
		"ResendBalanceCode":     {run: func(ctx context.Context) error { return e1(f.Svc.ResendBalanceCode(ctx, a, 1)) }},
		"RetrySaleRefund":       {run: func(ctx context.Context) error { return e1(f.Svc.RetrySaleRefund(ctx, a, 1)) }},
		"MarkSaleRefunded":      {run: func(ctx context.Context) error { return e1(f.Svc.MarkSaleRefunded(ctx, a, 1)) }},
		"WaitlistOn":            {run: func(ctx context.Context) error { return e1(f.Svc.WaitlistOn(ctx, a, day)) }},
		"OfferTime":             {run: func(ctx context.Context) error { return e1(f.Svc.OfferTime(ctx, 1, 1, time.Now())) }},
		"WaitlistFillOf":        {run: func(ctx context.Context) error { return e1(f.Svc.WaitlistFillOf(ctx, a)) }},
		"OpenOfferLink":         {run: func(ctx context.Context) error { return e1(f.Svc.OpenOfferLink(ctx, "no-such-token")) }},
		"AcceptOfferLink":       {run: func(ctx context.Context) error { return e1(f.Svc.AcceptOfferLink(ctx, "no-such-token")) }},
		"VisitSlots": {run: func(ctx context.Context) error {
			return e1(f.Svc.VisitSlots(ctx, booking.VisitSlotQuery{SalonID: a, Items: []booking.VisitItem{{ServiceID: sv}}, From: day}))
		}},
		"SetTogether":       {run: func(ctx context.Context) error { return f.Svc.SetTogether(ctx, a, sv, []int64{sv + 1}) }},
		"TogetherWith":      {run: func(ctx context.Context) error { return e1(f.Svc.TogetherWith(ctx, a, sv)) }},
		"StartPayment":      {run: func(ctx context.Context) error { return e1(f.Svc.StartPayment(ctx, b.ID, nil)) }},
		"ReconcilePayments": {run: func(ctx context.Context) error { return e1(f.Svc.ReconcilePayments(ctx)) }, foreign: booking.ErrForbidden},
		"SweepPayments":     {run: func(ctx context.Context) error { return e1(f.Svc.SweepPayments(ctx)) }, foreign: booking.ErrForbidden},
		"UpcomingBookings": {run: func(ctx context.Context) error {
			return e1(f.Svc.UpcomingBookings(ctx, f.Clock.Now()))
		}, foreign: booking.ErrForbidden},
		"UpdateClient": {run: func(ctx context.Context) error {
			return e1(f.Svc.UpdateClient(ctx, a, b.ClientID, "Renamed", ""))
		}},
		"UpdateMaster": {run: func(ctx context.Context) error {
			return e1(f.Svc.UpdateMaster(ctx, a, booking.Master{ID: m, Name: "Renamed", Active: true}))
		}},
		"SendSettlementReceipts": {run: func(ctx context.Context) error { return e1(f.Svc.SendSettlementReceipts(ctx)) }, foreign: booking.ErrForbidden},
		"ReceiptSettingsOf":      {run: func(ctx context.Context) error { return e1(f.Svc.ReceiptSettingsOf(ctx, a)) }},
		"SetReceiptSettings": {run: func(ctx context.Context) error {
			return f.Svc.SetReceiptSettings(ctx, a, booking.ReceiptSettings{VatCode: 1})
		}},
		"UpdateSalon": {run: func(ctx context.Context) error {
			s := *f.salon
			s.Name = "Renamed"
			return e1(f.Svc.UpdateSalon(ctx, s))
		}},
		"UpdateService": {run: func(ctx context.Context) error {
			return e1(f.Svc.UpdateService(ctx, a, booking.SalonService{ID: sv, Name: "Renamed", DurationMin: 60, Active: true}))
		}},
		"UploadDone": {run: func(ctx context.Context) error {
			return f.Svc.UploadDone(ctx, upload, "failed", nil, nil, "stopped")
		}},
		"UploadFile":     {run: func(ctx context.Context) error { return e1(f.Svc.UploadFile(ctx, upload)) }},
		"UploadProgress": {run: func(ctx context.Context) error { return f.Svc.UploadProgress(ctx, upload, 1, 1) }},
		"Users":          {run: func(ctx context.Context) error { return e1(f.Svc.Users(ctx, a)) }},
		// The message layer: a link's token is its credential; a chat
		// claims a deep link; only a client confirms they will come.
		"ClaimTelegramLink": {run: func(ctx context.Context) error { return e1(f.Svc.ClaimTelegramLink(ctx, "no-such-token")) }, foreign: booking.ErrForbidden},
		"ConfirmAttendance": {run: func(ctx context.Context) error {
			_, _, err := f.Svc.ConfirmAttendance(ctx, a, b.ID)
			return err
		}, foreign: booking.ErrForbidden},
		"FailedMessages":    {run: func(ctx context.Context) error { return e1(f.Svc.FailedMessages(ctx, a, 10)) }},
		"MessageSettingsOf": {run: func(ctx context.Context) error { return e1(f.Svc.MessageSettingsOf(ctx, a)) }},
		"MessagesOf":        {run: func(ctx context.Context) error { return e1(f.Svc.MessagesOf(ctx, a, b.ID)) }},
		"OpenLink":          {run: func(ctx context.Context) error { return e1(f.Svc.OpenLink(ctx, "no-such-token")) }},
		"Outbox":            {run: func(ctx context.Context) error { return e1(f.Svc.Outbox(ctx, 10)) }, foreign: booking.ErrForbidden},
		"RetryMessage":      {run: func(ctx context.Context) error { return f.Svc.RetryMessage(ctx, a, 1) }},
		"SendMessages":      {run: func(ctx context.Context) error { return e1(f.Svc.SendMessages(ctx)) }, foreign: booking.ErrForbidden},
		"RunMessages":       {run: func(ctx context.Context) error { return f.Svc.RunMessages(ctx, time.Second) }, foreign: booking.ErrForbidden},
		"TelegramLink":      {run: func(ctx context.Context) error { return e1(f.Svc.TelegramLink(ctx, a, b.ID)) }},
		"TrackDeliveries":   {run: func(ctx context.Context) error { return e1(f.Svc.TrackDeliveries(ctx)) }, foreign: booking.ErrForbidden},
		"UpdateMessageSettings": {run: func(ctx context.Context) error {
			return e1(f.Svc.UpdateMessageSettings(ctx, a, booking.MessageSettings{QuietFrom: "22:00", QuietTo: "08:00"}))
		}},
		"UseLink":        {run: func(ctx context.Context) error { return e1(f.Svc.UseLink(ctx, "no-such-token")) }},
		"ReminderEffect": {run: func(ctx context.Context) error { return e1(f.Svc.ReminderEffect(ctx, a, 3)) }},
		"ChannelsOf":     {run: func(ctx context.Context) error { return e1(f.Svc.ChannelsOf(ctx, a, b.ClientID)) }},
		"SetClientChannels": {run: func(ctx context.Context) error {
			return f.Svc.SetClientChannels(ctx, a, b.ClientID, true, true)
		}},
	}
	// Where the stranger gets nothing but ErrNotFound was not said above,
	// it is the rule.
	for name, c := range cases {
		if c.foreign == nil && !slices.Contains([]string{"Logout", "SaveUpload", "SetUserLang"}, name) {
			c.foreign = booking.ErrNotFound
			cases[name] = c
		}
	}

	typ := reflect.TypeFor[*booking.Service]()
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		if _, ok := cases[name]; !ok && !slices.Contains(notSalonData, name) {
			t.Errorf("Service.%s has no case here: say who may call it, and add it", name)
		}
	}
	before := everyTable(t, f)
	for name, c := range cases {
		if err := c.run(context.Background()); !errors.Is(err, booking.ErrForbidden) {
			t.Errorf("%s with nobody asking: %v, want ErrForbidden", name, err)
		}
	}
	if after := everyTable(t, f); !reflect.DeepEqual(before, after) {
		t.Errorf("calls with nobody asking wrote rows: %v -> %v", before, after)
	}
	foreign := booking.As(context.Background(), booking.ByStaff(*stranger))
	for name, c := range cases {
		err := c.run(foreign)
		if c.foreign == nil {
			if err != nil {
				t.Errorf("%s as another salon's owner: %v, want it done on their own", name, err)
			}
			continue
		}
		if !errors.Is(err, c.foreign) || (c.foreign == booking.ErrForbidden && errors.Is(err, booking.ErrNotFound)) {
			t.Errorf("%s as another salon's owner: %v, want %v", name, err, c.foreign)
		}
	}
	// Nothing of this salon changed for the stranger.
	if v := f.get(t, b.ID); v.Status != booking.StatusConfirmed || !v.StartsAt.Equal(b.StartsAt) {
		t.Errorf("the stranger changed the booking: %+v", v.Booking)
	}
	if s, err := f.Svc.Salon(sys, a); err != nil || s.Name != f.salon.Name {
		t.Errorf("the stranger renamed the salon: %v %v", s, err)
	}
}

// everyTable is the content of every table of the schema, each as one
// text (its rows as JSON, sorted).
func everyTable(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	ctx := context.Background()
	rows, err := f.Pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, table := range tables {
		var text string
		if err := f.Pool.QueryRow(ctx, `SELECT COALESCE(string_agg(j::text, E'\n' ORDER BY j::text), '')
			FROM (SELECT to_jsonb(x) AS j FROM `+pgx.Identifier{table}.Sanitize()+` x) t`).Scan(&text); err != nil {
			t.Fatal(err)
		}
		out[table] = text
	}
	return out
}
