package booking

import "fmt"

// ActorKind says who makes a change.
type ActorKind string

// Actor kinds.
const (
	ActorClient ActorKind = "client" // the client of the booking (bot, widget, manage link)
	ActorAdmin  ActorKind = "admin"  // a salon admin or owner (panel, CLI, import)
	ActorSystem ActorKind = "system" // the platform itself (hold expiry, jobs)
)

// Actor is who makes a change; it is recorded with every booking event. ID is
// the client id for clients, the panel user id for admins (0 for the CLI),
// and 0 for the system.
type Actor struct {
	Kind ActorKind
	ID   int64
}

// Convenience constructors.
var (
	System = Actor{Kind: ActorSystem}
)

// ClientActor is the client with that id.
func ClientActor(clientID int64) Actor { return Actor{Kind: ActorClient, ID: clientID} }

// AdminActor is the panel user with that id (0: the command line).
func AdminActor(userID int64) Actor { return Actor{Kind: ActorAdmin, ID: userID} }

func (a Actor) String() string { return fmt.Sprintf("%s:%d", a.Kind, a.ID) }

func (a Actor) valid() bool {
	switch a.Kind {
	case ActorClient, ActorAdmin, ActorSystem:
		return a.ID >= 0
	}
	return false
}

// dbID is the actor id as stored (NULL for 0).
func (a Actor) dbID() *int64 {
	if a.ID == 0 {
		return nil
	}
	return &a.ID
}
