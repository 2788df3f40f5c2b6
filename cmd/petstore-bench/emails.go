package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emersion/go-smtp"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"petstore/db"
)

// Rows of the emails (SPEC §19, issue 39). Without PETSTORE_SMTP_URL the
// server keeps every email in the database (rendered, written, no job, no
// send): the shipped default, and the "off" the rows with a sink compare
// with. API orders have no buyer and make no email: their rows show what
// the relay's look at each order event costs.
const (
	emailCheckoutsKept = "POST /checkout (storefront), emails kept (no SMTP)"
	emailCheckoutsSent = "POST /checkout (storefront), emails sent to an SMTP sink"
	emailOrdersKept    = "POST /api/store/orders, emails kept (no SMTP)"
	emailOrdersSent    = "POST /api/store/orders, emails sent to an SMTP sink"
	emailDrain         = "emails: 10,000 queued emails drained to an SMTP sink"
	// emailBacklog is how many checkouts (one confirmation each) wait
	// when the drain starts.
	emailBacklog = 10_000
	// shopSessions is how many storefront shoppers the checkout rows
	// spread over, each a cookie with one pet in its cart.
	shopSessions = 200
)

// Targets of issue 39: checkouts and API orders with emails sent at 85%
// of their rate with emails kept, and a backlog drained at 300 emails/s.
const (
	targetEmailShare = 0.85
	targetEmailDrain = 300
)

// mailSink is the bench's SMTP server on loopback: it accepts every
// message at once and counts them, and those that came twice (by
// Message-Id).
type mailSink struct {
	addr     string
	srv      *smtp.Server
	mu       sync.Mutex
	ids      map[string]bool
	repeated int
	last     time.Time
}

func startMailSink() (*mailSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &mailSink{addr: ln.Addr().String(), ids: map[string]bool{}}
	m.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{m: m}, nil }))
	m.srv.Domain = "localhost"
	m.srv.ReadTimeout, m.srv.WriteTimeout = 30*time.Second, 30*time.Second
	m.srv.MaxMessageBytes = 1 << 20
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// url is the server's PETSTORE_SMTP_URL: a local relay, no TLS.
func (m *mailSink) url() string { return "smtp://" + m.addr + "?tls=none" }

// reset forgets what arrived.
func (m *mailSink) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids, m.repeated, m.last = map[string]bool{}, 0, time.Time{}
}

// count is how many distinct messages arrived, how many came again, and
// when the last new one came.
func (m *mailSink) count() (n, repeated int, last time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.ids), m.repeated, m.last
}

type sinkSession struct{ m *mailSink }

func (s *sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *sinkSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *sinkSession) Reset()                               {}
func (s *sinkSession) Logout() error                        { return nil }

// Data reads the message's header for its Message-Id and drops the rest.
func (s *sinkSession) Data(r io.Reader) error {
	br := bufio.NewReader(r)
	id := ""
	for {
		line, err := br.ReadString('\n')
		if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "Message-Id") {
			id = strings.TrimSpace(value)
		}
		if err != nil || strings.TrimSpace(line) == "" {
			break
		}
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return err
	}
	at := time.Now()
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.m.ids[id] {
		s.m.repeated++
	} else {
		s.m.ids[id] = true
		s.m.last = at
	}
	return nil
}

// shopper is one storefront session: its cookie (one pet in the cart) and
// its CSRF token. A checkout answered leaves the cart empty in the cookie
// it sets, which the bench ignores: sending the same cookie again checks
// the same cart out again, as another tab of the same shopper would.
type shopper struct {
	cookie, token string
	n             int
}

