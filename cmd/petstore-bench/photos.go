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

// photoUploads is how many 12-megapixel uploads the bench times, one after
// another: uploads are processed one at a time per process anyway.
const photoUploads = 5

// uploadCost is what uploading a 12-megapixel JPEG through the API cost on
// one database: each upload's time, and the server's peak RSS after them.
type uploadCost struct {
	Bytes   int             // the upload's size
	Times   []time.Duration // each upload's, client side, in order
	PeakRSS int64
}

// uploadPhoto POSTs a JPEG as pet's photo and returns the photo's id and
// how long the request took.
func (a *apiClient) uploadPhoto(ctx context.Context, pet int64, jpg []byte) (int64, time.Duration, error) {
	path := "/api/pets/" + strconv.FormatInt(pet, 10) + "/photos"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, bytes.NewReader(jpg))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("X-API-Key", a.key)
	req.Header.Set("Content-Type", "image/jpeg")
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
	id, _, err := api.uploadPhoto(ctx, pet, jpg)
	return id, err
}

// timeUploads uploads jpg photoUploads times to pet, one after another,
// and returns each upload's time.
func timeUploads(ctx context.Context, api *apiClient, pet int64, jpg []byte) ([]time.Duration, error) {
	var times []time.Duration
	for range photoUploads {
		_, took, err := api.uploadPhoto(ctx, pet, jpg)
		if err != nil {
			return nil, err
		}
		times = append(times, took)
	}
	return times, nil
}

// summary is the line of the report on one database's uploads.
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
	return fmt.Sprintf("photo upload on %s: a 12-megapixel JPEG (4000×3000, %.1f MB) through POST /api/pets/{id}/photos, %d one after another: "+
		"%s mean, %s median, %s slowest (%.1f uploads/s); server peak RSS after them %.1f MB",
		database, float64(u.Bytes)/(1<<20), len(sorted), seconds(total/time.Duration(len(sorted))), seconds(percentile(sorted, 0.5)),
		seconds(sorted[len(sorted)-1]), float64(len(sorted))/total.Seconds(), float64(u.PeakRSS)/(1<<20))
}

// seconds formats a long duration.
func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
