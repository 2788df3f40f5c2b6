package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Actor types of the audit log (SPEC §16): a signed-in staff user, an API
// key with the staff role, or the command line; and anonymous, someone
// not signed in: a failed sign-in, whose username is only what was typed.
const (
	ActorStaff     = "staff"
	ActorKey       = "key"
	ActorCLI       = "cli"
	ActorAnonymous = "anonymous"
)

// ActorTypes are the actor types, as a filter of the audit log takes them.
var ActorTypes = []string{ActorStaff, ActorKey, ActorCLI, ActorAnonymous}

// Actor is who made a change: its type, its id (the staff user's or the
// key's, none for the command line) and a name to show.
type Actor struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
}

// StaffActor is the actor of a signed-in staff user.
func StaffActor(id int64, username string) Actor {
	return Actor{Type: ActorStaff, ID: strconv.FormatInt(id, 10), Name: username}
}

// KeyActor is the actor of a request made with a staff API key.
func KeyActor(id int64, name string) Actor {
	return Actor{Type: ActorKey, ID: strconv.FormatInt(id, 10), Name: name}
}

// CLIActor is the actor of the command line; name says who ran it when it
// is known (the operating system's user), else "cli".
func CLIActor(name string) Actor {
	if name == "" {
		name = "cli"
	}
	return Actor{Type: ActorCLI, Name: name}
}

// AnonymousActor is the actor of someone not signed in (a failed sign-in):
// never a staff user's, whatever username was typed.
func AnonymousActor() Actor { return Actor{Type: ActorAnonymous, Name: ActorAnonymous} }

// Origin is where a change comes from: the actor, and the request that
// carried it (its id and the client's address), none for the command line.
type Origin struct {
	Actor     Actor
	RequestID string
	IP        string
}

type originKey struct{}

// WithOrigin returns ctx carrying o: every change a Store method makes
// under that context is written to the audit log with o, in the change's
// own transaction. A context without an origin (a customer's order, the
// server's own housekeeping and deliveries) writes no audit entry.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginFrom returns the origin ctx carries, if any.
func OriginFrom(ctx context.Context) (Origin, bool) {
	o, ok := ctx.Value(originKey{}).(Origin)
	return o, ok
}

// Target is what a change was made to: its type (pet, order, key, staff,
// webhook, …) and id.
type Target struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
}

// TargetID is the target of type typ with a numeric id.
func TargetID(typ string, id int64) Target {
	return Target{Type: typ, ID: strconv.FormatInt(id, 10)}
}

// Changes are the fields a change set, each as [before, after]. They never
// hold secrets, hashes or passwords: a field whose value is secret is
// written as changed with both sides null.
type Changes map[string][2]any

// Set records field as changed from before to after, unless they are equal
// (as JSON would show them).
func (ch Changes) Set(field string, before, after any) {
	b, errB := json.Marshal(before)
	a, errA := json.Marshal(after)
	if errB == nil && errA == nil && string(a) == string(b) {
		return
	}
	ch[field] = [2]any{before, after}
}

// AuditEntry is one row of the audit log as the API shows it.
type AuditEntry struct {
	ID        int64           `json:"id"`
	At        time.Time       `json:"at"`
	Actor     Actor           `json:"actor"`
	Action    string          `json:"action"`
	Target    Target          `json:"target"`
	Changes   json.RawMessage `json:"changes"`
	RequestID string          `json:"requestId,omitempty"`
	IP        string          `json:"ip,omitempty"`
}

// audit writes an entry of the change the transaction makes, with the
// origin of the transaction's context; a context without one writes none.
// It is written at once, so it commits or rolls back with the change.
func (tx *Tx) audit(action string, target Target, changes Changes) error {
	o, ok := OriginFrom(tx.ctx)
	if !ok {
		return nil
	}
	return tx.writeAudit(o, action, target, changes)
}

// writeAudit inserts one audit entry made by o.
func (tx *Tx) writeAudit(o Origin, action string, target Target, changes Changes) error {
	if changes == nil {
		changes = Changes{}
	}
	b, err := json.Marshal(changes)
	if err != nil {
		return fmt.Errorf("encode audit changes: %w", err)
	}
	_, err = tx.exec(tx.ctx, `INSERT INTO audit_log (at, actor_type, actor_id, actor_name, action, target_type, target_id, changes, request_id, ip)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		tx.now, o.Actor.Type, o.Actor.ID, o.Actor.Name, action, target.Type, target.ID, string(b), o.RequestID, o.IP)
	if err != nil {
		return fmt.Errorf("write audit entry: %w", err)
	}
	return nil
}

// Audit records an action that changes nothing in the database (a ban
// lifted in the limiter, an export read) in a transaction of its own,
// with the origin of ctx; a context without one records nothing.
func (s *Store) Audit(ctx context.Context, action string, target Target, changes Changes) error {
	if _, ok := OriginFrom(ctx); !ok {
		return nil
	}
	return inTxDo(ctx, s, func(tx *Tx) error {
		if err := tx.audit(action, target, changes); err != nil {
			return err
		}
		return nil
	})
}
