package db_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

// fakePhoto is a processed photo; the store keeps bytes as they come.
func fakePhoto(n int) db.NewPhoto {
	return db.NewPhoto{
		Large: db.PhotoSize{JPEG: []byte(fmt.Sprintf("large %d", n)), Width: 1600, Height: 1200},
		Thumb: db.PhotoSize{JPEG: []byte(fmt.Sprintf("thumb %d", n)), Width: 400, Height: 300},
	}
}

func TestPhotos(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, p := storeWithPet(t, open, 1)
		var ids []int64
		for i := range db.MaxPhotos {
			ph, err := s.AddPhoto(ctx, p.ID, fakePhoto(i))
			if err != nil {
				t.Fatalf("photo %d: %v", i+1, err)
			}
			if ph.URL != fmt.Sprintf("/media/photos/%d/large.jpg", ph.ID) || ph.ThumbURL != fmt.Sprintf("/media/photos/%d/thumb.jpg", ph.ID) {
				t.Fatalf("urls = %s, %s", ph.URL, ph.ThumbURL)
			}
			ids = append(ids, ph.ID)
		}
		_, err := s.AddPhoto(ctx, p.ID, fakePhoto(9))
		wantCode(t, err, db.ETooManyPhotos)
		_, err = s.AddPhoto(ctx, p.ID+100, fakePhoto(1))
		wantCode(t, err, db.ENotFound)

		got, err := s.FindPetByID(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Photos) != db.MaxPhotos || got.Photos[0].ID != ids[0] || got.Photos[0].ThumbWidth != 400 {
			t.Fatalf("photos = %+v", got.Photos)
		}
		b, _ := json.Marshal(got.Photos[0])
		want := fmt.Sprintf(`{"id":%d,"url":"/media/photos/%d/large.jpg","thumbUrl":"/media/photos/%d/thumb.jpg","width":1600,"height":1200}`, ids[0], ids[0], ids[0])
		if string(b) != want {
			t.Fatalf("photo JSON = %s, want %s", b, want)
		}

		img, err := s.FindPhotoImage(ctx, ids[2], db.PhotoThumb, false)
		if err != nil || !bytes.Equal(img.JPEG, []byte("thumb 2")) || len(img.ETag) != 34 {
			t.Fatalf("thumb = %q %s, %v", img.JPEG, img.ETag, err)
		}
		tag, err := s.FindPhotoImage(ctx, ids[2], db.PhotoThumb, true)
		if err != nil || tag.JPEG != nil || tag.ETag != img.ETag {
			t.Fatalf("tag only = %+v, %v", tag, err)
		}
		large, _ := s.FindPhotoImage(ctx, ids[2], db.PhotoLarge, false)
		if large == nil || string(large.JPEG) != "large 2" || large.ETag == img.ETag {
			t.Fatalf("large = %+v", large)
		}
		_, err = s.FindPhotoImage(ctx, ids[2], "huge", false)
		wantCode(t, err, db.ENotFound)

		// Reorder: a permutation only.
		rev := make([]int64, len(ids))
		for i, id := range ids {
			rev[len(ids)-1-i] = id
		}
		if _, err := s.ReorderPhotos(ctx, p.ID, rev); err != nil {
			t.Fatal(err)
		}
		for _, bad := range [][]int64{rev[1:], append(rev[1:], rev[1]), append(rev[1:], 999999)} {
			_, err := s.ReorderPhotos(ctx, p.ID, bad)
			wantField(t, err, "photos")
		}
		got, _ = s.FindPetByID(ctx, p.ID)
		if got.Photos[0].ID != ids[len(ids)-1] {
			t.Fatalf("first photo after reorder = %d, want %d", got.Photos[0].ID, ids[len(ids)-1])
		}

		// Delete one: it is gone, and there is room again.
		if err := s.DeletePhoto(ctx, p.ID, ids[0]); err != nil {
			t.Fatal(err)
		}
		wantCode(t, s.DeletePhoto(ctx, p.ID, ids[0]), db.ENotFound)
		_, err = s.FindPhotoImage(ctx, ids[0], db.PhotoLarge, false)
		wantCode(t, err, db.ENotFound)
		if _, err := s.AddPhoto(ctx, p.ID, fakePhoto(10)); err != nil {
			t.Fatal(err)
		}

		// A deleted pet's photos are no longer served.
		if err := s.DeletePet(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		_, err = s.FindPhotoImage(ctx, ids[1], db.PhotoThumb, false)
		wantCode(t, err, db.ENotFound)
	})
}

