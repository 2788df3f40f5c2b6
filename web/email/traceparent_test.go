package email

import (
	"context"
	"testing"
	"time"

	"petstore/db"
	"petstore/web/email/smtptest"
)

// TestTraceparentHeader: an email caused by a traced change carries its
// traceparent (Traceparent); one without, or with a stored value that is
// not a traceparent (a line break and a Bcc), carries none, and no header
// is injected.
func TestTraceparentHeader(t *testing.T) {
	srv := smtptest.Start(t, smtptest.Options{})
	sender := &Sender{Transport: mustParse(t, srv.URL()), From: "shop@example.com", Timeout: 5 * time.Second}
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	hostile := tp + "\r\nBcc: evil@example.com"
	for i, stored := range []*string{new(tp), nil, &hostile} {
		e := &db.Email{ToAddr: "eve@example.com", Subject: "Hi", Text: "text", HTML: "<p>html</p>",
			MessageID: "<email-1.0@example.com>", CreatedAt: time.Now(), Traceparent: stored}
		if r := sender.Send(context.Background(), e); r.Outcome != db.AttemptSent {
			t.Fatalf("send %d: %+v", i, r)
		}
		m := srv.Wait(t, i+1, 10*time.Second)[i]
		h := m.Header()
		want := ""
		if i == 0 {
			want = tp
		}
		if got := h.Get("Traceparent"); got != want || h.Get("Bcc") != "" || len(m.To) != 1 {
			t.Errorf("email %d: Traceparent %q (want %q), Bcc %q, recipients %v", i, got, want, h.Get("Bcc"), m.To)
		}
	}
}
