package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

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
	f, isFile := stdin.(*os.File)
	interactive := isFile && term.IsTerminal(int(f.Fd()))
	if !interactive && (*name == "" || *slug == "" || *tz == "" || *email == "") {
		return usagef("init needs --name, --slug, --tz and --email (or a terminal to ask on)")
	}
	pool, err := openCurrent(ctx, getenv)
	if err != nil {
		return err
	}
	defer pool.Close()
	svc := booking.New(pool)
	// Each answer is checked as it comes, as the salon would be made with
	// the answers so far: refused, it is asked again, with why.
	check := func() map[string]string {
		err := svc.CheckNewSalon(ctx, booking.Salon{Slug: *slug, Name: *name, Timezone: *tz, Locale: *locale, Currency: *currency}, *email)
		out := map[string]string{}
		var ve *booking.ValidationError
		if errors.As(err, &ve) {
			for k, v := range ve.Fields {
				out[k] = v.In("en")
			}
		} else if err != nil {
			out[""] = err.Error()
		}
		return out
	}
	qs := []question{
		{p: name, field: "name", ask: "Salon name, as clients see it", example: "Studio Anna"},
		{p: slug, field: "slug", ask: "Link name, in latin letters, digits and dashes", example: "studio-anna", def: func() string { return freeSlug(ctx, svc, *name) }},
		{p: tz, field: "timezone", ask: "Time zone", example: "Europe/Moscow, Europe/London, Asia/Yekaterinburg"},
		{p: email, field: "email", ask: "Owner's email, their login", example: "owner@example.com"},
	}
	in := bufio.NewReader(stdin)
	if err := askAll(in, stderr, interactive, qs, check); err != nil {
		return err
	}
	var password string
	if *fromStdin {
		password, err = readLine(in)
	} else {
		// On the terminal: asked again while the two differ or it is too
		// short (the core says so of a password from stdin).
		for try := 1; ; try++ {
			password, err = readPassword(stdin, stderr, false)
			var usage usageError
			if err == nil && utf8.RuneCountInString(password) < booking.MinPasswordLen {
				err = usagef("the password needs at least %d characters", booking.MinPasswordLen)
			}
			if err == nil || !errors.As(err, &usage) || try == maxAsks {
				break
			}
			fmt.Fprintf(stderr, "  %v; again:\n", err)
		}
	}
	if err != nil {
		return err
	}
	s, u, err := svc.CreateSalonWithOwner(ctx, booking.Salon{
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

// maxAsks is how many times init asks for one answer it refuses.
const maxAsks = 5

// question is one of init's questions: the answer's flag, the core's
// field it is, how it is asked, an example, and a default Enter takes.
type question struct {
	p            *string
	field        string
	ask, example string
	def          func() string // nil: none
}

// askAll asks on out, reading in, each question the flags left without
// an answer, checking each answer as it comes (check: the core's reasons
// by field for the answers so far) and asking again while it is refused,
// up to maxAsks times. With no terminal to ask on, a missing answer is a
// usage error (the core checks the flags' when the salon is made).
func askAll(in *bufio.Reader, out io.Writer, interactive bool, qs []question, check func() map[string]string) error {
	for _, q := range qs {
		if strings.TrimSpace(*q.p) != "" {
			continue
		}
		if !interactive {
			return usagef("init needs --name, --slug, --tz and --email (or a terminal to ask on)")
		}
		for try := 1; ; try++ {
			def := ""
			if q.def != nil {
				def = q.def()
			}
			if def != "" {
				fmt.Fprintf(out, "%s [%s]: ", q.ask, def)
			} else {
				fmt.Fprintf(out, "%s (e.g. %s): ", q.ask, q.example)
			}
			line, err := in.ReadString('\n')
			if err != nil && (!errors.Is(err, io.EOF) || line == "") {
				return fmt.Errorf("read %s: %w", strings.ToLower(q.ask), err)
			}
			*q.p = cmp.Or(strings.TrimSpace(line), def)
			why := check()[q.field]
			if *q.p == "" {
				why = "required"
			}
			if why == "" {
				break
			}
			*q.p = ""
			if try == maxAsks {
				return usagef("%s: %s", strings.ToLower(q.ask), why)
			}
			fmt.Fprintf(out, "  %s; again:\n", why)
		}
	}
	return nil
}

// freeSlug is a link name made of the salon's name that no salon has
// ("demo" taken: "demo-2"), or "" for none.
func freeSlug(ctx context.Context, svc *booking.Service, name string) string {
	base := slugOf(name)
	for n := 1; base != "" && n < 10; n++ {
		s := base
		if n > 1 {
			s = fmt.Sprintf("%s-%d", base, n)
		}
		var ve *booking.ValidationError
		if err := svc.CheckNewSalon(ctx, booking.Salon{Slug: s, Name: "x", Timezone: "UTC"}, "x@example.com"); !errors.As(err, &ve) {
			return s
		}
		if _, taken := ve.Fields["slug"]; !taken {
			return s
		}
	}
	return ""
}

// slugOf is a link name made of a salon's name: Latin letters (Russian
// ones spelt out), digits and dashes ("Салон «Малахит»": salon-malakhit);
// "" when nothing is left.
func slugOf(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch t, ok := translit[r]; {
		case ok:
			b.WriteString(t)
			dash = false
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 63 {
		out = strings.TrimRight(out[:63], "-")
	}
	if len(out) < 2 {
		return ""
	}
	return out
}

var translit = map[rune]string{'а': "a", 'б': "b", 'в': "v", 'г': "g", 'д': "d", 'е': "e", 'ё': "e", 'ж': "zh", 'з': "z", 'и': "i",
	'й': "y", 'к': "k", 'л': "l", 'м': "m", 'н': "n", 'о': "o", 'п': "p", 'р': "r", 'с': "s", 'т': "t", 'у': "u", 'ф': "f",
	'х': "kh", 'ц': "ts", 'ч': "ch", 'ш': "sh", 'щ': "shch", 'ъ': "", 'ы': "y", 'ь': "", 'э': "e", 'ю': "yu", 'я': "ya"}

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
