// Package smtptest runs a real SMTP server (github.com/emersion/go-smtp)
// inside a test process, for the tests of web/email and cmd/petstore: it
// keeps every message accepted, can answer DATA with a chosen reply (451,
// 550), hold its answer (a send cut off by a kill), and offer
// authentication with or without STARTTLS.
package smtptest

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message the server accepted.
type Message struct {
	From string
	To   []string
	Raw  []byte
}

// Header is the message's header, parsed.
func (m Message) Header() mail.Header {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		return mail.Header{}
	}
	return msg.Header
}

// Parts returns the message's text/plain and text/html parts, decoded.
func (m Message) Parts() (text, html string, err error) {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		return "", "", err
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return "", "", errors.New("smtptest: not a multipart message")
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return text, html, nil
		}
		if err != nil {
			return "", "", err
		}
		// multipart decodes a quoted-printable part itself.
		if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
			return "", "", errors.New("smtptest: base64 part")
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return "", "", err
		}
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		switch ct {
		case "text/plain":
			text = string(b)
		case "text/html":
			html = string(b)
		}
	}
}

// Options shape the server.
type Options struct {
	// Answer, when set, is asked at each DATA (n counts them from 1): a
	// non-nil error is the server's answer and the message is not kept.
	Answer func(n int) *smtp.SMTPError
	// Hold, when set, is asked at each DATA: while it returns a channel,
	// the answer waits until that channel is closed.
	Hold func(n int) <-chan struct{}
	// Username and Password, when set, are required (PLAIN).
	Username, Password string
	// TLS, when set, offers STARTTLS with it.
	TLS *tls.Config
}

// Server is a running SMTP server.
type Server struct {
	Addr string
	opts Options
	srv  *smtp.Server

	mu    sync.Mutex
	msgs  []Message
	datas int
	authn int
	added chan struct{}
}

// Start runs a server on 127.0.0.1 until the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s := &Server{opts: opts, added: make(chan struct{}, 1)}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }))
	s.srv.Domain = "localhost"
	s.srv.ReadTimeout, s.srv.WriteTimeout = 30*time.Second, 30*time.Second
	s.srv.MaxMessageBytes = 1 << 20
	s.srv.AllowInsecureAuth = opts.TLS == nil
	s.srv.TLSConfig = opts.TLS
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	go func() { _ = s.srv.Serve(ln) }()
	tb.Cleanup(func() { _ = s.srv.Close() })
	return s
}

// URL is a PETSTORE_SMTP_URL for the server without TLS (a local relay).
func (s *Server) URL() string { return "smtp://" + s.Addr + "?tls=none" }

// Messages returns the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Datas counts the DATA commands the server answered or holds.
func (s *Server) Datas() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.datas
}

// Auths counts the successful sign-ins.
func (s *Server) Auths() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authn
}

// Wait waits until n messages were accepted, or fails the test after
// timeout.
func (s *Server) Wait(tb testing.TB, n int, timeout time.Duration) []Message {
	tb.Helper()
	deadline := time.After(timeout)
	for {
		if m := s.Messages(); len(m) >= n {
			return m
		}
		select {
		case <-s.added:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			tb.Fatalf("smtptest: %d messages after %v, want %d", len(s.Messages()), timeout, n)
		}
	}
}

type session struct {
	s    *Server
	from string
	to   []string
	auth bool
}

func (ss *session) AuthMechanisms() []string {
	if ss.s.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != ss.s.opts.Username || pass != ss.s.opts.Password {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "bad credentials"}
		}
		ss.auth = true
		ss.s.mu.Lock()
		ss.s.authn++
		ss.s.mu.Unlock()
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.opts.Username != "" && !ss.auth {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s := ss.s
	s.mu.Lock()
	s.datas++
	n := s.datas
	s.mu.Unlock()
	if s.opts.Hold != nil {
		if ch := s.opts.Hold(n); ch != nil {
			<-ch
		}
	}
	if s.opts.Answer != nil {
		if e := s.opts.Answer(n); e != nil {
			return e
		}
	}
	s.mu.Lock()
	s.msgs = append(s.msgs, Message{From: ss.from, To: append([]string(nil), ss.to...), Raw: b})
	s.mu.Unlock()
	select {
	case s.added <- struct{}{}:
	default:
	}
	return nil
}

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }
