package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"salon/booking"
	"salon/i18n"
)

// cmdBalance is `salon balance issue`: a gift certificate (--amount) or a
// package (--service, --visits, --phone), recorded as paid in the salon;
// its code, shown this once, alone on stdout.
func cmdBalance(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	const use = "usage: salon balance issue --salon SLUG --kind certificate --amount A | " +
		"--kind package --service NAME --visits N --phone PHONE [--name NAME] [--valid-until YYYY-MM-DD] [--price P]"
	if len(args) == 0 || args[0] != "issue" {
		return usagef("%s", use)
	}
	fs := newFlagSet("balance issue")
	slug := fs.String("salon", "", "salon slug")
	kind := fs.String("kind", "", "certificate or package")
	amount := fs.String("amount", "", "a certificate's amount, in the salon's currency (1500, 1 500,50)")
	service := fs.String("service", "", "a package's service (its name; several: comma-separated)")
	visits := fs.Int("visits", 0, "a package's visits")
	phone := fs.String("phone", "", "a package's client")
	name := fs.String("name", "", "the client's name, for a new client")
	until := fs.String("valid-until", "", "the last day it is good for (YYYY-MM-DD; default: no end)")
	price := fs.String("price", "", "what the client paid for it (optional: a refund then says how much to pay back)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *slug == "" || *kind == "" {
		return usagef("%s", use)
	}
	svc, s, closeDB, err := openSalon(ctx, getenv, *slug)
	if err != nil {
		return err
	}
	defer closeDB()
	// (No name: a client the salon knows by the phone keeps theirs; a new
	// one is refused, named.)
	in := booking.BalanceIssue{SalonID: s.ID, Kind: booking.BalanceKind(*kind), Visits: *visits,
		Client: booking.ClientInput{Name: *name, Phone: *phone}}
	if *price != "" {
		if in.Price, err = booking.ParseMoneyIn(*price, s.Currency); err != nil {
			return &booking.ValidationError{Fields: map[string]i18n.Text{"--price": i18n.Of(err)}}
		}
	}
	if *until != "" {
		if in.ValidUntil, err = booking.ParseDate(*until); err != nil {
			return booking.Invalid("--valid-until", "use YYYY-MM-DD")
		}
	}
	switch in.Kind {
	case booking.BalanceCertificate:
		if *service != "" {
			return booking.Invalid("--service", "a certificate holds an amount, not visits")
		}
		if in.Amount, err = booking.ParseMoneyIn(*amount, s.Currency); err != nil {
			return &booking.ValidationError{Fields: map[string]i18n.Text{"--amount": i18n.Of(err)}}
		}
	case booking.BalancePackage:
		if *amount != "" {
			return booking.Invalid("--amount", "a package holds visits, not an amount")
		}
		list, err := svc.Services(ctx, s.ID)
		if err != nil {
			return err
		}
		for _, want := range strings.Split(*service, ",") {
			found := false
			for _, sv := range list {
				if strings.EqualFold(sv.Name, strings.TrimSpace(want)) {
					in.ServiceIDs, found = append(in.ServiceIDs, sv.ID), true
				}
			}
			if !found {
				return booking.Invalid("--service", "no service %q at the salon", strings.TrimSpace(want))
			}
		}
	}
	b, err := svc.IssueBalance(booking.As(ctx, booking.ByCommand("salon balance issue")), in)
	if err != nil {
		return asFlags(err, issueFlags)
	}
	fmt.Fprintln(stdout, b.Code)
	return nil
}

// issueFlags are the flags of balance issue that carry the fields the
// core names.
var issueFlags = map[string]string{"kind": "--kind", "amount": "--amount", "visits": "--visits", "service_id": "--service",
	"client.name": "--name", "client.phone": "--phone", "valid_until": "--valid-until", "price": "--price"}

// asFlags is err with the fields it names (a *booking.ValidationError's)
// named by the flags that carry them, as the command's user typed them.
func asFlags(err error, flags map[string]string) error {
	var ve *booking.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	named := make(map[string]i18n.Text, len(ve.Fields))
	for k, why := range ve.Fields {
		if f, ok := flags[k]; ok {
			k = f
		}
		named[k] = why
	}
	ve.Fields = named
	return err
}
