package handlers_test

import (
	"bufio"
	"encoding/json"
	"errors"
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

// These tests send malformed and oversized HTTP over real connections to
// the whole app: each gets the right 4xx Error object, or its connection
// is closed, and never a 500. (Slow and broken clients never reach a
// route: web/app_test.go and web/errors_test.go cut them off.)

// wireCase is one request written straight to a connection.
type wireCase struct {
	name string
	head string // request line and headers, without the blank line
	body io.Reader
	// allowed statuses; a closed or reset connection is allowed when
	// closeOK is set.
	allowed []int
	closeOK bool
}

// sendRaw writes the request in the background (the server may answer and
// close before reading it all) and reads the answer. It returns the
// response, or nil when the connection was closed without one.
func sendRaw(t *testing.T, addr string, head string, body io.Reader) (*handlerstest.Response, error) {
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
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return &handlerstest.Response{Status: res.StatusCode, Header: res.Header, Body: out}, nil
}

// TestAbuseWire sends malformed and oversized HTTP over a real connection.
// A 10 MB header does not fit fasthttp's 16 KiB read buffer: the answer is
// 431 Request Header Fields Too Large with the Error object (code
// bad_request) and the connection closes; a client still writing may see
// only the close. fasthttp forgets a request it cannot read, so these
// answers cannot tell an API call from a page: they are the Error object.
// With both Content-Length and chunked coding the chunked body wins (RFC
// 9112 §6.3): a balancer in front must not read it the other way. It runs
// on both databases, as the smuggling case writes.
func TestAbuseWire(t *testing.T) { dbtest.Each(t, testAbuseWire) }

func testAbuseWire(t *testing.T, open dbtest.Open) {
	a := handlerstest.NewOn(t, open)
	addr := strings.TrimPrefix(a.Listen(), "http://")
	key := "X-API-Key: " + a.Staff
	ctJSON := "Content-Type: application/json"
	big := func(n int) io.Reader { return strings.NewReader(`{"name":"` + strings.Repeat("x", n) + `"}`) }
	cases := []wireCase{
		{name: "10 MB header", head: "GET /api/pets HTTP/1.1\r\nHost: x\r\n" + key + "\r\nX-Big: " + strings.Repeat("a", 10<<20), allowed: []int{431}, closeOK: true},
		{name: "10,000 headers", head: "GET /api/pets HTTP/1.1\r\nHost: x\r\n" + key + strings.Repeat("\r\nX-H: v", 10_000), allowed: []int{431}, closeOK: true},
		{name: "100 KiB URL", head: "GET /api/pets?q=" + strings.Repeat("a", 100<<10) + " HTTP/1.1\r\nHost: x\r\n" + key, allowed: []int{431, 414}, closeOK: true},
		{name: "2 MiB body", head: "POST /api/categories HTTP/1.1\r\nHost: x\r\n" + key + "\r\n" + ctJSON + fmt.Sprintf("\r\nContent-Length: %d", 2<<20+11), body: big(2 << 20), allowed: []int{413}, closeOK: true},
		{name: "2 MiB chunked body", head: "POST /api/categories HTTP/1.1\r\nHost: x\r\n" + key + "\r\n" + ctJSON + "\r\nTransfer-Encoding: chunked", body: chunked(big(2 << 20)), allowed: []int{413}, closeOK: true},
		{name: "negative Content-Length", head: "POST /api/categories HTTP/1.1\r\nHost: x\r\n" + key + "\r\n" + ctJSON + "\r\nContent-Length: -5", allowed: []int{400}},
		{name: "non-numeric Content-Length", head: "POST /api/categories HTTP/1.1\r\nHost: x\r\n" + key + "\r\n" + ctJSON + "\r\nContent-Length: ten", allowed: []int{400}},
		{name: "Content-Length and chunked", head: "POST /api/categories HTTP/1.1\r\nHost: x\r\n" + key + "\r\n" + ctJSON + "\r\nContent-Length: 4\r\nTransfer-Encoding: chunked", body: chunked(strings.NewReader(`{"name":"Smuggled"}`)), allowed: []int{201, 400}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := sendRaw(t, addr, tc.head, tc.body)
			if err != nil {
				if !tc.closeOK {
					t.Fatalf("no answer: %v", err)
				}
				t.Logf("connection closed without an answer: %v", err)
				return
			}
			ok := false
			for _, s := range tc.allowed {
				ok = ok || r.Status == s
			}
			if !ok {
				t.Fatalf("status %d, want one of %v: %s", r.Status, tc.allowed, r.Body)
			}
			t.Logf("answered %d", r.Status)
			if r.Status >= 400 {
				var p handlerstest.Problem
				if err := json.Unmarshal(r.Body, &p); err != nil || p.Status != r.Status || p.Code == "" {
					t.Errorf("%d without the Error object: %s", r.Status, r.Body)
				}
			}
		})
	}
	// The server still serves.
	if r, err := sendRaw(t, addr, "GET /api/pets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"+key, nil); err != nil || r.Status != 200 {
		t.Fatalf("after the abuse: %v %+v", err, r)
	}
}

// chunked encodes r with chunked transfer coding.
func chunked(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				if _, werr := fmt.Fprintf(pw, "%x\r\n%s\r\n", n, buf[:n]); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			}
			if errors.Is(err, io.EOF) {
				_, _ = io.WriteString(pw, "0\r\n\r\n")
				pw.Close()
				return
			}
		}
	}()
	return pr
}
