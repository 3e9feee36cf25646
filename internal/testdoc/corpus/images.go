package corpus

import (
	"bytes"
	"compress/zlib"
	goimage "image"
	"image/color"
	"image/png"
	"sync"
)

// raster is an image's samples: 8-bit RGB, or grey.
type raster struct {
	W, H int
	Grey bool
	Pix  []byte
}

var (
	rastersOnce sync.Once
	rasters     [3]raster
	pngs        [3][]byte
	flates      [3][]byte
)

// imageData returns an image's raster, its PNG and its samples
// Flate-compressed (for a PDF image XObject). Made once: the same bytes
// every time.
func imageData(im image) (raster, []byte, []byte) {
	rastersOnce.Do(func() {
		rasters[logoImage] = logoRaster()
		rasters[scanImage] = scanRaster()
		for _, im := range []image{logoImage, scanImage} {
			pngs[im] = rasters[im].png()
			var z bytes.Buffer
			w, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
			w.Write(rasters[im].Pix)
			w.Close()
			flates[im] = z.Bytes()
		}
	})
	return rasters[im], pngs[im], flates[im]
}

// logoRaster is a sender's logo: a green disc with a white bar across it
// on a pale band.
func logoRaster() raster {
	r := raster{W: 160, H: 80}
	r.Pix = make([]byte, 0, r.W*r.H*3)
	for y := range r.H {
		for x := range r.W {
			c := [3]byte{0xe8, 0xf0, 0xe8}
			dx, dy := x-40, y-40
			if dx*dx+dy*dy < 34*34 {
				c = [3]byte{0x1a, 0x66, 0x33}
				if y > 34 && y < 46 {
					c = [3]byte{0xff, 0xff, 0xff}
				}
			} else if x > 84 && x < 150 && (y/8)%2 == 1 && y > 16 && y < 64 {
				c = [3]byte{0x1a, 0x66, 0x33}
			}
			r.Pix = append(r.Pix, c[:]...)
		}
	}
	return r
}

// scanRaster is a scanned address: grey paper with dark strokes where the
// lines of text were, no text.
func scanRaster() raster {
	r := raster{W: 380, H: 150, Grey: true}
	r.Pix = make([]byte, r.W*r.H)
	seed := uint32(12345)
	for y := range r.H {
		for x := range r.W {
			seed = seed*1664525 + 1013904223
			v := byte(225 + seed>>27) // paper with noise
			line := (y-20)/28 < 4 && y >= 20 && (y-20)%28 < 16
			if line && x > 20 && x < 320-((y-20)/28)*50 && (x/9)%5 != 4 {
				v = byte(30 + seed>>28)
			}
			r.Pix[y*r.W+x] = v
		}
	}
	return r
}

func (r raster) png() []byte {
	var img goimage.Image
	if r.Grey {
		g := goimage.NewGray(goimage.Rect(0, 0, r.W, r.H))
		copy(g.Pix, r.Pix)
		img = g
	} else {
		c := goimage.NewNRGBA(goimage.Rect(0, 0, r.W, r.H))
		for i := 0; i < r.W*r.H; i++ {
			c.Set(i%r.W, i/r.W, color.NRGBA{r.Pix[3*i], r.Pix[3*i+1], r.Pix[3*i+2], 0xff})
		}
		img = c
	}
	var b bytes.Buffer
	(&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, img)
	return b.Bytes()
}
