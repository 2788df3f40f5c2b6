package db

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Photo is one of a pet's photos as the API shows it (SPEC §14): the
// large size's path and size, and the thumbnail's path. The pages also
// know the middle size (MediumURL), which the API does not show.
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
	// MediumURL, MediumWidth and MediumHeight are the middle size (800 px
	// on the longest side), for srcset. A photo stored before there was
	// one has none: its sizes are 0 and MediumURL is the large size's.
	MediumURL    string `json:"-"`
	MediumWidth  int    `json:"-"`
	MediumHeight int    `json:"-"`
}

// HasMedium reports whether the photo was stored with a middle size.
func (p Photo) HasMedium() bool { return p.MediumWidth > 0 && p.MediumHeight > 0 }

// PhotoURL is where a size ("large", "medium" or "thumb") of a photo is
// served.
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
	ID           int64 `json:"id"`
	Width        int   `json:"w"`
	Height       int   `json:"h"`
	ThumbWidth   int   `json:"tw"`
	ThumbHeight  int   `json:"th"`
	MediumWidth  int   `json:"mw,omitempty"`
	MediumHeight int   `json:"mh,omitempty"`
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
		out[i] = Photo{ID: s.ID, URL: PhotoURL(s.ID, PhotoLarge), ThumbURL: PhotoURL(s.ID, PhotoThumb),
			Width: s.Width, Height: s.Height, ThumbWidth: s.ThumbWidth, ThumbHeight: s.ThumbHeight,
			MediumWidth: s.MediumWidth, MediumHeight: s.MediumHeight}
		out[i].setMediumURL()
	}
	*ps = out
	return nil
}

