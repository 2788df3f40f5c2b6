package handlers_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// These tests drive request bodies over real connections: the photo upload
// reads up to 8 MiB, every other route 64 KiB, and a body is refused as
// soon as its headers show it too long, before any of it is read. What a
// refused request leaves unread is never taken for the next request.

// TestBodyLimitsWire covers the photo upload's body on the wire, on both
// databases: a Content-Length over 8 MiB is answered from the headers
// alone; a chunked body is read, up to 8 MiB; exactly 8 MiB is read whole.
func TestBodyLimitsWire(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		addr := strings.TrimPrefix(a.Listen(), "http://")
		head := fmt.Sprintf("POST /api/pets/%d/photos HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Type: image/jpeg", rex.ID, a.Staff)

		t.Run("announced over 8 MiB", func(t *testing.T) {
			// Only 16 bytes follow the headers: the answer cannot wait for more.
			r := wireAnswer(t, addr, head+fmt.Sprintf("\r\nContent-Length: %d", 8<<20+1), strings.NewReader(strings.Repeat("x", 16)))
			wantWireError(t, r, 413, "payload_too_large")
			if !strings.Contains(string(r.Body), "8 MiB") || r.Header.Get("Connection") != "close" {
				t.Errorf("413 says %s with Connection %q, want 8 MiB and close", r.Body, r.Header.Get("Connection"))
			}
		})
		t.Run("chunked photo", func(t *testing.T) {
			r := wireAnswer(t, addr, head+"\r\nTransfer-Encoding: chunked", chunked(bytes.NewReader(handlerstest.JPEGOf(t, 120, 80))))
			if r.Status != http.StatusCreated {
				t.Fatalf("chunked upload: %d %s", r.Status, r.Body)
			}
		})
		t.Run("chunked past 8 MiB", func(t *testing.T) {
			r, err := sendRaw(t, addr, head+"\r\nTransfer-Encoding: chunked", chunked(io.LimitReader(zeros{}, 9<<20)))
			if err != nil {
				t.Logf("connection closed without an answer: %v", err) // the client was still sending
				return
			}
			wantWireError(t, r, 413, "payload_too_large")
		})
		t.Run("exactly 8 MiB", func(t *testing.T) {
			r := wireAnswer(t, addr, head+fmt.Sprintf("\r\nContent-Length: %d", 8<<20), io.LimitReader(zeros{}, 8<<20))
			wantWireError(t, r, 422, "validation_failed") // read whole, then found to be no image
		})
	})
}

// TestBodyLimitsJSONWire: a chunked JSON body reaches the handler as any
// other; one past 64 KiB announced on the photo upload's path with another
// method is refused all the same (the 8 MiB are the upload's alone); and a
// compressed body is refused before it is inflated: 64 KiB of gzip would
// be 64 MiB of zeros. On both databases.
func TestBodyLimitsJSONWire(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		addr := strings.TrimPrefix(a.Listen(), "http://")
		key := "\r\nX-API-Key: " + a.Staff + "\r\nContent-Type: application/json"

		r := wireAnswer(t, addr, "POST /api/categories HTTP/1.1\r\nHost: x"+key+"\r\nTransfer-Encoding: chunked", chunked(strings.NewReader(`{"name":"Chunked"}`)))
		if r.Status != http.StatusCreated || !strings.Contains(string(r.Body), `"Chunked"`) {
			t.Errorf("chunked JSON: %d %s", r.Status, r.Body)
		}
		r = wireAnswer(t, addr, fmt.Sprintf("PUT /api/pets/%d/photos HTTP/1.1\r\nHost: x%s\r\nContent-Length: %d", rex.ID, key, 65<<10), strings.NewReader("{"))
		wantWireError(t, r, 413, "payload_too_large")

		var bomb bytes.Buffer
		zw := gzip.NewWriter(&bomb)
		_, _ = io.Copy(zw, io.LimitReader(zeros{}, 64<<20))
		_ = zw.Close()
		for _, enc := range []string{"gzip", "br", "deflate"} {
			began := time.Now()
			r = wireAnswer(t, addr, fmt.Sprintf("POST /api/categories HTTP/1.1\r\nHost: x%s\r\nContent-Encoding: %s\r\nContent-Length: %d", key, enc, bomb.Len()), bytes.NewReader(bomb.Bytes()))
			wantWireError(t, r, 415, "unsupported_media_type")
			t.Logf("%s: %d bytes refused in %s", enc, bomb.Len(), time.Since(began).Round(time.Millisecond))
		}
	})
}

