package browser

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
)

// Top returns the top height pixels of the page's screenshot (Load given
// WithScreenshot) as a PNG, or the whole screenshot when it is not that
// high: a picture of the start of a long report, small enough to show in a
// README.
func (p *Page) Top(height int) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(p.Screenshot))
	if err != nil {
		return nil, fmt.Errorf("screenshot of %s: %w", p.URL, err)
	}
	b := img.Bounds()
	if height <= 0 || height >= b.Dy() {
		return p.Screenshot, nil
	}
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		return nil, fmt.Errorf("screenshot of %s: a %T cannot be cut", p.URL, img)
	}
	var out bytes.Buffer
	if err := png.Encode(&out, sub.SubImage(image.Rect(b.Min.X, b.Min.Y, b.Max.X, b.Min.Y+height))); err != nil {
		return nil, fmt.Errorf("screenshot of %s: %w", p.URL, err)
	}
	return out.Bytes(), nil
}
