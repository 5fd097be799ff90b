// Command salon is the one binary of the salon booking platform: the local
// development server, the production server, migrations and admin commands.
// It only wires the packages together; see the README for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	_ "time/tzdata" // salons' time zones, also where the system has no zoneinfo (the container)

	"salon/booking"
)

func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalContext ends at SIGINT or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// Exit codes (CONTRACT section 1).
const (
	exitOK       = 0
	exitRejected = 1 // the work ran but some input was rejected
	exitFatal    = 2 // usage or fatal error
)

const usage = `usage: salon COMMAND [flags]

commands:
  dev                                   run locally with demo data (private PostgreSQL unless DATABASE_URL is set)
  serve                                 production server (needs DATABASE_URL)
  migrate up|down|status                database migrations
  init [--name N --slug S --tz Area/City --email E [--password-stdin]]
                                        create a salon and its first owner (asks for what the flags leave out)
  salon create --slug S --name N --tz Area/City [--locale ru|en] [--currency RUB] [--country RU]
                                        create a salon
  admin create --salon SLUG --email E [--role owner|admin] [--password-stdin]
                                        create a panel user (password prompted, or read from stdin)
  master link-code --salon SLUG --master NAME
                                        a one-time code with which the master links Telegram (/link CODE)
  import KIND FILE --salon SLUG [--dry-run] [--report FILE.csv|FILE.json]
                                        import services, masters, schedule, clients or bookings from CSV
  import all FILE.csv...|FILE.zip --salon SLUG [--dry-run]
                                        a salon's files, named by what they hold, in order (a dry run checks them as one)
  export KIND --salon SLUG [--out FILE] [--lang ru|en]
                                        export a kind in the import format
  client export|erase --salon SLUG --phone PHONE [--out FILE] [--yes]
                                        a client's personal data: export as JSON, or erase
  balance issue --salon SLUG --kind certificate --amount A
  balance issue --salon SLUG --kind package --service NAME --visits N --phone PHONE [--name N] [--valid-until YYYY-MM-DD]
                                        sell a gift certificate or a package (paid in the salon); prints its code

environment: DATABASE_URL, SALON_HTTP_ADDR, SALON_PUBLIC_URL, TELEGRAM_BOT_TOKEN, ... (see README)
`

// env reads configuration; tests pass their own.
type env func(string) string

// usageError is a mistake in the command line: exit 2 with the usage hint.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// run executes one command and returns the exit code. Every error becomes
// one line on stderr; a panic becomes "internal error", never a stack trace.
func run(ctx context.Context, args []string, getenv env, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "salon: internal error: %v\n", r)
			code = exitFatal
		}
	}()
	return exitFor(dispatch(ctx, args, getenv, stdin, stdout, stderr), stderr)
}

// exitFor reports err on stderr as one line and returns its exit code.
func exitFor(err error, stderr io.Writer) int {
	var ue usageError
	var help *helpAsked
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "salon: %s\n(run 'salon help' for usage)\n", ue.msg)
		return exitFatal
	case errors.As(err, &help):
		help.print(stderr)
		return exitOK
	case errors.As(err, &rejectedRows{}):
		fmt.Fprintf(stderr, "salon: %s\n", oneLine(err))
		return exitRejected
	case errors.Is(err, booking.ErrInvalid), errors.Is(err, booking.ErrConflict):
		fmt.Fprintf(stderr, "salon: %s\n", oneLine(err))
		return exitRejected
	default:
		fmt.Fprintf(stderr, "salon: %s\n", oneLine(err))
		return exitFatal
	}
}

func dispatch(ctx context.Context, args []string, getenv env, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("no command")
	}
	cmd, rest := args[0], args[1:]
	// The servers' requests and jobs name their own callers; the commands
	// that administer the platform from its shell ask as the platform.
	sys := booking.As(ctx, booking.BySystem())
	switch cmd {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "dev":
		return cmdDev(ctx, rest, getenv, stdout, stderr, devOptions{dir: ".salon"})
	case "serve":
		return cmdServe(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return cmdMigrate(ctx, rest, getenv, stdout)
	case "salon":
		return cmdSalon(sys, rest, getenv, stdout)
	case "init":
		return cmdInit(sys, rest, getenv, stdin, stdout, stderr)
	case "admin":
		return cmdAdmin(sys, rest, getenv, stdin, stdout, stderr)
	case "master":
		return cmdMaster(sys, rest, getenv, stdout)
	case "import":
		return cmdImport(sys, rest, getenv, stdout, stderr)
	case "export":
		return cmdExport(sys, rest, getenv, stdout)
	case "client":
		return cmdClient(sys, rest, getenv, stdout)
	case "balance":
		return cmdBalance(sys, rest, getenv, stdout)
	}
	return usagef("unknown command %q", cmd)
}

// oneLine flattens an error message to a single line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
