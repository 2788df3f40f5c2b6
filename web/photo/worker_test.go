package photo

import (
	"bytes"
	"context"
	"errors"
	"image"
	"testing"
	"time"

	"petstore/web/photo/phototest"
)

// TestWorkerLine: while an upload is processed, MaxWaiting more wait for
// their turn, and one more is ErrBusy at once, without waiting; when the
// turn is given back the waiting ones have it one after another.
func TestWorkerLine(t *testing.T) {
	w := NewWorker()
	leave, err := w.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	turns := make(chan func(), MaxWaiting)
	for range MaxWaiting {
		go func() {
			next, err := w.Enter(context.Background())
			if err != nil {
				t.Error(err)
				next = func() {}
			}
			turns <- next
		}()
	}
	for w.Waiting() < MaxWaiting {
		time.Sleep(time.Millisecond)
	}
	if _, err := w.Enter(context.Background()); !errors.Is(err, ErrBusy) {
		t.Fatalf("with %d waiting: err = %v, want ErrBusy", MaxWaiting, err)
	}
	_, err = w.Reencode(context.Background(), bytes.NewReader(encodePNGBytes(t, phototest.PhotoLike(10, 10))), "image/png", testLimits())
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("Reencode with %d waiting: err = %v, want ErrBusy", MaxWaiting, err)
	}
	leave()
	for range MaxWaiting {
		select {
		case next := <-turns:
			select {
			case <-turns:
				t.Fatal("two uploads have the turn at once")
			case <-time.After(10 * time.Millisecond):
			}
			next()
		case <-time.After(time.Minute):
			t.Fatal("a waiting upload never had its turn")
		}
	}
	if n := w.Waiting(); n != 0 {
		t.Errorf("%d still waiting", n)
	}
	leave, err = w.Enter(context.Background())
	if err != nil {
		t.Fatalf("an idle worker: %v", err)
	}
	leave()
}

// TestWorkerLineCancelled: an upload whose caller gives up while in line
// leaves it, making room for another.
func TestWorkerLineCancelled(t *testing.T) {
	w := NewWorker()
	leave, err := w.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := w.Enter(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", err)
	}
	if n := w.Waiting(); n != 0 {
		t.Errorf("%d waiting after giving up, want 0", n)
	}
}

// TestScalerHoldsNoIntermediate: scaling reads the source a row at a time,
// so it allocates its output and a few rows, whatever the source's
// height. (x/image/draw's Catmull-Rom allocated output width × source
// height × 32 bytes besides: 73 MiB here, 320 MiB for a square 40
// megapixels.)
func TestScalerHoldsNoIntermediate(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 2000, 1500))
	var out *image.RGBA
	allocated := allocatedBy(func() {
		var err error
		if out, err = resized(context.Background(), src, src.Rect, 1600); err != nil {
			t.Fatal(err)
		}
	})
	output := uint64(len(out.Pix))
	if out.Rect.Dx() != 1600 || out.Rect.Dy() != 1200 {
		t.Fatalf("scaled to %v, want 1600×1200", out.Rect)
	}
	if allocated > output+1<<20 {
		t.Errorf("scaling allocated %d bytes, want at most the output's %d and 1 MiB", allocated, output)
	}
}
