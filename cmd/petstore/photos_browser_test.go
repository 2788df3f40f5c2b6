package main

import (
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"petstore/db"
)

// TestPhotosBrowser follows a pet's photos from the console to the shop in
// chromium, JavaScript on: staff choose two photos at once in the upload
// form's file input, watch the progress bar fill and the thumbnails appear
// without a reload, move the first one later; the storefront's card then
// shows the new first photo and the pet page the gallery, where the second
// photo is chosen with the keyboard. Screenshots of each step.
func TestPhotosBrowser(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, true)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	cb.watchConsole()
	pet := cb.pet("Bella")
	id := strconv.FormatInt(pet.ID, 10)
	dir := t.TempDir()
	garden := writeJPEG(t, dir, "garden.jpg", 1200, 900, color.RGBA{R: 60, G: 150, B: 70, A: 255})
	sofa := writeJPEG(t, dir, "sofa.jpg", 800, 1000, color.RGBA{R: 180, G: 90, B: 60, A: 255})
	cb.signIn()
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/pets/" + id + "/edit"))

	// Upload both at once: the form is sent by console.js, the section
	// replaced in place, the progress bar left full.
	cb.waitText(`#photos [data-testid="no-photos"]`, "No photos yet")
	cb.markPage()
	browse(t, ctx, chromedp.SetUploadFiles(chromedp.CSS(`#photo-files`), []string{garden, sofa}),
		chromedp.Click(chromedp.CSS(`[data-testid="upload-photos"]`)))
	// Two photos decoded and resized three times each: over 10 s under
	// -race beside the suite on CI's two cores.
	cb.waitJSWithin(textIncludes(`[data-testid="photos-message"]`, "Added 2 photos."), time.Minute)
	cb.wantSamePage()
	cb.waitJS(`(() => { const p = document.querySelector('[data-testid="upload-progress"]');
		return !!p && !p.closest("[hidden]") && p.value === p.max && p.max > 0; })()`)
	cb.waitText(`[data-testid="upload-progress-label"]`, "Upload complete: 2 files sent")
	cb.waitJS(`document.activeElement?.id === "photos-status"`)
	photos := petPhotos(t, ts.Store, pet.ID)
	if len(photos) != 2 || photos[0].Width != 1200 || photos[1].Width != 800 {
		t.Fatalf("stored photos = %+v, want garden (1200 px) then sofa (800 px)", photos)
	}
	waitImages(cb, `#photos [data-testid="photo"] img`, 2)
	if got := cb.text(`[data-testid="photo-count"]`); got != "2 of 8" {
		t.Errorf("photo count = %q", got)
	}
	screenshot(t, ctx, "console-photos")

	// Move the first photo later (htmx): the order is stored, focus stays
	// on the photo's buttons in its new place.
	browse(t, ctx, chromedp.Click(chromedp.CSS(`[data-photo-id="`+strconv.FormatInt(photos[0].ID, 10)+`"] [data-testid="move-later"]`)))
	cb.waitText(`[data-testid="photos-message"]`, "Photo moved to place 2 of 2.")
	cb.waitJS(`document.activeElement?.id === "photo-` + strconv.FormatInt(photos[0].ID, 10) + `-earlier"`)
	cb.wantSamePage()
	photos = petPhotos(t, ts.Store, pet.ID)
	if photos[0].Width != 800 {
		t.Fatalf("after the move the first photo is %d px wide, want the sofa's 800", photos[0].Width)
	}
	screenshot(t, ctx, "console-photos-moved")

	// The storefront's card shows the new first photo's thumbnail. From
	// here photos arrive late, so a box not reserved for one would move
	// the page (wantStill).
	slowPhotos(t, ctx)
	cb.navigate(chromedp.Navigate(ts.URL + "/?q=Bella"))
	card := `[data-testid="pet-card"][data-pet-id="` + id + `"]`
	cb.waitJS(`document.querySelector(` + q(card+` img[data-testid="card-photo"]`) + `)?.getAttribute("src") === ` + q(photos[0].ThumbURL))
	waitImages(cb, card+` img`, 1)
	wantStill(cb)
	screenshot(t, ctx, "card-photo")

	// The pet page's gallery: the first photo large; the second chosen by
	// keyboard, from the first thumbnail with Tab, then Enter.
	cb.navigate(chromedp.Click(chromedp.CSS(card + ` [data-testid="pet-name"]`)))
	cb.waitJS(`document.querySelector('[data-testid="gallery-main"]')?.getAttribute("src") === ` + q(photos[0].URL))
	waitImages(cb, `[data-testid="gallery"] img`, 3)
	wantStill(cb)
	cb.markPage()
	browse(t, ctx, chromedp.Focus(chromedp.CSS(`[data-testid="gallery-thumb"]`)), chromedp.KeyEvent(kb.Tab))
	cb.waitJS(`document.activeElement === document.querySelectorAll('[data-testid="gallery-thumb"]')[1]`)
	browse(t, ctx, chromedp.KeyEvent(kb.Enter))
	cb.waitJS(`document.querySelector('[data-testid="gallery-main"]')?.getAttribute("src") === ` + q(photos[1].URL))
	cb.waitJS(`document.querySelectorAll('[data-testid="gallery-thumb"]')[1].getAttribute("aria-current") === "true" &&
		!document.querySelectorAll('[data-testid="gallery-thumb"]')[0].hasAttribute("aria-current")`)
	cb.waitText(`[data-testid="gallery-caption"]`, "Photo 2 of 2")
	cb.waitJS(`location.search === "?photo=2" && document.querySelector('[data-testid="gallery-main"]').alt === "Photo 2 of 2 of Bella"`)
	cb.wantSamePage()
	waitImages(cb, `[data-testid="gallery-main"]`, 1)
	screenshot(t, ctx, "gallery")

	// On a phone: the gallery, the card and the console's photos fit.
	browse(t, ctx, chromedp.EmulateViewport(390, 844))
	cb.navigate(chromedp.Reload())
	waitImages(cb, `[data-testid="gallery"] img`, 3)
	cb.wantNoSidewaysScroll()
	screenshot(t, ctx, "gallery-narrow")
	cb.navigate(chromedp.Navigate(ts.URL + "/?q=Bella"))
	waitImages(cb, card+` img`, 1)
	cb.wantNoSidewaysScroll()
	screenshot(t, ctx, "card-photo-narrow")
	cb.navigate(chromedp.Navigate(ts.URL + "/staff/pets/" + id + "/edit"))
	waitImages(cb, `#photos [data-testid="photo"] img`, 2)
	cb.wantNoSidewaysScroll()
	screenshot(t, ctx, "console-photos-narrow")
	browse(t, ctx, chromedp.ResetViewport())
	cb.wantQuietConsole()
}

