package photo

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"testing"

	"petstore/web/photo/phototest"
)

// TestReencodeFormats: each accepted format comes out as three JPEGs of the
// right size, with the format of the bytes reported.
func TestReencodeFormats(t *testing.T) {
	src := phototest.PhotoLike(120, 90)
	for _, tt := range []struct {
		name, contentType string
		data              []byte
		format            string
		w, h              int
	}{
		{"jpeg", "image/jpeg", encodeJPEGBytes(t, src), "jpeg", 120, 90},
		{"jpeg gray", "image/jpeg", encodeJPEGBytes(t, image.NewGray(image.Rect(0, 0, 50, 40))), "jpeg", 50, 40},
		{"png", "image/png", encodePNGBytes(t, src), "png", 120, 90},
		{"png 16-bit", "image/png", encodePNGBytes(t, image.NewRGBA64(image.Rect(0, 0, 30, 20))), "png", 30, 20},
		{"gif", "image/gif", encodeGIFBytes(t, src), "gif", 120, 90},
		{"webp lossless", "image/webp", readTestdata(t, "gopher-doc.1bpp.lossless.webp"), "webp", 75, 100},
		{"webp lossless alpha", "image/webp", readTestdata(t, "gopher-doc.with-alpha.lossless.webp"), "webp", 75, 100},
		{"webp lossy", "image/webp", readTestdata(t, "blue-purple-pink.lossy.webp"), "webp", 150, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := mustReencode(t, tt.data, tt.contentType)
			if res.Format != tt.format {
				t.Errorf("Format = %q, want %q", res.Format, tt.format)
			}
			for _, j := range []struct {
				name string
				JPEG
			}{{"large", res.Large}, {"medium", res.Medium}, {"thumb", res.Thumb}} {
				decodeJPEG(t, j.name, j.JPEG)
				if j.Width != tt.w || j.Height != tt.h {
					t.Errorf("%s = %dx%d, want %dx%d (small images are not scaled)", j.name, j.Width, j.Height, tt.w, tt.h)
				}
			}
		})
	}
}

// TestReencodeSizes: the longest side is brought down to 1600, 800 and
// 400 pixels, keeping the aspect ratio, and never up.
func TestReencodeSizes(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		w, h                 int
		large, medium, thumb image.Point
	}{
		{"12 MP landscape", 4000, 3000, image.Pt(1600, 1200), image.Pt(800, 600), image.Pt(400, 300)},
		{"portrait", 1536, 2048, image.Pt(1200, 1600), image.Pt(600, 800), image.Pt(300, 400)},
		{"small never upscaled", 300, 200, image.Pt(300, 200), image.Pt(300, 200), image.Pt(300, 200)},
		{"between the sizes", 1000, 500, image.Pt(1000, 500), image.Pt(800, 400), image.Pt(400, 200)},
		{"between medium and thumb", 600, 450, image.Pt(600, 450), image.Pt(600, 450), image.Pt(400, 300)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := twelveMP()
			if tt.w != 4000 || tt.h != 3000 {
				data = encodeJPEGBytes(t, phototest.PhotoLike(tt.w, tt.h))
			}
			res := mustReencode(t, data, "image/jpeg")
			decodeJPEG(t, "large", res.Large)
			decodeJPEG(t, "medium", res.Medium)
			decodeJPEG(t, "thumb", res.Thumb)
			if got := image.Pt(res.Large.Width, res.Large.Height); got != tt.large {
				t.Errorf("large = %v, want %v", got, tt.large)
			}
			if got := image.Pt(res.Medium.Width, res.Medium.Height); got != tt.medium {
				t.Errorf("medium = %v, want %v", got, tt.medium)
			}
			if got := image.Pt(res.Thumb.Width, res.Thumb.Height); got != tt.thumb {
				t.Errorf("thumb = %v, want %v", got, tt.thumb)
			}
		})
	}
}

func TestFit(t *testing.T) {
	for _, tt := range []struct{ w, h, side, wantW, wantH int }{
		{4000, 3000, 1600, 1600, 1200},
		{3000, 4000, 1600, 1200, 1600},
		{4000, 3000, 400, 400, 300},
		{300, 200, 1600, 300, 200},
		{300, 200, 400, 300, 200},
		{1600, 1600, 1600, 1600, 1600},
		{1601, 1600, 1600, 1600, 1599},
		{4032, 3024, 1600, 1600, 1200},
		{20000, 1, 1600, 1600, 1},   // never 0 pixels tall
		{1, 20000, 400, 1, 400},     // never 0 pixels wide
		{20000, 2000, 400, 400, 40}, // a panorama
		{1, 1, 400, 1, 1},
	} {
		if w, h := fit(tt.w, tt.h, tt.side); w != tt.wantW || h != tt.wantH {
			t.Errorf("fit(%d, %d, %d) = %d, %d, want %d, %d", tt.w, tt.h, tt.side, w, h, tt.wantW, tt.wantH)
		}
	}
}

