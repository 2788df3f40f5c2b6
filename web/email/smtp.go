package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"petstore/db"
	"petstore/web"
)

// SendTimeout bounds one attempt: dial, TLS, the SMTP dialogue and the
// message.
const SendTimeout = 10 * time.Second

// Transport is where emails go: PETSTORE_SMTP_URL parsed (ParseURL).
type Transport struct {
	Host string
	Port int
	// TLS: "starttls" (required: the attempt fails rather than send in
	// the clear), "implicit" (smtps://) or "none" (?tls=none, a local
	// relay only, never with credentials).
	TLS                string
	Username, Password string
	// TLSConfig overrides the TLS settings (tests trust their own CA).
	TLSConfig *tls.Config
}

// ParseURL reads PETSTORE_SMTP_URL: smtp://user:pass@host:587 (STARTTLS
// required), smtps://user:pass@host:465 (implicit TLS) or
// smtp://host:25?tls=none (no TLS: a local relay, no credentials). Its
// errors name the problem, never the password.
func ParseURL(raw string) (*Transport, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL (smtp://user:pass@host:587, smtps://user:pass@host:465 or smtp://host:25?tls=none)")
	}
	t := &Transport{Host: u.Hostname()}
	switch u.Scheme {
	case "smtp":
		t.TLS, t.Port = "starttls", 587
	case "smtps":
		t.TLS, t.Port = "implicit", 465
	default:
		return nil, fmt.Errorf("scheme %q: use smtp:// or smtps://", u.Scheme)
	}
	if t.Host == "" {
		return nil, errors.New("no host")
	}
	if p := u.Port(); p != "" {
		if t.Port, err = strconv.Atoi(p); err != nil || t.Port < 1 || t.Port > 65535 {
			return nil, fmt.Errorf("port %q is not a port number", p)
		}
	}
	if u.User != nil {
		t.Username = u.User.Username()
		t.Password, _ = u.User.Password()
	}
	q := u.Query()
	for k := range q {
		if k != "tls" {
			return nil, fmt.Errorf("unknown parameter %q (only tls=none)", k)
		}
	}
	switch v := q.Get("tls"); {
	case !q.Has("tls"):
	case v == "none" && u.Scheme == "smtp":
		if t.Username != "" {
			return nil, errors.New("tls=none with credentials would send the password in the clear")
		}
		t.TLS = "none"
	default:
		return nil, fmt.Errorf("tls=%q: only tls=none, with smtp://", v)
	}
	return t, nil
}

// Sender sends one email per attempt over a Transport.
type Sender struct {
	Transport *Transport
	// From is PETSTORE_MAIL_FROM, the sender's address; the shop's name
	// is its display name.
	From string
	// Timeout overrides SendTimeout.
	Timeout time.Duration
}

// Result is what one attempt made of an email.
type Result struct {
	Outcome string // db.AttemptSent, AttemptTemporary or AttemptPermanent
	Code    int    // the SMTP reply code, 0 when the server gave none
	Answer  string // the server's answer or the error, as text
}

// TraceparentHeader is the header an email carries the traceparent of the
// change that caused it in (SPEC §21): the W3C name, without an X- prefix.
const TraceparentHeader gomail.Header = "Traceparent"

// message builds the go-mail message of e. Every header value goes
// through go-mail's setters, which check addresses (net/mail) and encode
// display names and the subject (RFC 2047); the values were cleaned of
// control characters when the email was rendered, and are again here.
func (s *Sender) message(e *db.Email) (*gomail.Msg, error) {
	m := gomail.NewMsg()
	if err := m.FromFormat(oneLine(e.FromName), s.From); err != nil {
		return nil, fmt.Errorf("from: %w", err)
	}
	if err := m.AddToFormat(oneLine(e.ToName), oneLine(e.ToAddr)); err != nil {
		return nil, fmt.Errorf("to: %w", err)
	}
	if r := oneLine(e.ReplyTo); r != "" {
		if err := m.ReplyTo(r); err != nil {
			return nil, fmt.Errorf("reply-to: %w", err)
		}
	}
	m.Subject(oneLine(e.Subject))
	m.SetMessageIDWithValue(strings.Trim(e.MessageID, "<>"))
	m.SetDateWithValue(e.CreatedAt)
	// The change that caused the email (SPEC §21), as the W3C header's
	// name: a reader of the message, or a mail system that traces, follows
	// it to the request. Rebuilt from the parsed span, so only hex digits
	// and dashes reach the header.
	if _, tp := web.CausedBy(e.Traceparent); tp != "" {
		m.SetGenHeader(TraceparentHeader, tp)
	}
	m.SetBodyString(gomail.TypeTextPlain, e.Text)
	m.AddAlternativeString(gomail.TypeTextHTML, e.HTML)
	return m, nil
}

// client makes a go-mail client for one attempt.
func (s *Sender) client() (*gomail.Client, error) {
	t := s.Transport
	opts := []gomail.Option{gomail.WithPort(t.Port), gomail.WithTimeout(cmpDuration(s.Timeout, SendTimeout)), gomail.WithHELO(helo(s.From))}
	switch t.TLS {
	case "implicit":
		opts = append(opts, gomail.WithSSL())
	case "none":
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if t.TLSConfig != nil {
		opts = append(opts, gomail.WithTLSConfig(t.TLSConfig))
	}
	if t.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(t.Username), gomail.WithPassword(t.Password))
	}
	return gomail.NewClient(t.Host, opts...)
}

func cmpDuration(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// helo is the name the client greets with: the sender's domain.
func helo(from string) string {
	if a, err := mail.ParseAddress(from); err == nil {
		if i := strings.LastIndexByte(a.Address, '@'); i >= 0 && a.Address[i+1:] != "" {
			return a.Address[i+1:]
		}
	}
	return "localhost"
}

// Send makes one attempt at e and says what came of it: a 2xx is sent, a
// 5xx permanent, a 4xx, a timeout, a refused or cut connection or a TLS
// failure temporary. A message that cannot be built (an address go-mail
// refuses) is permanent: no retry would change it.
func (s *Sender) Send(ctx context.Context, e *db.Email) Result {
	m, err := s.message(e)
	if err != nil {
		return Result{Outcome: db.AttemptPermanent, Answer: "not sent: " + err.Error()}
	}
	c, err := s.client()
	if err != nil {
		return Result{Outcome: db.AttemptPermanent, Answer: "not sent: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, cmpDuration(s.Timeout, SendTimeout))
	defer cancel()
	err = c.DialAndSendWithContext(ctx, m)
	if err == nil {
		return Result{Outcome: db.AttemptSent, Code: 250, Answer: "250 accepted"}
	}
	return classify(err)
}

// classify turns a failed attempt's error into its Result.
func classify(err error) Result {
	answer := err.Error()
	if len(answer) > 1000 {
		answer = answer[:1000]
	}
	var se *gomail.SendError
	if errors.As(err, &se) {
		code := se.ErrorCode()
		switch {
		case code >= 500:
			return Result{Outcome: db.AttemptPermanent, Code: code, Answer: answer}
		case code >= 400:
			return Result{Outcome: db.AttemptTemporary, Code: code, Answer: answer}
		}
	}
	// No SMTP answer: a timeout, a refused or cut connection, TLS (a
	// server without STARTTLS when it is required among them).
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return Result{Outcome: db.AttemptTemporary, Answer: "timeout: " + answer}
	}
	return Result{Outcome: db.AttemptTemporary, Answer: answer}
}
