package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"salon/booking"
)

func cmdSalon(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return usagef("usage: salon salon create --slug S --name N --tz Area/City")
	}
	fs := newFlagSet("salon create")
	slug := fs.String("slug", "", "URL name of the salon (lowercase letters, digits, dashes)")
	name := fs.String("name", "", "display name")
	tz := fs.String("tz", "", "IANA time zone, e.g. Europe/Moscow, Europe/London or America/New_York")
	locale := fs.String("locale", "", "default language: ru or en (default: the country's, ru or else en)")
	currency := fs.String("currency", "", "ISO 4217 currency code (default: the country's)")
	country := fs.String("country", "", "ISO 3166 country whose national phone format clients may type (default: the time zone's)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *slug == "" || *name == "" || *tz == "" {
		return usagef("salon create needs --slug, --name and --tz")
	}
	pool, err := openCurrent(ctx, getenv)
	if err != nil {
		return err
	}
	defer pool.Close()
	s, err := booking.New(pool).CreateSalon(ctx, booking.Salon{
		Slug: *slug, Name: *name, Timezone: *tz, Locale: *locale, Currency: *currency, Country: *country,
		MinNoticeMin: booking.DefaultMinNoticeMin, CutoffHours: booking.DefaultCutoffHours,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created salon %s (id %d, %s, phones read as %s)\n", s.Slug, s.ID, s.Timezone, s.Country)
	return nil
}

func cmdAdmin(ctx context.Context, args []string, getenv env, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return usagef("usage: salon admin create --salon SLUG --email E [--role owner|admin] [--password-stdin]")
	}
	fs := newFlagSet("admin create")
	slug := fs.String("salon", "", "salon slug")
	email := fs.String("email", "", "login email")
	role := fs.String("role", "admin", "owner or admin")
	fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *slug == "" || *email == "" {
		return usagef("admin create needs --salon and --email")
	}
	password, err := readPassword(stdin, stderr, *fromStdin)
	if err != nil {
		return err
	}
	svc, s, closeDB, err := openSalon(ctx, getenv, *slug)
	if err != nil {
		return err
	}
	defer closeDB()
	u, err := svc.CreateUser(ctx, s.ID, *email, password, booking.Role(*role))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created %s %s for salon %s\n", u.Role, u.Email, s.Slug)
	return nil
}

func cmdMaster(ctx context.Context, args []string, getenv env, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "link-code" {
		return usagef("usage: salon master link-code --salon SLUG --master NAME")
	}
	fs := newFlagSet("master link-code")
	slug := fs.String("salon", "", "salon slug")
	name := fs.String("master", "", "the master's name as in the salon")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *slug == "" || *name == "" {
		return usagef("master link-code needs --salon and --master")
	}
	svc, s, closeDB, err := openSalon(ctx, getenv, *slug)
	if err != nil {
		return err
	}
	defer closeDB()
	masters, err := svc.Masters(ctx, s.ID, 0)
	if err != nil {
		return err
	}
	for _, m := range masters {
		if strings.EqualFold(m.Name, strings.TrimSpace(*name)) {
			code, expires, err := svc.NewLinkCode(ctx, s.ID, m.ID)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s\n(%s sends \"/link %s\" to the bot before %s)\n", code, m.Name, code, expires.Format("2006-01-02 15:04 MST"))
			return nil
		}
	}
	return fmt.Errorf("master %q: %w", *name, booking.ErrNotFound)
}

// openSalon opens the current database and finds the salon with slug; the
// returned func closes the database.
func openSalon(ctx context.Context, getenv env, slug string) (*booking.Service, *booking.Salon, func(), error) {
	pool, err := openCurrent(ctx, getenv)
	if err != nil {
		return nil, nil, nil, err
	}
	svc := booking.New(pool)
	s, err := svc.SalonBySlug(ctx, slug)
	if err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	return svc, s, pool.Close, nil
}

// readLine reads a password from the first line of in.
func readLine(in *bufio.Reader) (string, error) {
	line, err := in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// readPassword reads the first line of stdin, or prompts twice on a terminal.
func readPassword(stdin io.Reader, stderr io.Writer, fromStdin bool) (string, error) {
	if fromStdin {
		return readLine(bufio.NewReader(stdin))
	}
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return "", usagef("no terminal to prompt for the password: use --password-stdin")
	}
	fmt.Fprint(stderr, "Password: ")
	p1, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(stderr)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	fmt.Fprint(stderr, "Repeat: ")
	p2, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(stderr)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	if string(p1) != string(p2) {
		return "", usagef("the passwords differ")
	}
	return string(p1), nil
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return &helpAsked{fs}
	} else if err != nil {
		return usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// helpAsked is a command's -h or --help: its flags are listed (exit 0).
type helpAsked struct{ fs *flag.FlagSet }

func (h *helpAsked) Error() string { return h.fs.Name() + ": help requested" }

// print lists the command's flags on w.
func (h *helpAsked) print(w io.Writer) {
	fmt.Fprintf(w, "usage: salon %s [flags]\n", h.fs.Name())
	h.fs.SetOutput(w)
	h.fs.PrintDefaults()
	h.fs.SetOutput(io.Discard)
}
