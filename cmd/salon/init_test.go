package main

import (
	"bufio"
	"errors"
	"strings"
	"testing"

	"salon/booking"
	"salon/booking/bookingtest"
)

// salon init on a terminal checks each answer as it is given and asks
// again with the reason, offers a link name made of the salon's name, and
// keeps what was answered (helper-49 M2: a mistake found only after the
// password, everything typed lost, examples read as defaults).
func TestInitAsksAgainForWhatItRefuses(t *testing.T) {
	t.Parallel()
	e := bookingtest.New(t)
	ctx := bookingtest.System()
	if _, _, err := e.Svc.CreateSalonWithOwner(ctx, booking.Salon{Slug: "taken", Name: "Taken", Timezone: "Europe/Moscow"},
		"owner@taken.test", "long-enough"); err != nil {
		t.Fatal(err)
	}
	var name, slug, tz, email string
	check := func() map[string]string {
		out := map[string]string{}
		var ve *booking.ValidationError
		if err := e.Svc.CheckNewSalon(ctx, booking.Salon{Slug: slug, Name: name, Timezone: tz}, email); errors.As(err, &ve) {
			for k, v := range ve.Fields {
				out[k] = v.In("en")
			}
		}
		return out
	}
	qs := []question{
		{p: &name, field: "name", ask: "Salon name", example: "Studio Anna"},
		{p: &slug, field: "slug", ask: "Link name", example: "studio-anna", def: func() string { return slugOf(name) }},
		{p: &tz, field: "timezone", ask: "Time zone", example: "Europe/Moscow"},
		{p: &email, field: "email", ask: "Owner's email", example: "owner@example.com"},
	}
	// The name; Enter for the link name offered; a city for the zone, then
	// the zone; a taken e-mail, then a new one.
	answers := "Салон «Малахит»\n\nYekaterinburg\nAsia/Yekaterinburg\nOWNER@taken.test\nowner@malakhit.test\n"
	var out strings.Builder
	if err := askAll(bufio.NewReader(strings.NewReader(answers)), &out, true, qs, check); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if name != "Салон «Малахит»" || slug != "salon-malakhit" || tz != "Asia/Yekaterinburg" || email != "owner@malakhit.test" {
		t.Errorf("answers: %q %q %q %q", name, slug, tz, email)
	}
	said := out.String()
	for _, want := range []string{"Salon name (e.g. Studio Anna): ", "Link name [salon-malakhit]: ", "use an IANA time zone: Asia/Yekaterinburg?; again:",
		"a user with this email exists; again:"} {
		if !strings.Contains(said, want) {
			t.Errorf("init said %q; want %q in it", said, want)
		}
	}
	// A taken link name is asked again; five refusals end it.
	name, slug, tz, email = "Taken", "", "", ""
	err := askAll(bufio.NewReader(strings.NewReader(strings.Repeat("taken\n", 5))), &out, true, qs[1:2], check)
	if err == nil || !strings.Contains(err.Error(), "already taken") {
		t.Errorf("five taken link names: %v", err)
	}
	// The link name offered is a free one.
	if got := freeSlug(ctx, e.Svc, "Taken"); got != "taken-2" {
		t.Errorf("the link name offered for Taken: %q, want taken-2", got)
	}
	for in, want := range map[string]string{"Studio Anna": "studio-anna", "Барбершоп №1": "barbershop-1", "«»": "", "Щука & Ёж": "shchuka-ezh"} {
		if got := slugOf(in); got != want {
			t.Errorf("slugOf(%q) = %q, want %q", in, got, want)
		}
	}
}
