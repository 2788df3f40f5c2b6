package db

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strconv"
)

// Photo is one of a pet's photos as the API shows it (SPEC §14): the
// large size's path and size, and the thumbnail's path.
type Photo struct {
	ID       int64  `json:"id"`
	URL      string `json:"url"`
	ThumbURL string `json:"thumbUrl"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	// ThumbWidth and ThumbHeight size the thumbnail, so pages can reserve
	// its box before it loads.
	ThumbWidth  int `json:"-"`
	ThumbHeight int `json:"-"`
}

// PhotoURL is where a size ("large" or "thumb") of a photo is served.
func PhotoURL(id int64, size string) string {
	return "/media/photos/" + strconv.FormatInt(id, 10) + "/" + size + ".jpg"
}

// Photos are a pet's photos in display order. The pets row keeps them as
// JSON (pets.photos), written in the same transaction as the photos
// table, so a list of pets reads its photos with no query of its own, and
// a photo change bumps the catalog's change counter like any pet change.
type Photos []Photo

// storedPhoto is a Photo as pets.photos keeps it: the paths follow from
// the id.
type storedPhoto struct {
	ID          int64 `json:"id"`
	Width       int   `json:"w"`
	Height      int   `json:"h"`
	ThumbWidth  int   `json:"tw"`
	ThumbHeight int   `json:"th"`
}

// MarshalJSON writes the photos, [] when there are none: the field is
// always present (SPEC §14).
func (ps Photos) MarshalJSON() ([]byte, error) {
	if ps == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Photo(ps))
}

// Scan reads pets.photos.
func (ps *Photos) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	case nil:
		*ps = Photos{}
		return nil
	default:
		return fmt.Errorf("scan photos: unexpected %T", src)
	}
	var stored []storedPhoto
	if err := json.Unmarshal(b, &stored); err != nil {
		return fmt.Errorf("scan photos: %w", err)
	}
	out := make(Photos, len(stored))
	for i, s := range stored {
		out[i] = Photo{ID: s.ID, URL: PhotoURL(s.ID, "large"), ThumbURL: PhotoURL(s.ID, "thumb"),
			Width: s.Width, Height: s.Height, ThumbWidth: s.ThumbWidth, ThumbHeight: s.ThumbHeight}
	}
	*ps = out
	return nil
}

// Value is the JSON pets.photos keeps.
func (ps Photos) Value() (driver.Value, error) {
	stored := make([]storedPhoto, len(ps))
	for i, p := range ps {
		stored[i] = storedPhoto{ID: p.ID, Width: p.Width, Height: p.Height, ThumbWidth: p.ThumbWidth, ThumbHeight: p.ThumbHeight}
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}
