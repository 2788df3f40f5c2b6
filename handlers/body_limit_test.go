package handlers_test

import (
	"bufio"
	"bytes"
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

// TestBodyLimitsWire covers the photo upload's line of the route table on
// the wire, on both databases: it takes 8 MiB where every other route
// takes 64 KiB, and its handler reads the body as web's upload routes do
// (web.ReadBody): a Content-Length over 8 MiB is answered from the headers
// alone, with the API's headers; a chunked photo is read; exactly 8 MiB is
// read whole. (The rules of reading bodies, chunked or announced, past a
// limit or compressed, and of what a refused body leaves on the
// connection: web/body_limit_test.go.)
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
		t.Run("exactly 8 MiB", func(t *testing.T) {
			r := wireAnswer(t, addr, head+fmt.Sprintf("\r\nContent-Length: %d", 8<<20), io.LimitReader(zeros{}, 8<<20))
			wantWireError(t, r, 422, "validation_failed") // read whole, then found to be no image
		})
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

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
