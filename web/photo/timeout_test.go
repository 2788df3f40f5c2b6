package photo

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"petstore/web/photo/phototest"
)

// TestReencodeTimeout: work that outlasts Limits.Timeout is ErrTimeout,
// returned on time, and the abandoned decode gives the worker back when it
// stops, so the next upload is processed.
func TestReencodeTimeout(t *testing.T) {
	data := twelveMP() // over a second of work, more under the race detector
	l := testLimits()
	l.Timeout = 50 * time.Millisecond
	start := time.Now()
	_, err := testWorker.Reencode(context.Background(), bytes.NewReader(data), "image/jpeg", l)
	elapsed := time.Since(start)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout and context.DeadlineExceeded", err)
	}
	if elapsed > time.Second {
		t.Errorf("returned after %s, want about %s", elapsed, l.Timeout)
	}
	// The decoder reads through ctxReader, so the background decode stops
	// at its next read rather than running to the end.
	start = time.Now()
	mustReencode(t, encodeJPEGBytes(t, phototest.PhotoLike(10, 10)), "image/jpeg")
	t.Logf("timed out after %s; the next upload waited %s for the worker", elapsed, time.Since(start))
}

// TestReencodeWaitsForTheWorkerWithinTimeout: waiting for the worker counts
// towards the timeout, so a stuck worker cannot make uploads wait forever.
func TestReencodeWaitsForTheWorkerWithinTimeout(t *testing.T) {
	leave, err := testWorker.Enter(context.Background()) // the worker is busy
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	l := testLimits()
	l.Timeout = 20 * time.Millisecond
	_, err = testWorker.Reencode(context.Background(), bytes.NewReader(encodePNGBytes(t, phototest.PhotoLike(10, 10))), "image/png", l)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

// TestReencodeCancelled: the caller's cancellation is its own error, not
// ErrTimeout, so that it is not mistaken for a busy server.
func TestReencodeCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := testWorker.Reencode(ctx, bytes.NewReader(encodePNGBytes(t, phototest.PhotoLike(10, 10))), "image/png", testLimits())
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want context.Canceled only", err)
	}
}
