package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"petstore/web/photo/phototest"
)

// uploadImage is one kind of upload the bench times: a typical phone photo,
// and the largest image SPEC §14 lets through.
type uploadImage struct {
	Name        string // as the report names it
	ContentType string
	Data        []byte
	Count       int // uploads, one after another
	// Decoded is the size of the image once decoded: SPEC §17 lets one
	// upload's peak take that plus uploadHeadroom.
	Decoded int64
}

// uploadHeadroom is what one upload may take beyond its decoded image
// (SPEC §17): the body, the scaler, the outputs and the garbage.
const uploadHeadroom = 64 << 20

// uploadImages makes the images the upload rows send: a 12-megapixel JPEG
// (4000×3000, gradients and noise at quality 90, about what a phone sends),
// 5 times, and a 40-megapixel PNG (6320×6320 smooth gradients, 8-bit RGB:
// under a megabyte that decodes to 160 MB), 3 times. Uploads are
// processed one at a time per server, so one after another is also their
// throughput; the counts keep each pet within its 8 photos.
func uploadImages() ([]uploadImage, error) {
	jpg, err := phototest.JPEG(4000, 3000)
	if err != nil {
		return nil, err
	}
	png, err := phototest.PNG(6320, 6320)
	if err != nil {
		return nil, err
	}
	// image/jpeg writes 4:2:0 (a byte of luma a pixel, a quarter each of
	// Cb and Cr), and image/png decodes 8-bit RGB as RGBA.
	return []uploadImage{
		{Name: "a 12-megapixel JPEG (4000×3000)", ContentType: "image/jpeg", Data: jpg, Count: 5, Decoded: 4000 * 3000 * 3 / 2},
		{Name: "a 40-megapixel PNG (6320×6320)", ContentType: "image/png", Data: png, Count: 3, Decoded: 6320 * 6320 * 4},
	}, nil
}

// uploadCost is what uploading one image through the API cost on one
// database: each upload's time, and the server's resident set just before
// them and at its peak during them.
type uploadCost struct {
	Image   string
	Bytes   int             // the upload's size
	Decoded int64           // the decoded image's size
	Times   []time.Duration // each upload's, client side, in order
	BaseRSS int64           // VmRSS before the first upload
	PeakRSS int64           // VmHWM, reset before the first upload
}

// uploadPhoto POSTs an image of contentType as pet's photo and returns the
// photo's id and how long the request took.
func (a *apiClient) uploadPhoto(ctx context.Context, pet int64, contentType string, data []byte) (int64, time.Duration, error) {
	path := "/api/pets/" + strconv.FormatInt(pet, 10) + "/photos"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, bytes.NewReader(data))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("X-API-Key", a.key)
	req.Header.Set("Content-Type", contentType)
	began := time.Now()
	resp, err := a.http.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	took := time.Since(began)
	if err != nil {
		return 0, 0, fmt.Errorf("POST %s: %w", path, err)
	}
	var ph struct {
		ID int64 `json:"id"`
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(raw, &ph) != nil || ph.ID < 1 {
		return 0, 0, fmt.Errorf("POST %s: status %d, want 201: %s", path, resp.StatusCode, bytes.TrimSpace(raw))
	}
	return ph.ID, took, nil
}

// seedPhoto uploads the photo whose thumbnail the media row fetches: a
// 1600×1200 JPEG, whose thumbnail (400×300) is the size a phone's photo's
// is. It goes to the last seeded pet, which no measured page lists.
func seedPhoto(ctx context.Context, api *apiClient, pet int64) (int64, error) {
	jpg, err := phototest.JPEG(1600, 1200)
	if err != nil {
		return 0, err
	}
	id, _, err := api.uploadPhoto(ctx, pet, "image/jpeg", jpg)
	return id, err
}

// timeUploads uploads img.Count times to pet, one after another, and
// returns what that cost srv: each upload's time and the server's RSS.
// The peak (VmHWM) is reset first, so it is these uploads' own, not what
// the rows before them reached.
func timeUploads(ctx context.Context, srv *server, api *apiClient, pet int64, img uploadImage) (uploadCost, error) {
	u := uploadCost{Image: img.Name, Bytes: len(img.Data), Decoded: img.Decoded}
	var err error
	if u.BaseRSS, err = srv.settledRSS(ctx); err != nil {
		return u, err
	}
	if err := srv.resetPeakRSS(); err != nil {
		return u, err
	}
	for range img.Count {
		_, took, err := api.uploadPhoto(ctx, pet, img.ContentType, img.Data)
		if err != nil {
			return u, err
		}
		u.Times = append(u.Times, took)
	}
	u.PeakRSS, err = srv.peakRSS()
	return u, err
}

// summary is the line of the report on one database's uploads of one image.
func (u uploadCost) summary(database string) string {
	sorted := slices.Clone(u.Times)
	slices.Sort(sorted)
	var total time.Duration
	for _, d := range sorted {
		total += d
	}
	if len(sorted) == 0 {
		return "photo upload on " + database + ": not measured"
	}
	return fmt.Sprintf("photo upload on %s: %s, %.1f MB, through POST /api/pets/{id}/photos, %d one after another: "+
		"%s mean, %s median, %s slowest (%.1f uploads/s); server RSS %.1f MB before them, peak %.1f MB during them",
		database, u.Image, float64(u.Bytes)/(1<<20), len(sorted), seconds(total/time.Duration(len(sorted))), seconds(percentile(sorted, 0.5)),
		seconds(sorted[len(sorted)-1]), float64(len(sorted))/total.Seconds(), float64(u.BaseRSS)/(1<<20), float64(u.PeakRSS)/(1<<20))
}

// withinHeadroom reports whether the uploads' peak stayed within SPEC
// §17's bound: the RSS before them, plus the decoded image, plus
// uploadHeadroom.
func (u uploadCost) withinHeadroom() bool {
	return u.PeakRSS-u.BaseRSS <= u.Decoded+uploadHeadroom
}

// headroomDetail is the figures withinHeadroom judges.
func (u uploadCost) headroomDetail() string {
	return fmt.Sprintf("%s: peak %.1f MB over the %.1f MB before, bound %.1f MB decoded + %d MB",
		u.Image, float64(u.PeakRSS-u.BaseRSS)/(1<<20), float64(u.BaseRSS)/(1<<20), float64(u.Decoded)/(1<<20), uploadHeadroom>>20)
}

// seconds formats a long duration.
func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
