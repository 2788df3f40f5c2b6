package photo

import (
	"context"
	"image"
	"math"
)

// The scaler shrinks an image with the Catmull-Rom kernel, the sharpest
// of the usual cubic kernels that still averages every source pixel when
// it is stretched to the scale (so nothing aliases), one axis after the
// other. It streams: each source row is read (rowReader), scaled across
// into a ring of the few rows the current output row needs, and the output
// rows are made from the ring. Beyond the decoder's image and the output,
// it holds a few rows: about 1 MB at worst (a 20,000-pixel-wide panorama),
// where x/image/draw's Kernel.Scale holds an intermediate of output width ×
// source height × 32 bytes, 320 MB for a square 40-megapixel image.

// catmullRom is the Catmull-Rom kernel (the cubic with B = 0, C = ½).
func catmullRom(x float64) float64 {
	x = math.Abs(x)
	switch {
	case x < 1:
		return (1.5*x-2.5)*x*x + 1
	case x < 2:
		return ((-0.5*x+2.5)*x-4)*x + 2
	}
	return 0
}

// axis is how one axis of n source pixels becomes the output's: output
// pixel i is the sum of source pixels first[i] ≤ s < last[i], each times
// weights[i*stride + s - first[i]]. Both first and last only grow with i,
// which is what lets the rows stream.
type axis struct {
	first, last []int
	stride      int
	weights     []float32
}

// newAxis resamples src pixels to dst ≤ src. Output pixel i is centred on
// source position (i + ½) × src/dst; the kernel is stretched by src/dst,
// and its weights, cut at the image's edges, are scaled to sum to 1, so a
// flat colour stays exactly that colour.
func newAxis(src, dst int) axis {
	a := axis{first: make([]int, dst), last: make([]int, dst)}
	if src == dst {
		a.stride, a.weights = 1, make([]float32, dst)
		for i := range dst {
			a.first[i], a.last[i], a.weights[i] = i, i+1, 1
		}
		return a
	}
	scale := float64(src) / float64(dst)
	radius := 2 * scale
	a.stride = int(2*radius) + 2
	a.weights = make([]float32, dst*a.stride)
	ws := make([]float64, a.stride)
	for i := range dst {
		center := (float64(i) + 0.5) * scale
		lo := max(0, int(math.Ceil(center-radius-0.5)))
		hi := min(src, int(math.Floor(center+radius-0.5))+1)
		var sum float64
		for s := lo; s < hi; s++ {
			ws[s-lo] = catmullRom((float64(s) + 0.5 - center) / scale)
			sum += ws[s-lo]
		}
		out := a.weights[i*a.stride:]
		for k := range hi - lo {
			out[k] = float32(ws[k] / sum)
		}
		a.first[i], a.last[i] = lo, hi
	}
	return a
}

// span is the most source pixels one output pixel reads.
func (a axis) span() int {
	n := 1
	for i := range a.first {
		n = max(n, a.last[i]-a.first[i])
	}
	return n
}

// apply resamples the row in (R, G, B triples, one a source pixel) into
// out (one triple an output pixel).
func (a axis) apply(in, out []float32) {
	for i, first := range a.first {
		ws := a.weights[i*a.stride:][:a.last[i]-first]
		p := in[3*first:][:3*len(ws)]
		var r, g, b float32
		for k, w := range ws {
			r += w * p[3*k]
			g += w * p[3*k+1]
			b += w * p[3*k+2]
		}
		out[3*i], out[3*i+1], out[3*i+2] = r, g, b
	}
}

// scaleTo returns m, as shown on screen (a GIF frame may cover only part
// of its screen: the rest is white), resampled to w×h (at most the
// screen's size) as opaque RGBA. It checks ctx every few rows, so work
// whose caller gave up stops early; the error is then ctx's.
func scaleTo(ctx context.Context, m image.Image, screen image.Rectangle, w, h int) (*image.RGBA, error) {
	read, b := rowsOf(m), m.Bounds()
	across, down := newAxis(screen.Dx(), w), newAxis(screen.Dy(), h)
	ringRows, stride := down.span(), 3*w
	ring := make([]float32, ringRows*stride)
	in := make([]float32, 3*screen.Dx())
	frame := in[3*(b.Min.X-screen.Min.X):]
	sum := make([]float32, stride)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	next := 0 // the next source row to read, from the screen's top
	for y := range h {
		for ; next < down.last[y]; next++ {
			if next%64 == 0 && ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			sy := screen.Min.Y + next
			if b.Min.X != screen.Min.X || b.Dx() != screen.Dx() || sy < b.Min.Y || sy >= b.Max.Y {
				for i := range in {
					in[i] = 255 // white where the frame does not reach
				}
			}
			if sy >= b.Min.Y && sy < b.Max.Y {
				read(sy, b.Min.X, b.Max.X, frame)
			}
			across.apply(in, ring[(next%ringRows)*stride:][:stride])
		}
		clear(sum)
		first := down.first[y]
		for k, wk := range down.weights[y*down.stride:][:down.last[y]-first] {
			for i, v := range ring[((first+k)%ringRows)*stride:][:stride] {
				sum[i] += wk * v
			}
		}
		px := dst.Pix[y*dst.Stride:][:4*w]
		for i := range w {
			px[4*i], px[4*i+1], px[4*i+2], px[4*i+3] = clamp8(sum[3*i]), clamp8(sum[3*i+1]), clamp8(sum[3*i+2]), 0xff
		}
	}
	return dst, nil
}

// clamp8 rounds v to the nearest byte: Catmull-Rom's negative lobes
// overshoot a little at sharp edges.
func clamp8(v float32) uint8 {
	switch {
	case v <= 0:
		return 0
	case v >= 255:
		return 255
	}
	return uint8(v + 0.5)
}
