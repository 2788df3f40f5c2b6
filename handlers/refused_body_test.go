package handlers_test

import (
	"bufio"
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

// TestRefusedUploadClosesAtOnce: an upload route refused before its body is
// read (no key, an unknown key, a customer's key; no console session)
// answers at once and closes the connection, however slowly the body
// trickles in (SPEC §17): it neither waits for the body nor drains it, and
// the upload's longer deadline never starts. Before, a trickled body held
// the connection for 90 s.
func TestRefusedUploadClosesAtOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		pet := a.SeedPet("Rex", 1)
		addr := strings.TrimPrefix(a.Listen(), "http://")
		id := handlerstest.Itoa(pet.ID)
		for _, tc := range []struct {
			name, path, header string
			want               int
		}{
			{"API without a key", "/api/pets/" + id + "/photos", "Content-Type: image/jpeg", http.StatusUnauthorized},
			{"API with an unknown key", "/api/pets/" + id + "/photos", "Content-Type: image/jpeg\r\nX-API-Key: psk_unknown", http.StatusUnauthorized},
			{"API with a customer's key", "/api/pets/" + id + "/photos", "Content-Type: image/jpeg\r\nX-API-Key: " + a.Customer, http.StatusForbidden},
			{"console without a session", "/staff/pets/" + id + "/photos", "Content-Type: multipart/form-data; boundary=x\r\nX-CSRF-Token: t", http.StatusForbidden},
		} {
			t.Run(tc.name, func(t *testing.T) {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Length: 1000000\r\n\r\n", tc.path, tc.header)
				stop := make(chan struct{})
				defer close(stop)
				go func() { // the body, a byte every 100 ms
					for {
						select {
						case <-stop:
							return
						case <-time.After(100 * time.Millisecond):
							if _, err := conn.Write([]byte{'x'}); err != nil {
								return
							}
						}
					}
				}()
				_ = conn.SetReadDeadline(time.Now().Add(time.Second))
				br := bufio.NewReader(conn)
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("no answer within 1 s: %v", err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != tc.want {
					t.Errorf("status %d, want %d", res.StatusCode, tc.want)
				}
				if _, err := br.ReadByte(); err != io.EOF {
					t.Errorf("after the answer: %v, want the connection closed within 1 s", err)
				}
			})
		}
	})
}