// Concurrent uploads to one pet never pass the limit.
func TestPhotosLimitConcurrent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, p := storeWithPet(t, open, 1)
		var got codes
		run(12, func(i int) {
			_, err := s.AddPhoto(ctx, p.ID, fakePhoto(i))
			got.add(err)
		})
		got.wantOnly(t, "", db.ETooManyPhotos)
		if got.n[""] != db.MaxPhotos {
			t.Fatalf("outcomes = %v, want %d added", got.n, db.MaxPhotos)
		}
		var rows int
		if err := s.DB().GetContext(ctx, &rows, `SELECT count(*) FROM photos WHERE pet_id = $1`, p.ID); err != nil || rows != db.MaxPhotos {
			t.Fatalf("photo rows = %d, %v", rows, err)
		}
	})
}

// TestPhotoMedium: a photo stored with its middle size serves it at
// /media/photos/{id}/medium.jpg and the pages know its size; one stored
// without (as every photo before migration 00009) keeps working: its
// medium address serves the large size, and the pages see no middle size.
// The API's Photo is the same either way.
func TestPhotoMedium(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, open dbtest.Open) {
		ctx := context.Background()
		s, p := storeWithPet(t, open, 1)
		in := fakePhoto(1)
		in.Medium = db.PhotoSize{JPEG: []byte("medium 1"), Width: 800, Height: 600}
		with, err := s.AddPhoto(ctx, p.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		without, err := s.AddPhoto(ctx, p.ID, fakePhoto(2))
		if err != nil {
			t.Fatal(err)
		}
		if !with.HasMedium() || with.MediumURL != fmt.Sprintf("/media/photos/%d/medium.jpg", with.ID) || with.MediumWidth != 800 {
			t.Errorf("added with a middle size: %+v", with)
		}
		if without.HasMedium() || without.MediumURL != without.URL {
			t.Errorf("added without a middle size: %+v", without)
		}

		got, err := s.FindPetByID(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Photos[0] != *with || got.Photos[1] != *without {
			t.Fatalf("read back %+v, want %+v and %+v", got.Photos, *with, *without)
		}
		for _, ph := range got.Photos {
			b, _ := json.Marshal(ph)
			want := fmt.Sprintf(`{"id":%d,"url":"/media/photos/%d/large.jpg","thumbUrl":"/media/photos/%d/thumb.jpg","width":1600,"height":1200}`, ph.ID, ph.ID, ph.ID)
			if string(b) != want {
				t.Errorf("photo JSON = %s, want %s", b, want)
			}
		}

		medium, err := s.FindPhotoImage(ctx, with.ID, db.PhotoMedium, false)
		large, _ := s.FindPhotoImage(ctx, with.ID, db.PhotoLarge, false)
		if err != nil || string(medium.JPEG) != "medium 1" || medium.ETag == "" || large == nil || medium.ETag == large.ETag {
			t.Fatalf("medium = %+v, %v; large %+v", medium, err, large)
		}
		tag, err := s.FindPhotoImage(ctx, with.ID, db.PhotoMedium, true)
		if err != nil || tag.JPEG != nil || tag.ETag != medium.ETag {
			t.Fatalf("medium's tag = %+v, %v", tag, err)
		}
		fallback, err := s.FindPhotoImage(ctx, without.ID, db.PhotoMedium, false)
		large2, _ := s.FindPhotoImage(ctx, without.ID, db.PhotoLarge, false)
		if err != nil || string(fallback.JPEG) != "large 2" || large2 == nil || fallback.ETag != large2.ETag {
			t.Fatalf("medium of a photo without one = %+v, %v; want the large size %+v", fallback, err, large2)
		}

		// A reorder writes the photos back as they are.
		if _, err := s.ReorderPhotos(ctx, p.ID, []int64{without.ID, with.ID}); err != nil {
			t.Fatal(err)
		}
		got, _ = s.FindPetByID(ctx, p.ID)
		if got.Photos[0] != *without || got.Photos[1] != *with {
			t.Fatalf("after a reorder %+v", got.Photos)
		}
	})
}
