package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"petstore/db"
)

// shopper is a storefront visitor whose cookie jar the test keeps by hand,
// so it is plain which instance issued the cookie another one accepts.
type shopper struct {
	t      *testing.T
	c      *http.Client
	cookie string // the session cookie, name=value
	// name is the cookie kept: the shop's unless set (a console visitor
	// keeps the console's).
	name string
}

// csrfInput finds the token of the page's forms.
var csrfInput = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// visit sends a request with the cookie, keeps any new cookie and returns
// the answer (redirects are not followed).
func (b *shopper) visit(method, target string, form url.Values) answer {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if b.cookie != "" {
		req.Header.Set("Cookie", b.cookie)
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	name := b.name
	if name == "" {
		name = "petstore_shop"
	}
	for _, ck := range res.Cookies() {
		if ck.Name == name {
			b.cookie = ck.Name + "=" + ck.Value
		}
	}
	return answer{status: res.StatusCode, header: res.Header, body: out}
}

// TestMultiInstanceSession shops across both instances with one cookie:
// A issues the session and CSRF token, B accepts them and fills the cart,
// A shows that cart, B checks it out, and A lists the order under "My
// orders". Sessions are cookies sealed with the shared SESSION_KEYS.
func TestMultiInstanceSession(t *testing.T) {
	a, b := startPair(t, nil)
	staff, _ := issueKey(t, a.srv.Store, "staff", db.RoleStaff, 1_000_000, 10_000_000)
	c := newClient(t)
	pet := seedPet(t, c, a, staff, 5)
	visitor := &shopper{t: t, c: &http.Client{
		Transport:     c.Transport,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	petPage := fmt.Sprintf("/pets/%d", pet.ID)

	page := visitor.visit("GET", a.base+petPage, nil)
	m := csrfInput.FindSubmatch(page.body)
	if page.status != 200 || visitor.cookie == "" || m == nil {
		t.Fatalf("A's pet page: %d, cookie %q, CSRF token found %v", page.status, visitor.cookie, m != nil)
	}
	token := string(m[1])
	issuedByA := visitor.cookie

	// Without the cookie the token means nothing: the check is real.
	stranger := &shopper{t: t, c: visitor.c}
	if ans := stranger.visit("POST", b.base+"/cart", url.Values{"_csrf": {token}, "pet_id": {fmt.Sprint(pet.ID)}, "quantity": {"1"}}); ans.status != 403 {
		t.Fatalf("B took A's CSRF token without A's cookie: %d", ans.status)
	}

	add := visitor.visit("POST", b.base+"/cart", url.Values{"_csrf": {token}, "pet_id": {fmt.Sprint(pet.ID)}, "quantity": {"2"}})
	if add.status != http.StatusSeeOther {
		t.Fatalf("B refused A's session for POST /cart: %d\n%s", add.status, add.body)
	}
	if visitor.cookie == issuedByA {
		t.Fatal("B did not update the session cookie with the cart")
	}
	cart := visitor.visit("GET", a.base+"/cart", nil)
	if cart.status != 200 || !strings.Contains(string(cart.body), fmt.Sprintf(`data-pet-id="%d"`, pet.ID)) {
		t.Fatalf("A does not show the cart B filled: %d\n%s", cart.status, cart.body)
	}
	// Each render masks the session's token afresh (SPEC §17): the cart
	// page's token differs from the pet page's, and B takes it as well.
	m = csrfInput.FindSubmatch(cart.body)
	if m == nil || string(m[1]) == token {
		t.Fatalf("A's cart page has no freshly masked CSRF token (found %v)", m != nil)
	}
	cartToken := string(m[1])

	checkout := visitor.visit("POST", b.base+"/checkout", url.Values{"_csrf": {cartToken}, "name": {"Ada Lovelace"}, "email": {"ada@example.com"}})
	if checkout.status != http.StatusSeeOther {
		t.Fatalf("B's checkout with A's session: %d\n%s", checkout.status, checkout.body)
	}
	orders := visitor.visit("GET", a.base+"/orders", nil)
	if orders.status != 200 || strings.Count(string(orders.body), `data-testid="order"`) != 1 {
		t.Fatalf("A's My orders does not list the order placed on B: %d\n%s", orders.status, orders.body)
	}
	var it db.InventoryItem
	call(c, "GET", fmt.Sprintf("%s/api/store/inventory/%d", a.base, pet.ID), staff, nil).must(t, 200, &it)
	if it.Quantity != 3 {
		t.Errorf("stock after checking out 2 of 5: %d", it.Quantity)
	}
}
