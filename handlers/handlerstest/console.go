package handlerstest

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"petstore/db"
	"petstore/web/browser/browsertest"
)

// Test staff credentials; the hash uses bcrypt's minimum cost to keep the
// tests fast.
const (
	StaffName     = "alice"
	StaffPassword = "correct horse battery staple"
)

// AddStaff creates a console user.
func (a *App) AddStaff(username, password string) *db.StaffUser {
	a.T.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		a.T.Fatal(err)
	}
	u, err := a.Store.CreateStaffUser(context.Background(), username, string(hash))
	if err != nil {
		a.T.Fatalf("create staff user: %v", err)
	}
	return u
}

// SignedIn is a browser signed in as a fresh staff user (alice).
func (a *App) SignedIn(t *testing.T) *Browser {
	t.Helper()
	a.AddStaff(StaffName, StaffPassword)
	b := a.Browser(t)
	// Follow the redirect as a browser does: signing in renews the CSRF token.
	b.Follow(b.Login(StaffName, StaffPassword).WantStatus(http.StatusSeeOther)).WantStatus(http.StatusOK)
	return b
}

// Login loads the sign-in form (for the CSRF token) and posts it.
func (b *Browser) Login(username, password string) *browsertest.Page {
	b.T.Helper()
	b.Get("/staff/login").WantStatus(http.StatusOK)
	return b.Post("/staff/login", url.Values{"username": {username}, "password": {password}})
}

// BanKey drives a key on a tiny limit into a ban through the API.
func (a *App) BanKey(plain string, perMinute int64, strikes int) {
	a.T.Helper()
	for i := int64(0); i < perMinute; i++ {
		a.Do(Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(a.T, 200)
	}
	a.Do(Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(a.T, 429, "rate_limited")
	for i := 1; i < strikes; i++ {
		a.Do(Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(a.T, 429, "rate_limited")
	}
	a.Do(Req{Method: "GET", Path: "/api/pets", Key: plain}).Want(a.T, 403, "api_key_banned")
}

// AddStaffAs creates a console user with a role (db.RoleAdmin,
// db.RoleClerk), its password not one-time.
func (a *App) AddStaffAs(username, password, role string) *db.StaffUser {
	a.T.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		a.T.Fatal(err)
	}
	u, err := a.Store.AddStaffUser(context.Background(), db.NewStaffUser{Username: username, Role: role, PasswordHash: string(hash)})
	if err != nil {
		a.T.Fatalf("create staff user: %v", err)
	}
	return u
}

// SignInAs is a browser signed in as a fresh user with that role and
// StaffPassword.
func (a *App) SignInAs(t *testing.T, username, role string) (*Browser, *db.StaffUser) {
	t.Helper()
	u := a.AddStaffAs(username, StaffPassword, role)
	b := a.Browser(t)
	// Follow the redirects as a browser does (to the step a user must take
	// first, when there is one): signing in renews the CSRF token.
	p := b.Follow(b.Login(username, StaffPassword).WantStatus(http.StatusSeeOther))
	for i := 0; i < 3 && p.Status == http.StatusSeeOther; i++ {
		p = b.Follow(p)
	}
	p.WantStatus(http.StatusOK)
	return b, u
}