// Value is the JSON pets.photos keeps.
func (ps Photos) Value() (driver.Value, error) {
	stored := make([]storedPhoto, len(ps))
	for i, p := range ps {
		stored[i] = storedPhoto{ID: p.ID, Width: p.Width, Height: p.Height, ThumbWidth: p.ThumbWidth, ThumbHeight: p.ThumbHeight,
			MediumWidth: p.MediumWidth, MediumHeight: p.MediumHeight}
	}
	b, err := json.Marshal(stored)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// MaxPhotos is how many photos one pet may have (SPEC §14).
const MaxPhotos = 8

// setMediumURL points MediumURL at the middle size, or at the large one
// for a photo that has none.
func (p *Photo) setMediumURL() {
	p.MediumURL = p.URL
	if p.HasMedium() {
		p.MediumURL = PhotoURL(p.ID, PhotoMedium)
	}
}

// Photo sizes, as their URLs name them.
const (
	PhotoLarge  = "large"
	PhotoMedium = "medium"
	PhotoThumb  = "thumb"
)

// PhotoSize is one stored size of a photo: JPEG bytes and dimensions.
type PhotoSize struct {
	JPEG          []byte
	Width, Height int
}

// NewPhoto is a processed upload, re-encoded (web/photo): the large size
// and the thumbnail, and the middle size (optional: without it the
// photo's medium address serves the large one).
type NewPhoto struct {
	Large, Medium, Thumb PhotoSize
}

// AddPhoto stores a photo as the last of the pet's and records
// pet.updated. Errors: not_found (no such live pet), too_many_photos.
func (s *Store) AddPhoto(ctx context.Context, petID int64, in NewPhoto) (*Photo, error) {
	if len(in.Large.JPEG) == 0 || len(in.Thumb.JPEG) == 0 || in.Large.Width < 1 || in.Large.Height < 1 ||
		in.Thumb.Width < 1 || in.Thumb.Height < 1 {
		return nil, fmt.Errorf("add photo: the large size and the thumbnail are needed, got %dx%d and %dx%d",
			in.Large.Width, in.Large.Height, in.Thumb.Width, in.Thumb.Height)
	}
	var medium, mediumTag any // NULL unless the upload has a middle size
	if len(in.Medium.JPEG) > 0 && in.Medium.Width > 0 && in.Medium.Height > 0 {
		medium, mediumTag = in.Medium.JPEG, contentETag(in.Medium.JPEG)
	} else {
		in.Medium = PhotoSize{}
	}
	return inTx(ctx, s, func(tx *Tx) (*Photo, error) {
		// The pet's lock serialises its photo changes, so the count is exact.
		p, err := tx.lockPet(ctx, petID)
		if err != nil {
			return nil, err
		}
		if len(p.Photos) >= MaxPhotos {
			return nil, Errorf(ETooManyPhotos, "Pet %d has %d photos already, the most a pet may have.", petID, len(p.Photos))
		}
		ph := Photo{Width: in.Large.Width, Height: in.Large.Height, ThumbWidth: in.Thumb.Width, ThumbHeight: in.Thumb.Height,
			MediumWidth: in.Medium.Width, MediumHeight: in.Medium.Height}
		err = tx.get(ctx, &ph.ID, `INSERT INTO photos (pet_id, width, height, large, large_etag, thumb_width, thumb_height, thumb, thumb_etag,
		medium_width, medium_height, medium, medium_etag, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`,
			petID, ph.Width, ph.Height, in.Large.JPEG, contentETag(in.Large.JPEG), ph.ThumbWidth, ph.ThumbHeight,
			in.Thumb.JPEG, contentETag(in.Thumb.JPEG), nullSize(ph.MediumWidth), nullSize(ph.MediumHeight), medium, mediumTag, tx.now)
		if err != nil {
			return nil, fmt.Errorf("insert photo: %w", err)
		}
		ph.URL, ph.ThumbURL = PhotoURL(ph.ID, PhotoLarge), PhotoURL(ph.ID, PhotoThumb)
		ph.setMediumURL()
		before := p.photoIDs()
		p.Photos = append(p.Photos, ph)
		if err := tx.writePhotos(ctx, p, AuditPhotoAdd, before); err != nil {
			return nil, err
		}
		return &ph, nil
	})
}

// DeletePhoto removes one of a pet's photos, bytes and all, and records
// pet.updated. Errors: not_found (no such live pet, or not its photo).
func (s *Store) DeletePhoto(ctx context.Context, petID, photoID int64) error {
	return inTxDo(ctx, s, func(tx *Tx) error {
		p, err := tx.lockPet(ctx, petID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(p.Photos, func(ph Photo) bool { return ph.ID == photoID })
		if i < 0 {
			return notFound("Photo", photoID)
		}
		if _, err := tx.exec(ctx, `DELETE FROM photos WHERE id = $1 AND pet_id = $2`, photoID, petID); err != nil {
			return fmt.Errorf("delete photo: %w", err)
		}
		before := p.photoIDs()
		p.Photos = slices.Delete(p.Photos, i, i+1)
		if err := tx.writePhotos(ctx, p, AuditPhotoDelete, before); err != nil {
			return err
		}
		return nil
	})
}

// ReorderPhotos puts a pet's photos in the order of ids, which must name
// each of them once, and records pet.updated. Errors: not_found,
// validation_failed (field "photos").
func (s *Store) ReorderPhotos(ctx context.Context, petID int64, ids []int64) (*Pet, error) {
	return inTx(ctx, s, func(tx *Tx) (*Pet, error) {
		p, err := tx.lockPet(ctx, petID)
		if err != nil {
			return nil, err
		}
		byID := make(map[int64]Photo, len(p.Photos))
		for _, ph := range p.Photos {
			byID[ph.ID] = ph
		}
		ordered := make(Photos, 0, len(ids))
		for _, id := range ids {
			ph, ok := byID[id]
			if !ok {
				return nil, Invalid("photos", "must name each of the pet's photos once")
			}
			delete(byID, id)
			ordered = append(ordered, ph)
		}
		if len(byID) > 0 {
			return nil, Invalid("photos", "must name each of the pet's photos once")
		}
		before := p.photoIDs()
		p.Photos = ordered
		if err := tx.writePhotos(ctx, p, AuditPhotoReorder, before); err != nil {
			return nil, err
		}
		return p, nil
	})
}

// writePhotos stores p.Photos in the pets row, records pet.updated and
// audits action on the pet: its photos' ids before (the list the change
// started from) and after.
func (tx *Tx) writePhotos(ctx context.Context, p *Pet, action string, before []int64) error {
	if _, err := tx.exec(ctx, `UPDATE pets SET photos = $1, updated_at = $2 WHERE id = $3`, p.Photos, tx.now, p.ID); err != nil {
		return fmt.Errorf("update photos: %w", err)
	}
	if err := tx.addEvent(ctx, EventPetUpdated, p); err != nil {
		return err
	}
	ch := Changes{"photos": {before, p.photoIDs()}}
	return tx.audit(action, TargetID(auditTargetPet, p.ID), ch)
}

// PhotoImage is one size of a photo as served.
type PhotoImage struct {
	JPEG []byte `db:"jpeg"`
	// ETag is the strong entity tag of the bytes, quoted.
	ETag string `db:"etag"`
}

// FindPhotoImage returns one size (PhotoLarge, PhotoMedium or PhotoThumb)
// of a photo of a live pet; with tagOnly the bytes are left out, for a
// revalidation. A photo stored without a middle size answers PhotoMedium
// with its large size. Errors: not_found (no such photo or size, or the
// pet was deleted).
func (s *Store) FindPhotoImage(ctx context.Context, photoID int64, size string, tagOnly bool) (*PhotoImage, error) {
	// size is one of the constants, never input, so it may name columns.
	bytes, tag := "ph."+size, "ph."+size+"_etag"
	switch size {
	case PhotoLarge, PhotoThumb:
	case PhotoMedium:
		bytes, tag = "COALESCE(ph.medium, ph.large)", "COALESCE(ph.medium_etag, ph.large_etag)"
	default:
		return nil, notFound("Photo", photoID)
	}
	if tagOnly {
		bytes = "NULL"
	}
	return findOne[PhotoImage](ctx, s.get, "photo", notFound("Photo", photoID),
		`SELECT `+bytes+` AS jpeg, `+tag+` AS etag FROM photos ph JOIN pets p ON p.id = ph.pet_id
		WHERE ph.id = $1 AND p.deleted_at IS NULL`, photoID)
}

// nullSize is a size for a nullable column: NULL for 0 (no such size).
func nullSize(n int) any {
	if n <= 0 {
		return nil
	}
	return n
}

// contentETag is a strong entity tag for bytes: a hash of them, quoted.
func contentETag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}