var csrfInput = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// newShoppers opens n storefront sessions as a browser does: a pet's page
// (the session and its CSRF token), then POST /cart with one unit of it.
func newShoppers(ctx context.Context, base string, pets []int64, n int) ([]shopper, error) {
	out := make([]shopper, n)
	for i := range out {
		jar, err := cookiejar.New(nil)
		if err != nil {
			return nil, err
		}
		client := &http.Client{Jar: jar, Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		pet := strconv.FormatInt(pets[i%len(pets)], 10)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/pets/"+pet, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		page, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		m := csrfInput.FindSubmatch(page)
		if resp.StatusCode != http.StatusOK || m == nil {
			return nil, fmt.Errorf("GET /pets/%s: %s, CSRF token found: %v", pet, resp.Status, m != nil)
		}
		token := string(m[1])
		form := url.Values{"pet_id": {pet}, "quantity": {"1"}, "_csrf": {token}}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, base+"/cart", strings.NewReader(form.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", shopperIP(uint64(1<<24-1-i)))
		if resp, err = client.Do(req); err != nil {
			return nil, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			return nil, fmt.Errorf("POST /cart: %s", resp.Status)
		}
		u, _ := url.Parse(base)
		var cookies []string
		for _, c := range jar.Cookies(u) {
			cookies = append(cookies, c.Name+"="+c.Value)
		}
		out[i] = shopper{cookie: strings.Join(cookies, "; "), token: token, n: i}
	}
	return out, nil
}

// checkoutTargeter is the requests of the checkout rows: POST /checkout
// of a random shopper's cart, as the storefront's htmx form sends it (its
// answer is 200 with HX-Redirect to the confirmation; a refusal is 4xx).
func checkoutTargeter(base string, shoppers []shopper) vegeta.Targeter {
	type prepared struct {
		h    http.Header
		body []byte
	}
	ps := make([]prepared, len(shoppers))
	for i, s := range shoppers {
		h := http.Header{}
		h.Set("Cookie", s.cookie)
		h.Set("HX-Request", "true")
		h.Set("Content-Type", "application/x-www-form-urlencoded")
		body := url.Values{"name": {fmt.Sprintf("Buyer %d", s.n)}, "email": {fmt.Sprintf("buyer%d@example.com", s.n)}, "_csrf": {s.token}}.Encode()
		ps[i] = prepared{h, []byte(body)}
	}
	var next atomic.Uint64
	return func(t *vegeta.Target) error {
		n := next.Add(1)
		p := ps[n%uint64(len(ps))]
		h := p.h.Clone()
		h.Set("X-Forwarded-For", shopperIP(n))
		*t = vegeta.Target{Method: http.MethodPost, URL: base + "/checkout", Body: p.body, Header: h}
		return nil
	}
}

// shopperIP is the address the n-th storefront post comes from: a
// storefront's posts come from many addresses, and each address may post
// 60 forms a minute (browser.WebLimits), so the bench, a trusted proxy
// (TRUSTED_PROXIES), forwards each from an address of its own in
// 10.0.0.0/8.
func shopperIP(n uint64) string {
	return fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)
}

// emailServerEnv is the server's environment beyond serverEnv: no cap a
// shopper could reach, the bench trusted as a proxy (shopperIP), and the
// sink when smtpURL is set.
func emailServerEnv(smtpURL string) []string {
	env := []string{"PETSTORE_SHOP_MAX_OPEN_UNITS=" + strconv.FormatInt(db.MaxInventoryQuantity, 10), "TRUSTED_PROXIES=127.0.0.1"}
	if smtpURL != "" {
		env = append(env, "PETSTORE_SMTP_URL="+smtpURL, "PETSTORE_MAIL_FROM=shop@bench.example")
	}
	return env
}

// benchEmailsOnly is the -emails mode on one fresh database: storefront
// checkouts and API orders with emails kept, then with emails sent to
// the bench's SMTP sink, then a backlog of emailBacklog checkouts placed
// with the server stopped, whose emails the next server makes and sends.
func benchEmailsOnly(ctx context.Context, database, bin, tmp string, o options, rep *report, logf func(string, ...any)) error {
	dir := filepath.Join(tmp, database)
	url, err := freshDatabase(ctx, database, dir, o)
	if err != nil {
		return err
	}
	keys, err := createKeys(ctx, bin, dir, serverEnv(url, ""))
	if err != nil {
		return err
	}
	sink, err := startMailSink()
	if err != nil {
		return err
	}
	defer sink.srv.Close()
	store, err := db.Open(ctx, url, wallClock)
	if err != nil {
		return err
	}
	defer store.Close()
	var stocked []int64
	for _, smtpURL := range []string{"", sink.url()} {
		srv, err := startServerWith(ctx, bin, dir, url, false, emailServerEnv(smtpURL))
		if err != nil {
			return err
		}
		if stocked == nil {
			if _, stocked, err = seedPets(ctx, newAPIClient(srv.base, keys.staff, 4), url, o.Pets); err != nil {
				srv.stop()
				return err
			}
		}
		err = emailRows(ctx, database, url, srv, store, sink, keys, stocked, smtpURL != "", o, rep, logf)
		srv.stop()
		if err != nil {
			return err
		}
	}
	return emailDrainRow(ctx, database, bin, dir, url, store, sink, stocked, rep, logf)
}

// emailRows measures the checkout and the orders rows on srv, sent to the
// sink or kept, each after the work of the one before is done.
func emailRows(ctx context.Context, database, databaseURL string, srv *server, store *db.Store, sink *mailSink, keys apiKeys,
	stocked []int64, sent bool, o options, rep *report, logf func(string, ...any)) error {
	shoppers, err := newShoppers(ctx, srv.base, stocked, shopSessions)
	if err != nil {
		return err
	}
	rows := []struct {
		name string
		tr   vegeta.Targeter
	}{
		{emailCheckoutsKept, checkoutTargeter(srv.base, shoppers)},
		{emailOrdersKept, ordersTargeter(srv.base, keys.customer, stocked)},
	}
	if sent {
		rows[0].name, rows[1].name = emailCheckoutsSent, emailOrdersSent
	}
	for _, r := range rows {
		if err := settle(ctx, store, database, r.name, rep, logf); err != nil {
			return err
		}
		logf("%s: %s", database, r.name)
		sink.reset()
		settings := o.attackSettings
		var cpu cpuUse
		settings.OnPeak = peakCPU(srv.cmd.Process.Pid, backendsOf(database, databaseURL), &cpu, nil)
		m, err := measure(ctx, r.tr, settings)
		if err != nil {
			return err
		}
		rep.Rows = append(rep.Rows, row{Endpoint: r.name, Database: database, Rate: m.Peak.Rate, P50: m.Peak.P50, P99: m.Peak.P99,
			HalfP99: m.Half.P99, Errors: m.Peak.Non2xx + m.Half.Non2xx,
			ServerCPU: perRequest(cpu.Server, m.Peak.Requests), PostgresCPU: perRequest(cpu.Database, m.Peak.Requests)})
		for _, ph := range []phase{m.Peak, m.Half} {
			if ph.FirstErr != "" {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s on %s: first failure: %s", r.name, database, ph.FirstErr))
				break
			}
		}
		if sent {
			n, _, _ := sink.count()
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s on %s: the sink received %s emails during the row (its three phases)", r.name, database, thousands(float64(n))))
		}
	}
	return settle(ctx, store, database, "the last row", rep, logf)
}

// settle waits, up to 5 minutes, until the relay has made the work of
// every committed event and no email is queued, so a row starts with
// nothing left of the one before; it notes what was still waiting.
func settle(ctx context.Context, store *db.Store, database, before string, rep *report, logf func(string, ...any)) error {
	t0 := time.Now()
	deadline := t0.Add(5 * time.Minute)
	for {
		var behind, queued int64
		err := store.DB().GetContext(ctx, &behind, `SELECT (SELECT COALESCE(MAX(id), 0) FROM events) - after_event_id FROM event_relay WHERE id = 1`)
		if err == nil {
			queued, err = store.CountEmails(ctx, db.EmailQueued)
		}
		if err != nil {
			return err
		}
		if behind == 0 && queued == 0 {
			if d := time.Since(t0); d > time.Second {
				logf("%s: settled before %s in %s", database, before, d.Round(100*time.Millisecond))
			}
			return nil
		}
		if time.Now().After(deadline) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: before %s, %d events were still to relay and %d emails queued after 5 minutes", database, before, behind, queued))
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// emailDrainRow places emailBacklog storefront checkouts through the store
// with no server running (their events wait for a relay), then starts the
// server with the sink and times how long until the sink received every
// confirmation: the relay makes the emails and their jobs, the senders
// send them. Its CPU columns are per email.
func emailDrainRow(ctx context.Context, database, bin, dir, databaseURL string, store *db.Store, sink *mailSink, stocked []int64,
	rep *report, logf func(string, ...any)) error {
	logf("%s: placing %d storefront checkouts with the server stopped", database, emailBacklog)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > emailBacklog || ctx.Err() != nil {
					return
				}
				pet := stocked[int(i)%len(stocked)]
				qty := int64(1)
				_, err := store.PlaceCheckout(ctx, fmt.Sprint("drain-", i), db.MaxInventoryQuantity,
					db.NewCheckout{Name: fmt.Sprint("Buyer ", i), Email: fmt.Sprintf("drain%d@example.com", i)},
					[]db.NewOrder{{PetID: &pet, Quantity: &qty}})
				if err != nil {
					errs <- fmt.Errorf("place checkout %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	sink.reset()
	srv, err := startServerWith(ctx, bin, dir, databaseURL, false, emailServerEnv(sink.url()))
	if err != nil {
		return err
	}
	defer srv.stop()
	began, m := time.Now(), startCPU(srv.cmd.Process.Pid, backendsOf(database, databaseURL))
	deadline := began.Add(5 * time.Minute)
	for {
		n, repeated, last := sink.count()
		if n >= emailBacklog || time.Now().After(deadline) {
			m.sample()
			cpu := m.used(time.Since(began))
			took := last.Sub(began)
			rate := float64(n) / took.Seconds()
			logf("%s: drained %d emails in %s: %s/s", database, n, took.Round(time.Millisecond), thousands(rate))
			rep.Rows = append(rep.Rows, row{Endpoint: emailDrain, Database: database, Rate: rate, Errors: emailBacklog - n + repeated,
				ServerCPU: perRequest(cpu.Server, n), PostgresCPU: perRequest(cpu.Database, n)})
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %s emails drained in %s from the server's start (relay, render, send); %d came twice; CPU %s",
				database, thousands(float64(n)), took.Round(time.Millisecond), repeated, cpu))
			return nil
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// emailTargets judges the emails' goals from the rows.
func (r *report) emailTargets() []target {
	var ts []target
	for _, d := range []string{dbSQLite, dbPostgres} {
		for _, pair := range [][2]string{{emailCheckoutsSent, emailCheckoutsKept}, {emailOrdersSent, emailOrdersKept}} {
			goal := fmt.Sprintf("%s ≥ %.0f%% of kept on %s", pair[0], targetEmailShare*100, d)
			sent, kept := r.find(pair[0], d), r.find(pair[1], d)
			if sent == nil || kept == nil || kept.Rate == 0 {
				ts = append(ts, target{goal, false, "not measured"})
				continue
			}
			share := sent.Rate / kept.Rate
			ts = append(ts, target{goal, share >= targetEmailShare && sent.Errors == 0,
				fmt.Sprintf("%.0f%% (%s of %s/s; CPU/req %s against %s)", 100*share, thousands(sent.Rate), thousands(kept.Rate), micros(sent.ServerCPU), micros(kept.ServerCPU))})
		}
	}
	for _, d := range []string{dbSQLite, dbPostgres} {
		goal := fmt.Sprintf("email backlog drains at ≥ %d/s on %s", targetEmailDrain, d)
		drain := r.find(emailDrain, d)
		if drain == nil {
			ts = append(ts, target{goal, false, "not measured"})
			continue
		}
		ts = append(ts, target{goal, drain.Rate >= targetEmailDrain && drain.Errors == 0,
			fmt.Sprintf("%s/s, %d lost or repeated", thousands(drain.Rate), drain.Errors)})
	}
	return ts
}
