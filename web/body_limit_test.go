package web

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/go-cmp/cmp"

	"petstore/db"
)

// These tests send request bodies over real connections, since their
// rules are about what is read off the connection and when: every route
// reads at most MaxBody (SPEC §2's 64 KiB), a route given a larger
// Route.Body (an upload) reads its own within it, a body announced longer
// than its route takes is refused after reading at most what came with
// its headers, and one announced longer than any route takes is refused
// from its headers. What a refused request leaves unread is never taken
// for the next request.

// uploadLimit is the larger Route.Body of the test's upload routes: past
// MaxBody, small enough to send in milliseconds.
const uploadLimit = 1 << 20

// bodyApp serves, on a real connection:
//
//	POST /echo          MaxBody; answers how many bytes c.Body() holds
//	PUT /upload         MaxBody, the same
//	POST /upload        uploadLimit, read with ReadBody once the content
//	                    type passed (an upload's checks before its body)
//	POST /import        uploadLimit, read as a stream (StreamedBody)
//	GET /ok             no body
func bodyApp(t *testing.T) string {
	t.Helper()
	length := func(c *fiber.Ctx) error { return c.SendString(strconv.Itoa(len(c.Body()))) }
	octets := func(c *fiber.Ctx) error {
		if string(c.Request().Header.ContentType()) != "application/octet-stream" {
			return db.Errorf(EUnsupportedMediaType, "Send the upload as application/octet-stream.")
		}
		return c.Next()
	}
	stream := func(c *fiber.Ctx) error {
		body, ok := StreamedBody(c)
		if !ok {
			return errors.New("no streamed body")
		}
		n, err := io.Copy(io.Discard, body.Open())
		if err != nil {
			return BodyError(c, err)
		}
		return c.SendString(strconv.FormatInt(n, 10))
	}
	app := newTestApp(t, AppOptions{}, func(r *Routes) {
		r.Add(route("POST", "/echo", length))
		r.Add(route("PUT", "/upload", length))
		r.Add(Route{Method: "POST", Path: "/upload", Body: Body{Max: uploadLimit}, Handlers: []fiber.Handler{octets, ReadBody, length}})
		r.Add(Route{Method: "POST", Path: "/import", Body: Body{Max: uploadLimit, Stream: true}, Handlers: []fiber.Handler{stream}})
		r.Add(route("GET", "/ok", func(c *fiber.Ctx) error { return c.SendString("ok") }))
	})
	return listen(t, app)
}

// bodyAnswer is what a test of the body limits checks of an answer.
type bodyAnswer struct {
	Status int
	Code   string // the Error object's; "" for a success
	Body   string // a success's body: the bytes the route read
	Close  bool   // the server closes the connection after it
}

