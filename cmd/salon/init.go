package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"salon/booking"
)

// cmdInit creates a salon and its first owner, both or neither, from flags
// or, for what the flags leave out, by asking on the terminal; then it
// prints where the owner signs in.
func cmdInit(ctx context.Context, args []string, getenv env, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("init")
	name := fs.String("name", "", "the salon's name, as clients see it")
	slug := fs.String("slug", "", "the salon's name in links: lowercase latin letters, digits, dashes")
	tz := fs.String("tz", "", "IANA time zone, e.g. Europe/Moscow, Europe/London or America/New_York")
	locale := fs.String("locale", "", "default language: ru or en (default: the time zone's country's, ru or else en)")
	currency := fs.String("currency", "", "ISO 4217 currency code (default: the time zone's country's)")
	email := fs.String("email", "", "the owner's login email")
	fromStdin := fs.Bool("password-stdin", false, "read the owner's password from the first line of standard input")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	in := bufio.NewReader(stdin)
	ask := func(p *string, question, example string) error {
		if strings.TrimSpace(*p) != "" {
			return nil
		}
		f, ok := stdin.(*os.File)
		if !ok || !term.IsTerminal(int(f.Fd())) {
			return usagef("init needs --name, --slug, --tz and --email (or a terminal to ask on)")
		}
		fmt.Fprintf(stderr, "%s (%s): ", question, example)
		line, err := in.ReadString('\n')
		if err != nil {
			return fmt.Errorf("read %s: %w", question, err)
		}
		*p = strings.TrimSpace(line)
		return nil
	}
	for _, q := range []struct {
		p                 *string
		question, example string
	}{
		{name, "Salon name", "Studio Anna"}, {slug, "Link name", "studio-anna"}, {tz, "Time zone", "Europe/Moscow, Europe/London, Asia/Kolkata, ..."},
		{email, "Owner's email", "owner@example.com"},
	} {
		if err := ask(q.p, q.question, q.example); err != nil {
			return err
		}
	}
	var password string
	var err error
	if *fromStdin {
		password, err = readLine(in)
	} else {
		password, err = readPassword(stdin, stderr, false)
	}
	if err != nil {
		return err
	}
	pool, err := openCurrent(ctx, getenv)
	if err != nil {
		return err
	}
	defer pool.Close()
	s, u, err := booking.New(pool).CreateSalonWithOwner(ctx, booking.Salon{
		Slug: *slug, Name: *name, Timezone: *tz, Locale: *locale, Currency: *currency,
		MinNoticeMin: booking.DefaultMinNoticeMin, CutoffHours: booking.DefaultCutoffHours,
	}, *email, password)
	if err != nil {
		return err
	}
	base := publicBase(getenv)
	fmt.Fprintf(stdout, "created salon %s (%s, %s, %s) and its owner %s\n", s.Slug, s.Timezone, s.Currency, s.Locale, u.Email)
	fmt.Fprintf(stdout, "panel: %s/panel/login\n", base)
	if getenv("SALON_PUBLIC_URL") == "" {
		fmt.Fprintf(stdout, "(where salon serve listens with this environment's SALON_HTTP_ADDR; SALON_PUBLIC_URL names the address people use)\n")
	}
	fmt.Fprintf(stdout, "sign in, then add services, masters and working hours; the panel's Online booking page has the link for clients\n")
	return nil
}

// publicBase is where people reach the server: SALON_PUBLIC_URL, else the
// listen address (localhost for one on every interface).
func publicBase(getenv env) string {
	if u := strings.TrimRight(getenv("SALON_PUBLIC_URL"), "/"); u != "" {
		return u
	}
	addr := orDefault(getenv("SALON_HTTP_ADDR"), ":8080")
	if strings.HasPrefix(addr, ":") {
		addr = "localhost" + addr
	}
	return "http://" + addr
}