// TestReencodeTrustsTheBytes: a declared type that is one of the four but
// not what the bytes are does not matter; the bytes are decoded as what
// they are, and the output is a fresh JPEG either way.
func TestReencodeTrustsTheBytes(t *testing.T) {
	src := phototest.PhotoLike(64, 48)
	for _, tt := range []struct {
		name, contentType string
		data              []byte
		format            string
	}{
		{"jpeg declared png", "image/png", encodeJPEGBytes(t, src), "jpeg"},
		{"png declared jpeg", "image/jpeg", encodePNGBytes(t, src), "png"},
		{"gif declared webp", "image/webp", encodeGIFBytes(t, src), "gif"},
		{"webp declared gif", "image/gif", readTestdata(t, "blue-purple-pink.lossy.webp"), "webp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := mustReencode(t, tt.data, tt.contentType)
			if res.Format != tt.format {
				t.Errorf("Format = %q, want %q", res.Format, tt.format)
			}
			decodeJPEG(t, "large", res.Large)
		})
	}
}

// TestReencodeFlattensOntoWhite: transparent pixels come out white, not the
// black they would be if the alpha channel were simply dropped, and opaque
// ones keep their colour.
func TestReencodeFlattensOntoWhite(t *testing.T) {
	m := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 32 { // left half opaque red, right half transparent
			m.SetNRGBA(x, y, color.NRGBA{255, 0, 0, 255})
		}
	}
	res := mustReencode(t, encodePNGBytes(t, m), "image/png")
	out := decodeJPEG(t, "large", res.Large)
	assertNear(t, "opaque red", out.At(8, 32), color.RGBA{255, 0, 0, 255})
	assertNear(t, "transparent", out.At(56, 32), color.RGBA{255, 255, 255, 255})

	// The WebP gopher has transparent pixels: each must come out white.
	data := readTestdata(t, "gopher-doc.with-alpha.lossless.webp")
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out = decodeJPEG(t, "webp large", mustReencode(t, data, "image/webp").Large)
	transparent := 0
	for y := range 100 {
		for x := range 75 {
			if _, _, _, a := src.At(x, y).RGBA(); a == 0 {
				transparent++
				if transparent%50 == 0 { // a sample: JPEG blurs edges
					assertNearish(t, "webp transparent pixel", out.At(x, y), color.RGBA{255, 255, 255, 255}, 60)
				}
			}
		}
	}
	if transparent == 0 {
		t.Fatal("the alpha WebP has no transparent pixel: wrong test file")
	}
}

// TestReencodeGIFTransparency: a GIF's transparent palette entry becomes
// white too.
func TestReencodeGIFTransparency(t *testing.T) {
	pal := color.Palette{color.RGBA{0, 0, 0, 0}, color.RGBA{0, 0, 255, 255}}
	m := image.NewPaletted(image.Rect(0, 0, 40, 40), pal)
	for y := range 40 {
		for x := range 20 {
			m.SetColorIndex(x, y, 1)
		}
	}
	out := decodeJPEG(t, "large", mustReencode(t, encodeGIFBytes(t, m), "image/gif").Large)
	assertNear(t, "opaque blue", out.At(5, 20), color.RGBA{0, 0, 255, 255})
	assertNear(t, "transparent", out.At(35, 20), color.RGBA{255, 255, 255, 255})
}

// TestReencodeGIFFrameOnScreen: a GIF whose first frame covers part of its
// logical screen comes out the size of the screen, as browsers show it,
// with the uncovered part white.
func TestReencodeGIFFrameOnScreen(t *testing.T) {
	pal := color.Palette{color.RGBA{0, 0, 0, 255}, color.RGBA{255, 0, 0, 255}}
	frame := image.NewPaletted(image.Rect(20, 20, 36, 36), pal)
	for i := range frame.Pix {
		frame.Pix[i] = 1
	}
	var buf bytes.Buffer
	err := gif.EncodeAll(&buf, &gif.GIF{
		Image:  []*image.Paletted{frame},
		Delay:  []int{0},
		Config: image.Config{ColorModel: pal, Width: 48, Height: 40},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := mustReencode(t, buf.Bytes(), "image/gif")
	if res.Large.Width != 48 || res.Large.Height != 40 {
		t.Fatalf("large = %dx%d, want the screen's 48x40", res.Large.Width, res.Large.Height)
	}
	out := decodeJPEG(t, "large", res.Large)
	assertNear(t, "frame", out.At(28, 28), color.RGBA{255, 0, 0, 255})
	assertNear(t, "outside the frame", out.At(5, 5), color.RGBA{255, 255, 255, 255})
}

func assertNear(tb testing.TB, what string, got color.Color, want color.RGBA) {
	tb.Helper()
	assertNearish(tb, what, got, want, 24) // JPEG is lossy
}

func assertNearish(tb testing.TB, what string, got color.Color, want color.RGBA, tolerance int) {
	tb.Helper()
	r, g, b, _ := got.RGBA()
	for i, c := range []struct{ got, want uint32 }{{r >> 8, uint32(want.R)}, {g >> 8, uint32(want.G)}, {b >> 8, uint32(want.B)}} {
		if d := int(c.got) - int(c.want); d < -tolerance || d > tolerance {
			tb.Errorf("%s: channel %d = %d, want %d±%d", what, i, c.got, c.want, tolerance)
		}
	}
}
