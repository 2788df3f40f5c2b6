package console_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"petstore/db/dbtest"
	"petstore/handlers/handlerstest"
	"petstore/web/browser/browsertest"
	"petstore/web/photo"
)

// TestConsolePhotoUploadBusy: SPEC §17 in the console, on both databases.
// With an upload being processed and photo.MaxWaiting waiting, an upload
// from the console is refused at once: 503 with Retry-After, and the
// console's error page (the error alone for console.js) says why in its
// own words, not the database's. None of its files is stored.
func TestConsolePhotoUploadBusy(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		a := handlerstest.NewOn(t, open)
		rex := a.SeedPet("Rex", 1)
		b := a.SignedIn(t)
		upload := "/staff/pets/" + handlerstest.Itoa(rex.ID) + "/photos"

		// One upload has the worker, MaxWaiting more wait for it.
		worker := a.Handler.Photos
		leave, err := worker.Enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		turns := make(chan func(), photo.MaxWaiting)
		for range photo.MaxWaiting {
			go func() {
				next, err := worker.Enter(context.Background())
				if err != nil {
					t.Error(err)
					next = func() {}
				}
				turns <- next
			}()
		}
		t.Cleanup(func() {
			leave()
			for range photo.MaxWaiting {
				(<-turns)()
			}
		})
		for worker.Waiting() < photo.MaxWaiting {
			time.Sleep(time.Millisecond)
		}

		const why = "Too many photos are waiting to be processed: none of this upload was added. Try again in a few seconds."
		for _, js := range []bool{false, true} {
			body, ct := handlerstest.PhotoForm(t, b.CSRF,
				handlerstest.UploadFile{Name: "garden.jpg", ContentType: "image/jpeg", Data: handlerstest.JPEGOf(t, 64, 48)},
				handlerstest.UploadFile{Name: "sofa.png", ContentType: "image/png", Data: handlerstest.PNGOf(t, 30, 20)})
			p := b.Upload(upload, body, ct, js).WantStatus(http.StatusServiceUnavailable)
			if p.Header.Get("Retry-After") == "" {
				t.Errorf("js=%v: the 503 has no Retry-After", js)
			}
			if got := browsertest.Text(p.ID("error").Find("p").First()); got != why {
				t.Errorf("js=%v: the error says %q, want %q", js, got, why)
			}
			if js && p.Find("nav").Length() != 0 {
				t.Errorf("console.js gets a whole page, want the error alone")
			}
		}
		if n := len(petPhotos(t, a, rex.ID)); n != 0 {
			t.Errorf("%d photos stored, want none", n)
		}
	})
}
