package handlers_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestAuditCannotBeForged: a client names neither the request nor the
// actor of an audit entry. A failed sign-in is anonymous's, whatever name
// was typed (the name is its data, the user its target), never filed under
// that user: filtering by the user finds none. The entry's request id is
// the server's own, not the X-Request-Id a client sent, unless a trusted
// proxy sent it.
func TestAuditCannotBeForged(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		alice := a.AddStaff(handlerstest.StaffName, handlerstest.StaffPassword)
		before := lastAuditID(t, a)
		b := a.Browser(t)
		b.Header["X-Request-Id"] = "forged-1"
		wrong := b.Login(handlerstest.StaffName, "not the password at all").WantStatus(http.StatusUnauthorized)
		b.Login("nobody", "not the password at all").WantStatus(http.StatusUnauthorized)
		entries := auditEntries(t, a, before)
		if len(entries) != 2 {
			t.Fatalf("%d audit entries, want 2: %+v", len(entries), entries)
		}
		for i, want := range []struct {
			target   db.Target
			username string
		}{{db.TargetID("staff", alice.ID), handlerstest.StaffName}, {db.Target{Type: "staff"}, "nobody"}} {
			e := entries[i]
			var ch map[string][2]any
			if err := json.Unmarshal(e.Changes, &ch); err != nil {
				t.Fatal(err)
			}
			if e.Action != "signin.failure" || e.Actor != (db.Actor{Type: "anonymous", Name: "anonymous"}) || e.Target != want.target || ch["username"][1] != want.username || ch["reason"][1] != "password" {
				t.Errorf("entry %d = %+v %s, want signin.failure by anonymous, target %+v, username %s", i, e, e.Changes, want.target, want.username)
			}
			if e.RequestID == "forged-1" || e.RequestID == "" {
				t.Errorf("entry %d has the request id %q, want the server's own", i, e.RequestID)
			}
		}
		if got := wrong.Header.Get("X-Request-Id"); got != entries[0].RequestID {
			t.Errorf("the answer's X-Request-Id %q, the entry's %q: want the same", got, entries[0].RequestID)
		}
		// Alice's own entries hold none of the stranger's attempts.
		var mine []db.AuditEntry
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/audit?actorType=staff&actorId=" + itoa(alice.ID), Key: a.Staff}).Want(t, http.StatusOK).Decode(t, &mine)
		if len(mine) != 0 {
			t.Errorf("alice's entries hold %+v", mine)
		}
		var anonymous []db.AuditEntry
		a.Do(handlerstest.Req{Method: "GET", Path: "/api/audit?actorType=anonymous", Key: a.Staff}).Want(t, http.StatusOK).Decode(t, &anonymous)
		if len(anonymous) != 2 {
			t.Errorf("anonymous's entries: %+v, want the 2 failures", anonymous)
		}

		// From a trusted proxy, its request id is the entry's.
		p := handlerstest.NewOn(t, open, handlerstest.WithProxies(t, "0.0.0.0")) // app.Test's peer
		p.AddStaff(handlerstest.StaffName, handlerstest.StaffPassword)
		before = lastAuditID(t, p)
		pb := p.Browser(t)
		pb.Header["X-Request-Id"] = "lb-7"
		pb.Login(handlerstest.StaffName, "not the password at all").WantStatus(http.StatusUnauthorized)
		if es := auditEntries(t, p, before); len(es) != 1 || es[0].RequestID != "lb-7" {
			t.Errorf("behind a trusted proxy: entries %+v, want one with request id lb-7", es)
		}
	})
}
