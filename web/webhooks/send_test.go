package webhooks

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"petstore/db"
)

// receiver is an httptest server that counts its requests.
func receiver(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestPostRefusesPrivateAddressesAtDialTime(t *testing.T) {
	srv, hits := receiver(t, func(w http.ResponseWriter, _ *http.Request) {})
	// "localhost" resolves to 127.0.0.1 only when connecting: the check
	// sees the address, whatever the name.
	for _, url := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		a := post(context.Background(), NewClient(false), message{url: url, body: []byte(`{}`)})
		if a.err != db.AttemptRefusedAddress || a.status != 0 {
			t.Errorf("%s: answer %+v, want refused_address", url, a)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the receiver got %d requests", hits.Load())
	}
	if a := post(context.Background(), NewClient(true), message{url: srv.URL, body: []byte(`{}`)}); !a.ok() || hits.Load() != 1 {
		t.Fatalf("allowed private: answer %+v, %d requests", a, hits.Load())
	}
}

func TestPostAnswers(t *testing.T) {
	t.Parallel() // TimeoutAfter10s waits the whole 10 s
	client := NewClient(true)
	t.Run("Headers", func(t *testing.T) {
		var got http.Header
		var body string
		srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
			got = r.Header.Clone()
			b, _ := io.ReadAll(r.Body)
			body = string(b)
			w.WriteHeader(http.StatusNoContent)
		})
		a := post(context.Background(), client, message{url: srv.URL, id: "7", timestamp: 1767323045, signature: "v1,abc", body: []byte(`{"x":1}`)})
		if !a.ok() || a.status != 204 {
			t.Fatalf("answer %+v", a)
		}
		for k, want := range map[string]string{"Content-Type": "application/json", "User-Agent": UserAgent,
			"Webhook-Id": "7", "Webhook-Timestamp": "1767323045", "Webhook-Signature": "v1,abc"} {
			if got.Get(k) != want {
				t.Errorf("%s = %q, want %q", k, got.Get(k), want)
			}
		}
		if body != `{"x":1}` {
			t.Errorf("body = %s", body)
		}
		if got.Get("traceparent") != "" {
			t.Errorf("traceparent %q sent for an untraced change", got.Get("traceparent"))
		}
		// A traced change's attempt carries its traceparent (SPEC §21).
		const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		post(context.Background(), client, message{url: srv.URL, id: "8", body: []byte(`{}`), traceparent: tp})
		if got.Get("traceparent") != tp {
			t.Errorf("traceparent = %q, want %q", got.Get("traceparent"), tp)
		}
	})
	t.Run("RedirectNotFollowed", func(t *testing.T) {
		target, hits := receiver(t, func(w http.ResponseWriter, _ *http.Request) {})
		srv, _ := receiver(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
		})
		a := post(context.Background(), client, message{url: srv.URL})
		if a.err != db.AttemptRedirect || a.status != 307 || hits.Load() != 0 {
			t.Fatalf("answer %+v, target hit %d times", a, hits.Load())
		}
	})
	t.Run("AnswerReadTo64KiB", func(t *testing.T) {
		var wrote atomic.Int64
		srv, _ := receiver(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			chunk := []byte(strings.Repeat("é", 512)) // 1 KiB
			for range 1024 {                          // 1 MiB, if anyone read it
				n, err := w.Write(chunk)
				wrote.Add(int64(n))
				if err != nil {
					return
				}
			}
		})
		a := post(context.Background(), client, message{url: srv.URL})
		if a.err != db.AttemptHTTPStatus || a.status != 500 {
			t.Fatalf("answer %+v", a)
		}
		if a.snippet == nil || len(*a.snippet) != SnippetSize || *a.snippet != strings.Repeat("é", SnippetSize/2) {
			t.Fatalf("snippet of %d bytes", len(*a.snippet))
		}
	})
	t.Run("SnippetCutAtACharacter", func(t *testing.T) {
		s := snippet([]byte("a" + strings.Repeat("é", SnippetSize)))
		if len(*s) != SnippetSize-1 || !strings.HasSuffix(*s, "é") {
			t.Fatalf("snippet of %d bytes ends %q", len(*s), (*s)[len(*s)-4:])
		}
	})
	t.Run("TLS", func(t *testing.T) {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		defer srv.Close()
		if a := post(context.Background(), client, message{url: srv.URL}); a.err != db.AttemptTLS {
			t.Fatalf("untrusted certificate: answer %+v", a)
		}
	})
	t.Run("Connection", func(t *testing.T) {
		srv, _ := receiver(t, func(http.ResponseWriter, *http.Request) {})
		url := srv.URL
		srv.Close()
		if a := post(context.Background(), client, message{url: url}); a.err != db.AttemptConnection {
			t.Fatalf("closed port: answer %+v", a)
		}
	})
	t.Run("TimeoutAfter10s", func(t *testing.T) {
		t.Parallel()
		if testing.Short() {
			t.Skip("waits 10 s")
		}
		release := make(chan struct{})
		srv, _ := receiver(t, func(http.ResponseWriter, *http.Request) { <-release })
		defer close(release)
		start := time.Now()
		a := post(context.Background(), client, message{url: srv.URL})
		if took := time.Since(start); a.err != db.AttemptTimeout || took < AttemptTimeout || took > AttemptTimeout+3*time.Second {
			t.Fatalf("answer %+v after %v, want timeout after %v", a, took, AttemptTimeout)
		}
	})
}