// slowPhotos holds every photo the tab loads from now on for 300 ms, from
// the network (the cache is off): a page that does not reserve an image's
// box has painted without it by then, and moves when it arrives.
func slowPhotos(t *testing.T, ctx context.Context) {
	t.Helper()
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/media/photos/*"}}}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			go func(id fetch.RequestID) {
				time.Sleep(300 * time.Millisecond)
				_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
			}(ev.RequestID)
		}
	}()
}

// wantStill fails when the page has moved under the reader since it began
// loading (Layout Instability API: the sum of the shifts no input caused),
// as images arriving without a reserved box would make it.
func wantStill(cb *consoleBrowser) {
	cb.t.Helper()
	type shift struct {
		Value   float64  `json:"value"`
		Sources []string `json:"sources"`
	}
	shifts := read(cb.t, cb.ctx, chromedp.Evaluate[[]shift](`new Promise(done => {
		const out = [];
		const rect = r => Math.round(r.x) + "," + Math.round(r.y) + " " + Math.round(r.width) + "x" + Math.round(r.height);
		const name = n => !n ? "(gone)" : n.nodeType !== 1 ? n.nodeName :
			n.nodeName.toLowerCase() + (n.id ? "#" + n.id : "") + (n.className && typeof n.className === "string" ? "." + n.className.trim().split(/\s+/).join(".") : "") +
			(n.dataset && n.dataset.testid ? "[" + n.dataset.testid + "]" : "");
		new PerformanceObserver(list => {
			for (const e of list.getEntries()) {
				if (e.hadRecentInput) continue;
				out.push({value: e.value, sources: (e.sources || []).map(s => name(s.node) + " " + rect(s.previousRect) + " -> " + rect(s.currentRect))});
			}
		}).observe({type: "layout-shift", buffered: true});
		setTimeout(() => done(out), 100);
	})`, chromedp.EvalAwaitPromise))
	sum := 0.0
	for _, s := range shifts {
		sum += s.Value
	}
	if sum > 0.001 {
		cb.t.Errorf("the page shifted by %.4f while it loaded (layout shift score): %+v", sum, shifts)
	}
}

// TestPhotosBrowserNoJS is the same path with JavaScript off: the upload
// is the plain multipart form (one photo and one file that is not, which
// is listed with its reason), moving a photo a plain post, and the
// gallery's thumbnails plain links.
func TestPhotosBrowserNoJS(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ctx := newBrowser(t, false)
	cb := &consoleBrowser{t: t, ctx: ctx, ts: ts}
	pet := cb.pet("Max")
	id := strconv.FormatInt(pet.ID, 10)
	dir := t.TempDir()
	garden := writeJPEG(t, dir, "garden.jpg", 1000, 750, color.RGBA{R: 70, G: 130, B: 180, A: 255})
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("not a photo"), 0o644); err != nil {
		t.Fatal(err)
	}
	edit := "/staff/pets/" + id + "/edit"
	cb.signIn()
	cb.navigate(chromedp.Navigate(ts.URL + edit))
	if read(t, ctx, chromedp.Evaluate[bool](`!!window.htmx`)) {
		t.Fatal("page scripts run: JavaScript is not off")
	}

	cb.navigate(chromedp.SetUploadFiles(chromedp.CSS(`#photo-files`), []string{garden, notes}),
		chromedp.Click(chromedp.CSS(`[data-testid="upload-photos"]`)))
	cb.waitJS(`location.pathname === ` + q(edit) + ` && location.hash === "#photos"`)
	cb.waitText(`[data-testid="photos-message"]`, "Added 1 photo. 1 file was not added:")
	cb.waitText(`[data-testid="photos-refused"]`, "“notes.txt”: not an image")
	waitImages(cb, `#photos [data-testid="photo"] img`, 1)
	screenshot(t, ctx, "console-photos")

	// A second photo, then move it earlier.
	cb.navigate(chromedp.SetUploadFiles(chromedp.CSS(`#photo-files`), []string{writeJPEG(t, dir, "porch.jpg", 600, 800, color.RGBA{R: 200, G: 160, B: 40, A: 255})}),
		chromedp.Click(chromedp.CSS(`[data-testid="upload-photos"]`)))
	cb.waitText(`[data-testid="photos-message"]`, "Added 1 photo.")
	photos := petPhotos(t, ts.Store, pet.ID)
	if len(photos) != 2 {
		t.Fatalf("%d photos stored, want 2", len(photos))
	}
	cb.navigate(chromedp.Click(chromedp.CSS(`[data-photo-id="` + strconv.FormatInt(photos[1].ID, 10) + `"] [data-testid="move-earlier"]`)))
	cb.waitText(`[data-testid="photos-message"]`, "Photo moved to place 1 of 2.")
	photos = petPhotos(t, ts.Store, pet.ID)
	if photos[0].Width != 600 {
		t.Fatalf("after the move the first photo is %d px wide, want the porch's 600", photos[0].Width)
	}

	// The gallery's second thumbnail is a link the server answers; Enter
	// follows it.
	cb.navigate(chromedp.Navigate(ts.URL + "/pets/" + id))
	cb.navigate(chromedp.Focus(chromedp.CSS(`.gallery-thumbs li:nth-child(2) a`)), chromedp.KeyEvent(kb.Enter))
	cb.waitJS(`location.search === "?photo=2"`)
	cb.waitJS(`document.querySelector('[data-testid="gallery-main"]')?.getAttribute("src") === ` + q(photos[1].URL))
	cb.waitJS(`document.querySelectorAll('[data-testid="gallery-thumb"]')[1].getAttribute("aria-current") === "true"`)
	waitImages(cb, `[data-testid="gallery"] img`, 3)
	screenshot(t, ctx, "gallery")
}

// waitImages waits until n images match css and every one has loaded.
func waitImages(cb *consoleBrowser, css string, n int) {
	cb.t.Helper()
	cb.waitJS(`(() => { const imgs = [...document.querySelectorAll(` + q(css) + `)];
		return imgs.length === ` + strconv.Itoa(n) + ` && imgs.every(i => i.complete && i.naturalWidth > 0); })()`)
}

// petPhotos are a pet's photos in the store.
func petPhotos(t *testing.T, s *db.Store, id int64) db.Photos {
	t.Helper()
	p, err := s.FindPetByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p.Photos
}

// writeJPEG writes a w×h JPEG into dir: a soft gradient of base with a
// lighter disc, so each photo is told apart in the screenshots.
func writeJPEG(t *testing.T, dir, name string, w, h int, base color.RGBA) string {
	t.Helper()
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	cx, cy, r := w/2, h/2, min(w, h)/4
	for y := range h {
		for x := range w {
			shade := uint8(60 * y / h)
			c := color.RGBA{R: base.R - min(base.R, shade), G: base.G - min(base.G, shade), B: base.B - min(base.B, shade), A: 255}
			if dx, dy := x-cx, y-cy; dx*dx+dy*dy < r*r {
				c = color.RGBA{R: 250, G: 240, B: 220, A: 255}
			}
			m.SetRGBA(x, y, c)
		}
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := jpeg.Encode(f, m, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return path
}
