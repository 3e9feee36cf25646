package pdf

import (
	"fmt"
	"image/color"

	"github.com/boombuler/barcode/datamatrix"
)

// DataMatrix draws a Data Matrix (ECC 200) symbol of text with its
// lower-left corner at (x, y), each module module points wide, in black
// on a white quiet zone two modules wide (so that it reads over whatever
// the page has there), and returns the symbol's width and height in
// points, quiet zone not included.
func (c *Content) DataMatrix(text string, x, y, module float64) (w, h float64, err error) {
	code, err := datamatrix.Encode(text)
	if err != nil {
		return 0, 0, fmt.Errorf("data matrix of %q: %w", text, err)
	}
	b := code.Bounds()
	cols, rows := b.Dx(), b.Dy()
	c.Save()
	c.Gray(1)
	c.Rect(x-2*module, y-2*module, float64(cols+4)*module, float64(rows+4)*module)
	c.Fill()
	c.Gray(0)
	for row := 0; row < rows; row++ {
		// image rows run top down; PDF y up
		yy := y + float64(rows-1-row)*module
		for col := 0; col < cols; {
			if !dark(code.At(b.Min.X+col, b.Min.Y+row)) {
				col++
				continue
			}
			start := col
			for col < cols && dark(code.At(b.Min.X+col, b.Min.Y+row)) {
				col++
			}
			c.Rect(x+float64(start)*module, yy, float64(col-start)*module, module)
		}
	}
	c.Fill()
	c.Restore()
	return float64(cols) * module, float64(rows) * module, nil
}

func dark(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r+g+b < 3*0x8000
}