// TestBodyLimits: a body is read up to its route's limit, whether its
// length is announced or it comes chunked, and one past the limit is 413
// payload_too_large (naming the limit) with the connection closed. A body
// announced too long is answered from its headers: the client sends 16
// bytes of it and gets its answer. A compressed body is 415 before it is
// inflated (a few KiB of gzip can be gigabytes). The larger limit is one
// method's on one path, matched as Fiber routes it.
func TestBodyLimits(t *testing.T) {
	addr := bodyApp(t)
	var gz bytes.Buffer // 1 MiB of zeros, in about 1 KiB
	zw := gzip.NewWriter(&gz)
	_, _ = io.Copy(zw, io.LimitReader(zeros{}, 1<<20))
	_ = zw.Close()
	ok := func(n int) bodyAnswer { return bodyAnswer{Status: 200, Body: strconv.Itoa(n)} }
	streamed := func(n int) bodyAnswer { return bodyAnswer{Status: 200, Body: strconv.Itoa(n), Close: true} }
	tooLarge := bodyAnswer{Status: 413, Code: EPayloadTooLarge, Close: true}
	octets := "Content-Type: application/octet-stream"
	for _, tc := range []struct {
		name string
		head string
		body io.Reader
		want bodyAnswer
		says string // the Error object's message says it
	}{
		{"within 64 KiB", post("/echo", sized(20)), zeros20(), ok(20), ""},
		{"exactly 64 KiB", post("/echo", sized(MaxBody)), zeroBytes(MaxBody), ok(MaxBody), ""},
		{"announced over 64 KiB", post("/echo", sized(MaxBody+1)), zeroBytes(16), tooLarge, "64 KiB"},
		// Under every route's limit the header hook lets a client that
		// expects 100 Continue have it; its route refuses the body once
		// some arrives.
		{"announced over 64 KiB, expecting 100 Continue", post("/echo", sized(MaxBody+1), "Expect: 100-continue"), zeroBytes(16), tooLarge, "64 KiB"},
		// Over every route's limit the client is refused from its headers:
		// no 100 Continue, and it need not send a byte.
		{"announced over every limit, expecting 100 Continue", post("/upload", sized(uploadLimit+1), octets, "Expect: 100-continue"), nil, tooLarge, "1 MiB"},
		{"chunked within 64 KiB", post("/echo", "Transfer-Encoding: chunked"), chunked(zeroBytes(40 << 10)), ok(40 << 10), ""},
		{"chunked past 64 KiB", post("/echo", "Transfer-Encoding: chunked"), chunked(zeroBytes(MaxBody + 1)), tooLarge, "64 KiB"},
		{"gzip", post("/echo", sized(gz.Len()), "Content-Encoding: gzip"), bytes.NewReader(gz.Bytes()), bodyAnswer{Status: 415, Code: EUnsupportedMediaType, Close: true}, "compressed"},
		{"br", post("/echo", sized(gz.Len()), "Content-Encoding: br"), bytes.NewReader(gz.Bytes()), bodyAnswer{Status: 415, Code: EUnsupportedMediaType, Close: true}, "compressed"},
		{"deflate, chunked", post("/echo", "Transfer-Encoding: chunked", "Content-Encoding: deflate"), chunked(bytes.NewReader(gz.Bytes())), bodyAnswer{Status: 415, Code: EUnsupportedMediaType, Close: true}, "compressed"},
		{"identity", post("/echo", sized(20), "Content-Encoding: identity"), zeros20(), ok(20), ""},
		{"upload past 64 KiB", post("/upload", sized(200<<10), octets), zeroBytes(200 << 10), ok(200 << 10), ""},
		{"upload exactly its limit", post("/upload", sized(uploadLimit), octets), zeroBytes(uploadLimit), ok(uploadLimit), ""},
		{"upload announced over its limit", post("/upload", sized(uploadLimit+1), octets), zeroBytes(16), tooLarge, "1 MiB"},
		{"upload chunked past 64 KiB", post("/upload", "Transfer-Encoding: chunked", octets), chunked(zeroBytes(300 << 10)), ok(300 << 10), ""},
		{"upload chunked past its limit", post("/upload", "Transfer-Encoding: chunked", octets), chunked(zeroBytes(uploadLimit + 1)), tooLarge, "1 MiB"},
		{"upload at another letter case", "POST /UpLoad/ HTTP/1.1\r\nHost: x\r\n" + sized(200<<10) + "\r\n" + octets, zeroBytes(200 << 10), ok(200 << 10), ""},
		{"another method on the upload's path", "PUT /upload HTTP/1.1\r\nHost: x\r\n" + sized(MaxBody+1), zeroBytes(16), tooLarge, "64 KiB"},
		{"upload refused before its body", post("/upload", sized(200<<10), "Content-Type: text/plain"), zeroBytes(200 << 10), bodyAnswer{Status: 415, Code: EUnsupportedMediaType, Close: true}, "octet-stream"},
		// A stream's route closes the connection after its answer, read to
		// its end or not: finishBody does not tell the two apart.
		{"stream past 64 KiB", post("/import", "Transfer-Encoding: chunked"), chunked(zeroBytes(300 << 10)), streamed(300 << 10), ""},
		{"stream exactly its limit", post("/import", sized(uploadLimit)), zeroBytes(uploadLimit), streamed(uploadLimit), ""},
		{"stream announced over its limit", post("/import", sized(uploadLimit+1)), zeroBytes(16), tooLarge, "1 MiB"},
		{"stream chunked past its limit", post("/import", "Transfer-Encoding: chunked"), chunked(zeroBytes(uploadLimit + 1)), tooLarge, "1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := exchange(t, addr, tc.head, tc.body)
			got := bodyAnswer{Status: a.Status, Close: a.Header.Get("Connection") == "close"}
			var message string
			if a.Status >= 400 {
				p := a.problem(t)
				got.Code, message = p.Code, p.Message
			} else {
				got.Body = string(a.Body)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !strings.Contains(message, tc.says) {
				t.Errorf("message %q, want it to say %q", message, tc.says)
			}
		})
	}
}

