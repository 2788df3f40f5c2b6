package handlers_test

import (
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"petstore/db"
	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
)

// TestImportWideHeaderMemory sends imports of a mebibyte of commas, as
// the header and as a row, over a real connection, on both databases: each
// is refused with one problem (422), and the server's memory stays bounded
// (it took ~330 MiB a MiB, a cell and a problem for each comma).
func TestImportWideHeaderMemory(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		addr := strings.TrimPrefix(a.Listen(), "http://")
		commas := strings.Repeat(",", 1<<20)
		for _, tc := range []struct{ name, file, field, message string }{
			{"header", commas + "\nRex,Dogs\n", "row 1", "has more than 64 cells"},
			{"row", "name,category\nRex,Dogs\n" + commas + "\n", "row 3", "has more than 64 cells"},
		} {
			head := "POST /api/pets/import HTTP/1.1\r\nHost: x\r\nX-API-Key: " + a.Staff +
				"\r\nContent-Type: text/csv\r\nContent-Length: " + handlerstest.Itoa(int64(len(tc.file)))
			allocated, peak, r := measure(func() *handlerstest.Response { return wireAnswer(t, addr, head, strings.NewReader(tc.file)) })
			t.Logf("%s: allocated %d KiB, peak heap +%d KiB", tc.name, allocated>>10, peak>>10)
			wantWireError(t, r, http.StatusUnprocessableEntity, db.EValidationFailed)
			if p := r.Problem(t); len(p.Details) != 1 || p.Details[0].Field != tc.field || !strings.HasPrefix(p.Details[0].Message, tc.message) {
				t.Errorf("%s: %d problems (the first %+v), want one of %s: %s…", tc.name, len(p.Details), p.Details[:min(1, len(p.Details))], tc.field, tc.message)
			}
			// The body itself (a MiB) is read and stored as it arrives; what
			// reads it holds a row at most.
			if allocated > 16<<20 || peak > 16<<20 {
				t.Errorf("%s: the server allocated %d MiB, its heap grew by %d MiB at the peak; want under 16 each", tc.name, allocated>>20, peak>>20)
			}
		}
	})
}

// measure runs do and returns the bytes the process allocated meanwhile,
// and how far its heap in use rose above where it started, sampled every
// millisecond.
func measure(do func() *handlerstest.Response) (allocated, peak uint64, r *handlerstest.Response) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var top atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > before.HeapInuse && m.HeapInuse-before.HeapInuse > top.Load() {
				top.Store(m.HeapInuse - before.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	r = do()
	close(stop)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, top.Load(), r
}
