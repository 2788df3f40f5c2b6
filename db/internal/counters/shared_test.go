package counters

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestVersionReadsShareButNeverServeOlder: concurrent callers share reads
// of the auth counter, and each gets a value from a read that started
// after it called — never one already under way, which could predate a
// change committed before the caller asked.
func TestVersionReadsShareButNeverServeOlder(t *testing.T) {
	var started atomic.Int64
	r := &SharedReads[int64]{Read: func(context.Context) (int64, error) {
		n := started.Add(1) // this read's number, counted when it starts
		time.Sleep(time.Millisecond)
		return n, nil
	}}
	const callers = 64
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				before := started.Load() // reads started before this call
				v, err := r.Join(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if v <= before {
					t.Errorf("got the value of read %d, which had started before the call (%d reads had)", v, before)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := started.Load(); n >= callers*20 {
		t.Errorf("%d reads for %d calls: concurrent calls did not share them", n, callers*20)
	}
}

// TestVersionReadsCallerGivesUp: a caller whose context ends stops waiting;
// the read still completes for the others.
func TestVersionReadsCallerGivesUp(t *testing.T) {
	release := make(chan struct{})
	r := &SharedReads[int64]{Read: func(context.Context) (int64, error) {
		<-release
		return 7, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Join(ctx); err == nil {
		t.Fatal("join with an ended context returned no error")
	}
	close(release)
	if v, err := r.Join(context.Background()); err != nil || v != 7 {
		t.Fatalf("join = %d, %v; want 7", v, err)
	}
}

// TestVersionReadsSpaced: with Spacing, reads that follow a shared read
// start at least that far apart however many callers wait (the first
// reads, before the callers pile up, are not: two allowed), and every caller still gets a value read after it
// called. Without Spacing the same calls read back to back, one a
// millisecond.
func TestVersionReadsSpaced(t *testing.T) {
	var started atomic.Int64
	const spacing = 5 * time.Millisecond
	r := &SharedReads[int64]{Spacing: spacing, Read: func(context.Context) (int64, error) {
		n := started.Add(1)
		time.Sleep(time.Millisecond) // the callers pile up behind the first read
		return n, nil
	}}
	begin := time.Now()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range 10 {
				before := started.Load()
				v, err := r.Join(context.Background())
				if err != nil || v <= before {
					t.Errorf("got %d, %v after %d reads had started", v, err, before)
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	elapsed := time.Since(begin)
	if n, most := started.Load(), int64(elapsed/spacing)+2; n > most {
		t.Errorf("%d reads in %v: more than one per %v", n, elapsed, spacing)
	}
}
