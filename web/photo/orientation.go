package photo

import (
	"bytes"
	"encoding/binary"
	"image"
)

// exifOrientation returns a JPEG's EXIF Orientation (1–8): phones store a
// portrait photo as landscape pixels plus this tag, and since the tag does
// not survive re-encoding, the pixels have to be turned here or the photo
// shows sideways. It returns 1 (as stored) when there is no tag or anything
// about it is malformed: the bytes are untrusted, every length and offset
// is checked against the slice, and a bad value is ignored, never an error.
//
// Only the segments before the image data are walked, and in the first
// "Exif" APP1 segment only IFD0's entries, looking for tag 0x0112.
func exifOrientation(data []byte) int {
	if len(data) < 4 || data[0] != 0xff || data[1] != 0xd8 {
		return 1
	}
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xff {
			return 1
		}
		marker := data[i+1]
		switch {
		case marker == 0xff: // fill byte before a marker
			i++
			continue
		case marker == 0x01 || marker >= 0xd0 && marker <= 0xd8: // no length
			i += 2
			continue
		case marker == 0xda || marker == 0xd9: // image data or end: no Exif before
			return 1
		}
		n := int(binary.BigEndian.Uint16(data[i+2:])) // counts itself
		if n < 2 || i+2+n > len(data) {
			return 1
		}
		seg := data[i+4 : i+2+n]
		if marker == 0xe1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return tiffOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

// tiffOrientation reads the Orientation tag from IFD0 of the TIFF structure
// EXIF uses: a byte-order mark ("II" little-endian, "MM" big-endian), 42,
// IFD0's offset, then a count and 12-byte entries (tag, type, count, value).
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(t[2:]) != 42 {
		return 1
	}
	ifd := uint64(bo.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > uint64(len(t)) {
		return 1
	}
	n := int(bo.Uint16(t[ifd:]))
	entries := t[ifd+2:]
	for k := 0; k < n && 12*k+12 <= len(entries); k++ {
		e := entries[12*k : 12*k+12]
		if bo.Uint16(e[0:]) != 0x0112 {
			continue
		}
		// One SHORT (type 3), held in the first two bytes of the value.
		if bo.Uint16(e[2:]) != 3 || bo.Uint32(e[4:]) != 1 {
			return 1
		}
		if o := int(bo.Uint16(e[8:])); o >= 1 && o <= 8 {
			return o
		}
		return 1
	}
	return 1
}

// orient returns m turned and mirrored as EXIF orientation o says the
// stored pixels should be displayed; orientations 5–8 swap width and height.
// It runs on the large size, not the upload, where it costs a few
// milliseconds.
func orient(m *image.RGBA, o int) *image.RGBA {
	if o < 2 || o > 8 {
		return m
	}
	w, h := m.Rect.Dx(), m.Rect.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	out := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for dy := range dh {
		for dx := range dw {
			var sx, sy int // the stored pixel shown at (dx, dy)
			switch o {
			case 2: // mirrored left to right
				sx, sy = w-1-dx, dy
			case 3: // turned 180°
				sx, sy = w-1-dx, h-1-dy
			case 4: // mirrored top to bottom
				sx, sy = dx, h-1-dy
			case 5: // mirrored along the main diagonal
				sx, sy = dy, dx
			case 6: // to be turned 90° clockwise
				sx, sy = dy, h-1-dx
			case 7: // mirrored along the other diagonal
				sx, sy = w-1-dy, h-1-dx
			case 8: // to be turned 90° anticlockwise
				sx, sy = w-1-dy, dx
			}
			s := m.PixOffset(m.Rect.Min.X+sx, m.Rect.Min.Y+sy)
			copy(out.Pix[out.PixOffset(dx, dy):][:4], m.Pix[s:s+4])
		}
	}
	return out
}
