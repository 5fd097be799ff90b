package booking

import "fmt"

// ActorKind says who made a change.
type ActorKind string

// Actor kinds.
const (
	ActorClient ActorKind = "client" // a client (widget, manage link, chat)
	ActorAdmin  ActorKind = "admin"  // a salon admin or owner (panel)
	ActorSystem ActorKind = "system" // the platform itself (hold expiry, jobs, the command line, imports)
)

// Actor is who made a change, as recorded with every booking event: the
// kind, the client or panel user id (0 when none), the channel the change
// came through and, for a chat, the identity that made it. The core derives
// it from the Caller; front ends never set it.
type Actor struct {
	Kind     ActorKind
	ID       int64
	Channel  Channel
	Identity Identity
}

// System is the platform acting on its own.
var System = Actor{Kind: ActorSystem, Channel: ChannelSystem}

func (a Actor) String() string {
	if !a.Identity.IsZero() {
		return fmt.Sprintf("%s:%d via %s", a.Kind, a.ID, a.Identity)
	}
	return fmt.Sprintf("%s:%d via %s", a.Kind, a.ID, a.Channel)
}

// dbID is the actor id as stored (NULL for 0).
func (a Actor) dbID() *int64 {
	if a.ID == 0 {
		return nil
	}
	return &a.ID
}

// details adds who made the change to an event's details.
func (a Actor) details(d map[string]any) map[string]any {
	if d == nil {
		d = map[string]any{}
	}
	if !a.Identity.IsZero() {
		d["by"] = a.Identity.String()
	}
	return d
}
