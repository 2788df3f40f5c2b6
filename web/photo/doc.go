// Package photo turns an untrusted image upload into the JPEG sizes a pet's
// photo is stored in: large, longest side at most 1600 pixels, and thumb,
// at most 400 (SPEC §14), and medium, at most 800, for the pages' srcset;
// never scaled up, without any of the upload's metadata (EXIF, GPS
// position, comments).
//
// It knows nothing of HTTP or the database. A server makes one Worker,
// which every surface taking uploads shares; a handler calls
// CheckContentType before reading the body, then Worker.Reencode, and maps
// the sentinel errors:
//
//	res, err := worker.Reencode(ctx, body, c.Get("Content-Type"), limits)
//	switch {
//	case errors.Is(err, photo.ErrUnsupportedType): // 415
//	case errors.Is(err, photo.ErrTooLarge): // 413
//	case errors.Is(err, photo.ErrUndecodable),
//		errors.Is(err, photo.ErrTooManyPixels): // 422, field "body"
//	case errors.Is(err, photo.ErrTimeout),
//		errors.Is(err, photo.ErrBusy): // 503: busy, try again
//	case err != nil: // the body's reader failed or ctx was cancelled
//	}
//
// What an upload can cost is bounded step by step (SPEC §14, §17). The
// body is read up to Limits.MaxBytes+1 bytes. The format comes from the
// bytes' signature, and only the standard library's JPEG, PNG and GIF
// decoders and x/image's WebP decoder ever run. Width and height are read
// from the header first: over Limits.MaxPixels or Limits.MaxSide is
// refused before the decoder allocates anything, which is what stops
// decompression bombs. Uploads are then processed one at a time per
// Worker, with at most MaxWaiting waiting, each holding its body; one more
// is refused at once (ErrBusy), so a flood holds at most MaxWaiting bodies.
// Waiting, the decode, the resize and the encode share Limits.Timeout.
//
// One upload's peak memory is its decoded image plus a few megabytes
// (SPEC §17: within 64 MiB): the decoder's pixels are the only full-size
// buffer (4 bytes a pixel for an 8-bit PNG, 1.5 for a typical JPEG, 8 for
// a 16-bit PNG: up to 320 MB at 40 megapixels), because the scaler reads
// it a row at a time into a ring of a few rows (scale.go) rather than
// converting it or keeping an intermediate of its height. One exception
// is the standard library's own: decoding a progressive JPEG also holds
// its coefficients, 4 bytes a sample (6 a pixel at 4:2:0). Measured with
// make bench's upload rows: a 12-megapixel JPEG (17 MB decoded) raises
// the server's peak RSS by about 40 MB, a 40-megapixel 8-bit PNG (152 MB
// decoded) by about 165 MB, where x/image/draw's Catmull-Rom over an RGBA
// copy took about 200 and 490 MB.
//
// A decoder panic is turned into ErrUndecodable rather than killing the
// process: decoding runs on its own goroutine, where the HTTP server's
// recover middleware would not catch it.
package photo
