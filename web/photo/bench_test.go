package photo

import (
	"bytes"
	"context"
	"testing"
)

// BenchmarkReencode12MP is the cost of one typical phone upload: a 4000×3000
// JPEG (3.5 MB) to the 1600×1200 and 400×300 JPEGs. B/op is the memory
// the upload allocates: about 30 MB, most of it the decoded image (17 MB)
// and the copy of the body.
//
//	go test -run x -bench Reencode12MP -benchmem ./web/photo/
func BenchmarkReencode12MP(b *testing.B) {
	data := twelveMP()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := testWorker.Reencode(context.Background(), bytes.NewReader(data), "image/jpeg", testLimits()); err != nil {
			b.Fatal(err)
		}
	}
}
