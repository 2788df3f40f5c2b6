package email

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/web/email/smtptest"
)

// TestHostileTextNeverInjects: hostile names and addresses never add a
// header, a recipient or markup. Through the store, a CRLF in the
// buyer's name and a 300-character address are refused at checkout; a
// pet named <script>, and a buyer's name made of quotes, commas and
// "Bcc:", reach the email as text. Past the store (a row written by any
// other path), CR and LF in every header field still become spaces.
func TestHostileTextNeverInjects(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s := open(t)
		sh := newShop(t, s, `<script>alert(1)</script>`)
		if _, err := s.UpdateShopSettings(ctx, db.ShopSettings{Name: `Shop <b>bold</b>`, PickupAddress: "<img src=x onerror=alert(1)>"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateShopSettings(ctx, db.ShopSettings{Name: "Shop\r\nBcc: evil@example.com"}); db.ErrorCode(err) != db.EValidationFailed {
			t.Fatalf("a CRLF in the shop's name: %v, want validation_failed", err)
		}
		srv := smtptest.Start(t, smtptest.Options{})
		startEmails(t, s, srv, fastSchedule)

		for _, bad := range []db.NewCheckout{
			{Name: "Eve\r\nBcc: evil@example.com", Email: "eve@example.com"},
			{Name: "Eve", Email: strings.Repeat("a", 288) + "@example.com"},
			{Name: "Eve", Email: "eve@example.com\r\nBcc: evil@example.com"},
		} {
			if _, err := sh.checkout(t, "eve", bad); db.ErrorCode(err) != db.EValidationFailed {
				t.Fatalf("checkout %q <%q>: %v, want validation_failed", bad.Name, bad.Email, err)
			}
		}
		name := `Eve "the" <evil@example.com>, Bcc: evil@example.com` // go-mail writes the quotes as spaces
		if _, err := sh.checkout(t, "eve", db.NewCheckout{Name: name, Email: "eve@example.com"}); err != nil {
			t.Fatal(err)
		}
		m := srv.Wait(t, 1, 10*time.Second)[0]
		if len(m.To) != 1 || m.To[0] != "eve@example.com" {
			t.Fatalf("envelope recipients %v", m.To)
		}
		h := m.Header()
		to, err := h.AddressList("To")
		if err != nil || len(to) != 1 || to[0].Address != "eve@example.com" || !strings.Contains(to[0].Name, "<evil@example.com>, Bcc: evil@example.com") {
			t.Fatalf("To %v (%v)", to, err)
		}
		if h.Get("Bcc") != "" || h.Get("Cc") != "" {
			t.Fatalf("injected header: Bcc %q Cc %q", h.Get("Bcc"), h.Get("Cc"))
		}
		text, html, err := m.Parts()
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "html", html, "&lt;script&gt;alert(1)&lt;/script&gt;", "Shop &lt;b&gt;bold&lt;/b&gt;", "&lt;img src=x onerror=alert(1)&gt;")
		for _, raw := range []string{"<script>", "<b>bold", "<img src"} {
			if strings.Contains(html, raw) {
				t.Fatalf("html carries %q unescaped", raw)
			}
		}
		mustContain(t, "text", text, "<script>alert(1)</script>") // text/plain shows it as typed

		// Past the store: a row with CRLF in every header field.
		sender := &Sender{Transport: mustParse(t, srv.URL()), From: "shop@example.com", Timeout: 5 * time.Second}
		e := &db.Email{
			FromName: "Shop\r\nBcc: evil@example.com", ToName: "Eve\r\nCc: evil@example.com", ToAddr: "eve@example.com",
			ReplyTo: "reply@example.com", Subject: "Hi\r\nBcc: evil@example.com\r\n\r\n<body>", MessageID: "<email-1.0@example.com>",
			Text: "text", HTML: "<p>html</p>", CreatedAt: time.Now(),
		}
		if r := sender.Send(ctx, e); r.Outcome != db.AttemptSent {
			t.Fatalf("send: %+v", r)
		}
		m = srv.Wait(t, 2, 10*time.Second)[1]
		h = m.Header()
		if len(m.To) != 1 || h.Get("Bcc") != "" || h.Get("Cc") != "" {
			t.Fatalf("recipients %v, Bcc %q, Cc %q", m.To, h.Get("Bcc"), h.Get("Cc"))
		}
		if subj := h.Get("Subject"); strings.ContainsAny(subj, "\r\n") || !strings.Contains(subj, "Hi Bcc: evil@example.com <body>") {
			t.Fatalf("Subject %q", subj)
		}
	})
}

func mustParse(t *testing.T, raw string) *Transport {
	t.Helper()
	tr, err := ParseURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestStartTLSRequired: smtp:// with credentials never sends them, nor
// the message, to a server without STARTTLS (a temporary failure: the
// server may be fixed); with STARTTLS offered, it signs in over TLS and
// sends.
func TestStartTLSRequired(t *testing.T) {
	plain := smtptest.Start(t, smtptest.Options{Username: "shop", Password: "s3cret"})
	tr := mustParse(t, "smtp://shop:s3cret@"+plain.Addr)
	sender := &Sender{Transport: tr, From: "shop@example.com", Timeout: 5 * time.Second}
	e := &db.Email{ToAddr: "ann@example.com", Subject: "Hi", MessageID: "<m@example.com>", Text: "t", HTML: "h", CreatedAt: time.Now()}
	r := sender.Send(context.Background(), e)
	if r.Outcome != db.AttemptTemporary || plain.Auths() != 0 || plain.Datas() != 0 {
		t.Fatalf("without STARTTLS: %+v, %d sign-ins, %d DATA; want a temporary failure and nothing sent", r, plain.Auths(), plain.Datas())
	}

	// A server offering STARTTLS with a certificate the client trusts.
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS() // for its certificate only
	defer ts.Close()
	cert := ts.TLS.Certificates[0]
	secure := smtptest.Start(t, smtptest.Options{Username: "shop", Password: "s3cret", TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	tr = mustParse(t, "smtp://shop:s3cret@"+secure.Addr)
	tr.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "example.com", MinVersion: tls.VersionTLS12}
	sender.Transport = tr
	if r := sender.Send(context.Background(), e); r.Outcome != db.AttemptSent || secure.Auths() != 1 || len(secure.Messages()) != 1 {
		t.Fatalf("with STARTTLS: %+v, %d sign-ins", r, secure.Auths())
	}
}

// TestParseURL: the forms of PETSTORE_SMTP_URL, and what is refused.
func TestParseURL(t *testing.T) {
	for raw, want := range map[string]string{
		"smtp://u:p@mail.example.com":        "starttls 587",
		"smtp://mail.example.com:2525":       "starttls 2525",
		"smtps://u:p@mail.example.com":       "implicit 465",
		"smtp://localhost:25?tls=none":       "none 25",
		"smtp://u:p@localhost:25?tls=none":   "",
		"http://mail.example.com":            "",
		"smtp://":                            "",
		"smtp://mail.example.com:99999":      "",
		"smtps://mail.example.com?tls=none":  "",
		"smtp://mail.example.com?verify=off": "",
	} {
		tr, err := ParseURL(raw)
		got := ""
		if err == nil {
			got = tr.TLS + " " + itoa(tr.Port)
		}
		if got != want {
			t.Errorf("ParseURL(%q) = %q (%v), want %q", raw, got, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "p@") {
			t.Errorf("error names the password: %v", err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