// TestRefusedBodyIsNotARequest sends, on one connection, an upload refused
// from its headers (415) whose body is an HTTP request of its own, then a
// real request: the refused body is never parsed as a request. A route that
// takes a large body closes the connection after refusing it instead of
// reading it (SPEC §17), so only the 415 is answered, whether the body is a
// little over fasthttp's 8 KiB read-ahead or past what any drain would
// read. On both databases.
func TestRefusedBodyIsNotARequest(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		addr := strings.TrimPrefix(a.Listen(), "http://")
		smuggled := "GET /api/keys HTTP/1.1\r\nHost: x\r\nX-API-Key: " + a.Staff + "\r\n\r\n"
		upload := func(body string) string {
			return fmt.Sprintf("POST /api/pets/%d/photos HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s",
				rex.ID, a.Staff, len(body), body)
		}
		next := "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"

		// The request hides behind fasthttp's 8 KiB read-ahead.
		answers := pipeline(t, addr, upload(strings.Repeat("x", 8<<10)+smuggled)+next)
		if len(answers) != 1 || answers[0].Status != 415 || answers[0].Header.Get("Connection") != "close" {
			t.Fatalf("want one 415 and the connection closed; got %s", describe(answers))
		}

		answers = pipeline(t, addr, upload(strings.Repeat("x", 300<<10)+smuggled)+next)
		if len(answers) != 1 || answers[0].Status != 415 || answers[0].Header.Get("Connection") != "close" {
			t.Fatalf("want one 415 and the connection closed; got %s", describe(answers))
		}
	})
}

// wireAnswer sends a request (writing its body in the background: the
// server may answer before reading it) and wants an answer. Go's reader
// takes "Connection: close" out of the header; it is put back.
func wireAnswer(t *testing.T, addr, head string, body io.Reader) *handlerstest.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	go func() {
		w := bufio.NewWriterSize(conn, 64<<10)
		_, _ = io.WriteString(w, head+"\r\n\r\n")
		if body != nil {
			_, _ = io.Copy(w, body)
		}
		_ = w.Flush()
	}()
	r, err := readAnswer(bufio.NewReader(conn))
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	return r
}

// readAnswer reads one response.
func readAnswer(br *bufio.Reader) (*handlerstest.Response, error) {
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if res.Close {
		res.Header.Set("Connection", "close")
	}
	return &handlerstest.Response{Status: res.StatusCode, Header: res.Header, Body: body}, err
}

// wantWireError fails unless r is the Error object with status and code
// and the API's headers.
func wantWireError(t *testing.T, r *handlerstest.Response, status int, code string) {
	t.Helper()
	r.Want(t, status, code)
	for _, h := range []string{"X-Request-Id", "X-API-Version", "X-RateLimit-Limit", "RateLimit"} {
		if r.Header.Get(h) == "" {
			t.Errorf("%d: header %s missing", status, h)
		}
	}
}

// pipeline writes raw to one connection and reads every answer until the
// server closes it.
func pipeline(t *testing.T, addr, raw string) []*handlerstest.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	go func() { _, _ = io.WriteString(conn, raw) }()
	br := bufio.NewReader(conn)
	var out []*handlerstest.Response
	for {
		r, err := readAnswer(br)
		if err != nil {
			return out
		}
		out = append(out, r)
	}
}

// describe lists answers for a failure message.
func describe(rs []*handlerstest.Response) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%d %s", r.Status, sweepShort(string(r.Body))))
	}
	return fmt.Sprintf("%d answers: %v", len(rs), parts)
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
