package production

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/lodge-mail/lodge/internal/sandbox"
)

// windowTexts returns the text inside area of pages first to last
// (0-based) of a PDF, one string per page, read by poppler's pdftotext in
// the sandbox (words whose box lies in the area, in reading order).
func (p *Producer) windowTexts(ctx context.Context, path string, first, last int, area Rect) ([]string, error) {
	n := last - first + 1
	out, err := sandbox.Run(ctx, p.cfg.toolLimits(n), p.cfg.WorkDir, "pdftotext",
		"-q", "-enc", "UTF-8", "-r", "72",
		"-f", strconv.Itoa(first+1), "-l", strconv.Itoa(last+1),
		"-x", strconv.Itoa(int(area.X*mm)), "-y", strconv.Itoa(int(area.Y*mm)),
		"-W", strconv.Itoa(int(area.W*mm+0.999)), "-H", strconv.Itoa(int(area.H*mm+0.999)),
		path, "-")
	if err != nil {
		return nil, err
	}
	pages := strings.Split(string(out), "\f")
	if len(pages) < n {
		return nil, fmt.Errorf("pdftotext read %d pages of %d", len(pages), n)
	}
	return pages[:n], nil
}

// channelPrefixes are the lines of the service in the field's address
// zone that are not postal lines (the auto processor reads them; they are
// masked when printed).
var channelPrefixes = []string{"REF:", "EMAIL:", "FAX:", "SMS:"}

// addressLines normalises an address for comparison: each line in capitals
// with punctuation other than / - & # removed and spaces collapsed; empty
// lines, channel lines and a last line AUSTRALIA dropped.
func addressLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		var b strings.Builder
		space := false
		for _, r := range strings.ToUpper(l) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("/-&#", r):
				if space && b.Len() > 0 {
					b.WriteByte(' ')
				}
				space = false
				b.WriteRune(r)
			default:
				space = true
			}
		}
		s := b.String()
		if s == "" {
			continue
		}
		skip := false
		for _, pfx := range channelPrefixes {
			if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(l)), pfx) {
				skip = true
			}
		}
		if !skip {
			out = append(out, s)
		}
	}
	if n := len(out); n > 1 && out[n-1] == "AUSTRALIA" {
		out = out[:n-1]
	}
	return out
}

// windowVerdict compares the text in a letter's window with its postal
// address: "" when the window shows the address, "clear" when it shows
// nothing, otherwise what it shows, for the hold reason.
func windowVerdict(window string, postal []string) string {
	got := addressLines(strings.Split(window, "\n"))
	if len(got) == 0 {
		return "clear"
	}
	want := addressLines(postal)
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return ""
	}
	return strings.Join(got, " / ")
}

// auStateLine matches the last line of an Australian address: a state and
// a postcode.
var auStateLine = regexp.MustCompile(`\b(NSW|VIC|QLD|SA|WA|TAS|NT|ACT)\s+\d{4}\b`)

// looksLikeAddress reports whether what a window shows reads as an
// Australian address (a line with a state and a postcode): another
// recipient's, rather than a letterhead or body text.
func looksLikeAddress(shown string) bool {
	return auStateLine.MatchString(strings.ToUpper(shown))
}
