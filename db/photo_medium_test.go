package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"petstore/db"
	"petstore/db/dbtest"
)

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