// TestRefusedBodyIsNotARequest sends, on one connection, an upload
// refused before its body is read (415) whose body holds an HTTP request
// of its own, then a real request: the refused body is never parsed as a
// request. A route that takes a larger body closes the connection after
// refusing it rather than reading it (SPEC §17), so only the 415 is
// answered, whether the body is a little over fasthttp's 8 KiB read-ahead
// or past what any drain would read.
func TestRefusedBodyIsNotARequest(t *testing.T) {
	addr := bodyApp(t)
	smuggled := "PUT /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
	next := "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	for _, tc := range []struct {
		name    string
		padding int
	}{
		{"behind the 8 KiB read-ahead", 8 << 10},
		{"past the drain limit", drainLimit + 44<<10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Repeat("x", tc.padding) + smuggled
			upload := fmt.Sprintf("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			var got []string
			for _, a := range pipeline(t, addr, upload+next) {
				got = append(got, fmt.Sprintf("%d close=%v", a.Status, a.Header.Get("Connection") == "close"))
			}
			if diff := cmp.Diff([]string{"415 close=true"}, got); diff != "" {
				t.Errorf("answers on the connection (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadBodiesKeepTheConnection: a body the route read, announced or
// chunked, is off the connection, which carries the next requests.
func TestReadBodiesKeepTheConnection(t *testing.T) {
	addr := bodyApp(t)
	var chunks bytes.Buffer
	_, _ = io.Copy(&chunks, chunked(strings.NewReader(strings.Repeat("y", 10_000))))
	raw := "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks.String() +
		"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
		"GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	var got []string
	for _, a := range pipeline(t, addr, raw) {
		got = append(got, fmt.Sprintf("%d %s", a.Status, a.Body))
	}
	if diff := cmp.Diff([]string{"200 10000", "200 5", "200 ok"}, got); diff != "" {
		t.Errorf("answers on the connection (-want +got):\n%s", diff)
	}
}

// post is the head of a POST of path with the header lines given.
func post(path string, lines ...string) string {
	return "POST " + path + " HTTP/1.1\r\nHost: x\r\n" + strings.Join(lines, "\r\n")
}

// sized is the Content-Length line of n bytes.
func sized(n int) string { return "Content-Length: " + strconv.Itoa(n) }

// zeroBytes reads as n zero bytes; zeros20 as 20.
func zeroBytes(n int64) io.Reader { return io.LimitReader(zeros{}, n) }
func zeros20() io.Reader          { return zeroBytes(20) }

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
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

// exchange sends a request on a connection of its own, writing its body in
// the background (the server may answer before reading it), and reads the
// answer. Go's reader takes "Connection: close" out of the header; it is
// put back.
func exchange(t *testing.T, addr, head string, body io.Reader) answer {
	t.Helper()
	conn := dialRaw(t, addr)
	go func() {
		w := bufio.NewWriterSize(conn, 64<<10)
		_, _ = io.WriteString(w, head+"\r\n\r\n")
		if body != nil {
			_, _ = io.Copy(w, body)
		}
		_ = w.Flush()
	}()
	br := bufio.NewReader(conn)
	for {
		a, err := readAnswer(br)
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		if a.Status != http.StatusContinue { // the body is sent meanwhile
			return a
		}
	}
}

// dialRaw opens a connection to addr for a raw exchange of at most 20 s,
// closed when the test ends.
func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	return conn
}

// pipeline writes raw to one connection and reads every answer until the
// server closes it.
func pipeline(t *testing.T, addr, raw string) []answer {
	t.Helper()
	conn := dialRaw(t, addr)
	go func() { _, _ = io.WriteString(conn, raw) }()
	br := bufio.NewReader(conn)
	var out []answer
	for {
		a, err := readAnswer(br)
		if err != nil {
			return out
		}
		out = append(out, a)
	}
}

// readAnswer reads one response.
func readAnswer(br *bufio.Reader) (answer, error) {
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if res.Close {
		res.Header.Set("Connection", "close")
	}
	return answer{Status: res.StatusCode, Header: res.Header, Body: body}, err
}
