// Package counters is the machinery under the store's change counters
// (auth_changes and catalog_changes): a request's snapshot, which reads
// them at most once per request, and shared reads, which let concurrent
// requests share one round trip. What the counters mean is the store's.
package counters

import (
	"context"
	"sync"
)

// Values are the change counters one read returns together: auth_changes
// (keys and bans) and catalog_changes (what the catalog and inventory GETs
// show). An API request needs the first to authenticate and, on a
// conditional GET, the second; reading both in one statement costs the
// request one query (or, shared, a fraction of one) instead of two.
type Values struct {
	Auth    int64 `db:"auth"`
	Catalog int64 `db:"catalog"`
}

type snapshotKey struct{}

// Snapshot is the counters as one request first read them, or the outage
// that kept it from reading them: a request that found the database
// unreachable does not wait for it a second time (a hung server costs the
// connect timeout once per request, not once per query). A nil *Snapshot
// (a context without one) remembers nothing.
type Snapshot struct {
	catalog bool // the request reads the catalog's counter too

	mu        sync.Mutex
	c         Values
	authOK    bool
	catalogOK bool
	err       error
}

// With returns a context for one request in which the counters are read
// at most once; with catalog the read includes the catalog's counter.
func With(ctx context.Context, catalog bool) context.Context {
	return context.WithValue(ctx, snapshotKey{}, &Snapshot{catalog: catalog})
}

// Of returns the request's snapshot, nil when ctx carries none.
func Of(ctx context.Context) *Snapshot {
	snap, _ := ctx.Value(snapshotKey{}).(*Snapshot)
	return snap
}

// Remember records v as the request's auth counter unless one was read
// before.
func (snap *Snapshot) Remember(v int64) {
	if snap == nil {
		return
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	if !snap.authOK {
		snap.c.Auth, snap.authOK = v, true
	}
}

// RememberAll records the counters c (the catalog's only when withCatalog
// says it was read), each unless it was read before.
func (snap *Snapshot) RememberAll(c Values, withCatalog bool) {
	if snap == nil {
		return
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	if !snap.authOK {
		snap.c.Auth, snap.authOK = c.Auth, true
	}
	if withCatalog && !snap.catalogOK {
		snap.c.Catalog, snap.catalogOK = c.Catalog, true
	}
}

// WantsCatalog reports whether the request reads the catalog's counter.
func (snap *Snapshot) WantsCatalog() bool { return snap != nil && snap.catalog }

// Fail records err, an outage, unless the counters were read or an
// outage recorded already.
func (snap *Snapshot) Fail(err error) {
	if snap == nil {
		return
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	if !(snap.authOK && snap.catalogOK) && snap.err == nil {
		snap.err = err
	}
}

// Get returns the request's counters, which of them it has read, and the
// outage that kept it from reading them.
func (snap *Snapshot) Get() (c Values, authOK, catalogOK bool, err error) {
	if snap == nil {
		return Values{}, false, false, nil
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	return snap.c, snap.authOK, snap.catalogOK, snap.err
}
