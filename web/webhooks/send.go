package webhooks

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"petstore/db"
)

// Bounds of one attempt (SPEC §15).
const (
	// AttemptTimeout bounds an attempt from dialling to the end of the
	// answer read: success is a 2xx within it.
	AttemptTimeout = 10 * time.Second
	// MaxAnswer is how much of an answer is read.
	MaxAnswer = 64 << 10
	// SnippetSize is how much of the last answer a delivery keeps.
	SnippetSize = 1 << 10
	// UserAgent names the sender.
	UserAgent = "petstore-webhooks/1.0"
)

// errRefusedAddress is the dial-time refusal of an address the store does
// not send to.
var errRefusedAddress = errors.New("refused address")

// NewClient is the HTTP client of the attempts: it follows no redirect,
// uses no proxy from the environment (one would connect on our behalf,
// past the address check), and, unless allowPrivate, refuses to connect to
// an address that is not globally reachable (Public): loopback, private,
// link-local, multicast, unspecified, shared, reserved and the rest. The
// check runs in the dialer's Control hook, on the address being connected
// to after DNS: a name that re-binds to a private address between a check
// and the connection cannot slip past it.
func NewClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: AttemptTimeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = refusePrivate
	}
	return &http.Client{
		Transport: &http.Transport{
			DialContext:         dialer.DialContext,
			ForceAttemptHTTP2:   true,
			TLSHandshakeTimeout: AttemptTimeout,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// refusePrivate is the dialer's Control hook: address is the IP and port
// about to be connected to.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", errRefusedAddress, address)
	}
	if !Public(ap.Addr()) {
		return fmt.Errorf("%w: %s", errRefusedAddress, ap.Addr())
	}
	return nil
}

// answer is what one attempt got.
type answer struct {
	status   int    // the HTTP status, 0 when none came
	err      string // one of db's Attempt* errors, "" for a 2xx
	snippet  *string
	duration time.Duration
}

func (a answer) ok() bool { return a.err == "" }

// message is one attempt's request.
type message struct {
	url       string
	id        string
	timestamp int64
	signature string
	body      []byte
	// traceparent is the change's span (SPEC §21), "" for none.
	traceparent string
}

// post makes one attempt, bounded by AttemptTimeout, and reads at most
// MaxAnswer of the answer.
func post(ctx context.Context, client *http.Client, m message) answer {
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(m.body))
	if err != nil {
		return answer{err: db.AttemptConnection, duration: time.Since(start)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("webhook-id", m.id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(m.timestamp, 10))
	req.Header.Set("webhook-signature", m.signature)
	if m.traceparent != "" {
		req.Header.Set("traceparent", m.traceparent)
	}
	res, err := client.Do(req)
	if err != nil {
		return answer{err: classify(err), duration: time.Since(start)}
	}
	defer res.Body.Close()
	// A body cut off by the deadline still leaves the status, which is
	// what decides.
	b, _ := io.ReadAll(io.LimitReader(res.Body, MaxAnswer))
	a := answer{status: res.StatusCode, duration: time.Since(start), snippet: snippet(b)}
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
	case res.StatusCode >= 300 && res.StatusCode < 400:
		a.err = db.AttemptRedirect
	default:
		a.err = db.AttemptHTTPStatus
	}
	return a
}

// snippet is the start of an answer as text: at most SnippetSize bytes,
// cut at a character boundary, invalid UTF-8 replaced.
func snippet(b []byte) *string {
	if len(b) > SnippetSize {
		cut := SnippetSize
		for cut > SnippetSize-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b = b[:cut]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return &s
}

// classify names why an attempt got no answer.
func classify(err error) string {
	var (
		dnsErr   *net.DNSError
		netErr   net.Error
		verify   *tls.CertificateVerificationError
		record   tls.RecordHeaderError
		alert    tls.AlertError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case errors.Is(err, errRefusedAddress):
		return db.AttemptRefusedAddress
	case errors.As(err, &dnsErr):
		return db.AttemptDNS
	case errors.As(err, &verify), errors.As(err, &record), errors.As(err, &alert),
		errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid):
		return db.AttemptTLS
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return db.AttemptTimeout
	default:
		return db.AttemptConnection
	}
}
