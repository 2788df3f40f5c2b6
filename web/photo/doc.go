// Package photo turns an untrusted image upload into the JPEG sizes a pet's
// photo is stored in: large, longest side at most 1600 pixels, and thumb,
// at most 400 (SPEC §14), and medium, at most 800, for the pages' srcset;
// never scaled up, without any of the upload's metadata (EXIF, GPS
// position, comments).
//
// It knows nothing of HTTP or the database. A handler calls CheckContentType
// before reading the body, then Reencode, and maps the sentinel errors:
//
//	res, err := photo.Reencode(ctx, body, c.Get("Content-Type"), limits)
//	switch {
//	case errors.Is(err, photo.ErrUnsupportedType): // 415
//	case errors.Is(err, photo.ErrTooLarge): // 413
//	case errors.Is(err, photo.ErrUndecodable),
//		errors.Is(err, photo.ErrTooManyPixels): // 422, field "body"
//	case errors.Is(err, photo.ErrTimeout): // 503: busy, try again
//	case err != nil: // the body's reader failed or ctx was cancelled
//	}
//
// What an upload can cost is bounded step by step. The body is read up to
// Limits.MaxBytes+1 bytes. The format comes from the bytes' signature, and
// only the standard library's JPEG, PNG and GIF decoders and x/image's WebP
// decoder ever run. Width and height are read from the header first: over
// Limits.MaxPixels or Limits.MaxSide is refused before the decoder allocates
// anything, which is what stops decompression bombs. The decode, the resize
// and the encode share Limits.Timeout. The memory one upload can take is
// then bounded by the pixel limit: at 40 megapixels, up to about 320 MB of
// decoded pixels (16-bit PNG; 60 MB for a typical JPEG, more while a
// progressive JPEG is decoded) plus the resizer's intermediate (up to
// 320 MB for a square image). Measured: a 12-megapixel JPEG allocates about
// 200 MB and takes about a second of one core (BenchmarkReencode12MP); a
// square 40-megapixel 16-bit PNG, the worst case, about 650 MB and 4
// seconds. Uploads are processed one at a time per process, so that is also
// the most photos take at once.
//
// A decoder panic is turned into ErrUndecodable rather than killing the
// process: decoding runs on its own goroutine, where the HTTP server's
// recover middleware would not catch it.
package photo
