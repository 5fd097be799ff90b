package booking

import (
	"context"
	"crypto/subtle"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Channel is a way a change reaches the salon: its own surfaces (the web
// widget and API, the panel), the importer, the platform itself, or a chat
// channel through which clients and masters are reached (Telegram today;
// another messenger is an adapter and a value here, not a migration).
type Channel string

// Channels.
const (
	ChannelWeb      Channel = "web"      // the widget, the public API, manage links
	ChannelPanel    Channel = "panel"    // the admin panel
	ChannelImport   Channel = "import"   // CSV import
	ChannelSystem   Channel = "system"   // the platform: hold expiry, jobs, the command line
	ChannelTelegram Channel = "telegram" // the Telegram bot
)

var channelRE = regexp.MustCompile(`^[a-z][a-z0-9_]{1,31}$`)

// chat reports whether people are reached on the channel by an identity.
func (c Channel) chat() bool {
	switch c {
	case ChannelWeb, ChannelPanel, ChannelImport, ChannelSystem, "":
		return false
	}
	return channelRE.MatchString(string(c))
}

// Identity is a person's account on a chat channel, as the channel vouches
// for it: Telegram signs every update with its sender's user id, so the bot
// knows who is writing. An identity proves who writes, not whose phone a
// typed number is.
type Identity struct {
	Channel    Channel
	ExternalID string // the Telegram user id, as text
}

// TelegramUser is the identity of a Telegram user.
func TelegramUser(id int64) Identity {
	return Identity{Channel: ChannelTelegram, ExternalID: strconv.FormatInt(id, 10)}
}

// IsZero reports whether id is the zero Identity.
func (id Identity) IsZero() bool { return id == Identity{} }

func (id Identity) valid() bool {
	return id.Channel.chat() && id.ExternalID != "" && len(id.ExternalID) <= 128
}

func (id Identity) String() string { return string(id.Channel) + ":" + id.ExternalID }

// callerKind is the kind of credential a caller presents.
type callerKind int

const (
	callerNone     callerKind = iota
	callerVisitor             // an anonymous visitor of the widget: may book
	callerToken               // a booking's manage token
	callerIdentity            // a verified chat identity
	callerStaff               // a panel user of a salon
	callerSystem              // the platform itself (jobs, the command line)
	callerImport              // an import of a file into one salon
	callerLink                // a one-tap link of a message, for its booking (UseLink)
)

// Caller is who asks, with the credential they present. Every method of
// Service that reads or changes salon data finds it in its context (As)
// and decides, itself, what the caller may see and do; front ends only
// pass it along. A context without a caller is refused (ErrForbidden): it
// is never taken for the platform, which the jobs, the command line and
// the tests name explicitly (BySystem).
//
//   - Visitor: an anonymous visitor of the widget or of the panel's login
//     page. May read a salon's public catalogue and free times, book (and
//     then holds the booking's manage token), and present a credential
//     (a password, a session, a feed token); sees nothing else.
//   - ByToken: the holder of a booking's manage token: that booking only.
//   - ByIdentity: a person on a chat channel: the bookings that identity
//     made, and those of the client it was proven to be (a Telegram contact
//     shared by its owner). A phone number someone typed proves nothing.
//   - ByStaff: a panel user: every booking of their salon, none of another.
//   - ByImport, ByUserImport: an import of a file into one salon.
//   - BySystem: the platform itself (jobs, the command line).
//
// A booking a caller may not see is ErrNotFound to them, whether it exists
// or not.
type Caller struct {
	kind     callerKind
	token    string
	identity Identity
	user     User
	file     string // of an import
	link     linkGrant
	// now is the service's clock when it read the caller (Service.asked):
	// when a time-limited credential (a manage link) is checked.
	now time.Time
}

// linkGrant is what a one-tap link lets its holder do: act on one booking,
// through the channel that carried the link.
type linkGrant struct {
	bookingID int64
	channel   Channel
}

// Visitor is an anonymous visitor of the web widget (or of the panel's
// login page).
func Visitor() Caller { return Caller{kind: callerVisitor} }

// ByToken is the holder of a manage token.
func ByToken(token string) Caller { return Caller{kind: callerToken, token: token} }

// ByIdentity is a person on a chat channel; the channel vouches for id.
func ByIdentity(id Identity) Caller { return Caller{kind: callerIdentity, identity: id} }

// ByStaff is a panel user (an owner or admin of u.SalonID).
func ByStaff(u User) Caller { return Caller{kind: callerStaff, user: u} }

// BySystem is the platform itself.
func BySystem() Caller { return Caller{kind: callerSystem} }

// ByCommand is the platform asked from its shell by a command ("salon
// balance issue"): the platform's authority, and what it changes audited
// under CommandActor and the command, not anonymously.
func ByCommand(command string) Caller { return Caller{kind: callerSystem, file: command} }

// CommandActor begins the audit name of a change a shell command made.
const CommandActor = "command: "

// ByImport is an import of the named file into a salon (from the command
// line): it may change that salon only, and its changes are audited as
// "import:" and the file name.
func ByImport(salonID int64, file string) Caller {
	return Caller{kind: callerImport, user: User{SalonID: salonID}, file: file}
}

// ByUserImport is an import a panel user runs: as ByImport, and held to the
// user's role (an admin may import shifts, only an owner the rest).
func ByUserImport(u User, file string) Caller {
	return Caller{kind: callerImport, user: u, file: file}
}

// Identity returns the caller's chat identity (zero for other callers).
func (c Caller) Identity() Identity { return c.identity }

// client reports whether the caller is a client (held to the salon's
// client rules: grid, notice, horizon, cutoff).
func (c Caller) client() bool {
	return c.kind == callerVisitor || c.kind == callerToken || c.kind == callerIdentity || c.kind == callerLink
}

// check validates the caller itself.
func (c Caller) check() error {
	switch c.kind {
	case callerVisitor, callerSystem:
		return nil
	case callerToken:
		if c.token == "" || len(c.token) > 200 {
			return fmt.Errorf("no manage token: %w", ErrNotFound)
		}
		return nil
	case callerIdentity:
		if !c.identity.valid() {
			return Invalid("caller", "not a chat identity")
		}
		return nil
	case callerStaff:
		if c.user.ID <= 0 || c.user.SalonID <= 0 || (c.user.Role != RoleOwner && c.user.Role != RoleAdmin) {
			return Invalid("caller", "not a panel user")
		}
		return nil
	case callerLink:
		if c.link.bookingID <= 0 {
			return fmt.Errorf("no link: %w", ErrNotFound)
		}
		return nil
	case callerImport:
		if c.user.SalonID <= 0 || c.file == "" {
			return Invalid("caller", "an import names its salon and file")
		}
		return nil
	}
	return fmt.Errorf("who is asking is not said: %w", ErrForbidden)
}

// callerKey is the context key of the caller.
type callerKey struct{}

// As returns ctx carrying caller: who asks, for every method of Service.
func As(ctx context.Context, caller Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// callerOf returns the caller ctx carries: the zero Caller, whom check
// refuses, when there is none.
func callerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// asked returns the caller ctx carries once check accepts it.
func asked(ctx context.Context) (Caller, error) {
	c := callerOf(ctx)
	return c, c.check()
}

// asked is asked with the service's clock in the caller.
func (s *Service) asked(ctx context.Context) (Caller, error) {
	c, err := asked(ctx)
	c.now = s.now()
	return c, err
}

// onlySystem refuses every caller but the platform itself (ErrForbidden).
func onlySystem(ctx context.Context) error {
	c, err := asked(ctx)
	if err != nil {
		return err
	}
	if c.kind != callerSystem {
		return fmt.Errorf("only the platform may: %w", ErrForbidden)
	}
	return nil
}

// chatIdentity returns the identity of the caller ctx carries, who must be
// a person on a chat channel (ErrForbidden for anyone else).
func chatIdentity(ctx context.Context) (Identity, error) {
	c, err := asked(ctx)
	if err != nil {
		return Identity{}, err
	}
	if c.kind != callerIdentity {
		return Identity{}, fmt.Errorf("only a chat identity may: %w", ErrForbidden)
	}
	return c.identity, nil
}

// mayRead checks that the caller may read the salon's public face: its
// settings, catalogue and free times. Clients may read any salon's; staff
// and imports only their own (another salon is ErrNotFound to them).
func mayRead(ctx context.Context, salonID int64) error {
	c, err := asked(ctx)
	if err != nil {
		return err
	}
	if (c.kind == callerStaff || c.kind == callerImport) && c.user.SalonID != salonID {
		return fmt.Errorf("salon %d: %w", salonID, ErrNotFound)
	}
	return nil
}

// channel is the channel the caller acts through.
func (c Caller) channel() Channel {
	switch c.kind {
	case callerVisitor, callerToken:
		return ChannelWeb
	case callerIdentity:
		return c.identity.Channel
	case callerLink:
		return c.link.channel
	case callerStaff:
		return ChannelPanel
	case callerImport:
		return ChannelImport
	}
	return ChannelSystem
}

// grants is what a booking carries that callers may hold.
type grants struct {
	tokenHash []byte   // of the manage token, if one was issued
	link      bool     // the caller's token is a live manage link of a message
	origin    Identity // the chat identity that made the booking
	verified  bool     // the caller's identity is a proven identity of the booking's client
}

// may reports whether the caller may see and change b.
func (c Caller) may(b *Booking, g grants) bool {
	switch c.kind {
	case callerSystem:
		return true
	case callerStaff, callerImport:
		return c.user.SalonID == b.SalonID
	case callerToken:
		return g.link || len(g.tokenHash) > 0 && subtle.ConstantTimeCompare(g.tokenHash, tokenHash(c.token)) == 1
	case callerLink:
		return c.link.bookingID == b.ID
	case callerIdentity:
		return (!g.origin.IsZero() && g.origin == c.identity) || g.verified
	}
	return false
}

// actor is how the change the caller makes on b is recorded.
func (c Caller) actor(b *Booking) Actor {
	switch c.kind {
	case callerStaff:
		return Actor{Kind: ActorAdmin, ID: c.user.ID, Channel: ChannelPanel}
	case callerSystem:
		return Actor{Kind: ActorSystem, Channel: ChannelSystem}
	case callerImport:
		return Actor{Kind: ActorSystem, Channel: ChannelImport}
	}
	return Actor{Kind: ActorClient, ID: b.ClientID, Channel: c.channel(), Identity: c.identity}
}
