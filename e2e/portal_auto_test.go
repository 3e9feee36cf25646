package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testenv"
)

var reviewURLRE = regexp.MustCompile(`/portal/auto/([0-9A-Z]+)$`)

// TestPortalAutoBrowser uploads a letter PDF to the auto processor in a
// real browser against the real binary: a clerk signs in, opens "Upload
// letters", chooses the file and a title, and lands on the review, which
// shows (once the extract stage has run) the three letters read from the
// envelope windows: address lines, verdicts, pages, references. The
// letter with an invalid address is corrected through its page, the
// mailing confirmed (its customer hold released), and the letters go on
// to a print batch and, marked done by the print room, Printed. Each step
// is checked on the page and through the API (get_letter_status,
// get_mailing); every page is screenshotted and checked by axe-core.
func TestPortalAutoBrowser(t *testing.T) { eachSetup(t, testPortalAutoBrowser) }

func testPortalAutoBrowser(t *testing.T, start startFunc) {
	testenv.Tool(t, "chromium") // skip before starting lodge when there is none
	const clerkPass = "clerk's long password 9"
	in := start(t, map[string]string{"clerk": clerkPass}, "-cancel-window", "0s")
	doc := mailDoc(t,
		mailpdf.Page{Address: []string{"ref:PA-1", "Jo Citizen", "10 Jones St", "Ultimo NSW 2007"}, Text: "Statement one"},
		mailpdf.Page{Text: "Statement one, page two"},
		mailpdf.Page{Address: []string{"ref:PA-2", "Al Bad", "1 Nowhere Rd", "Atlantis VIC 2999"}, Text: "Statement two"},
		mailpdf.Page{Address: []string{"ref:PA-3", "Jo Citizen", "10 Jones St", "Melbourne VIC 3000"}, Text: "Statement three"})
	path := filepath.Join(t.TempDir(), "statements.pdf")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}

	b := newPortalBrowser(t, in)
	b.signIn("clerk", clerkPass)

	// the upload page, from the navigation
	b.load("open Upload letters", 200, chromedp.Click(chromedp.CSS(`nav a[href="/portal/auto"]`)))
	b.expect("the upload page", []string{"Upload letters", "PDF, PostScript or XPS", "Up to 20 files and 20 MB at a time"})
	b.screenshot("auto-upload")
	b.do("choose the file",
		chromedp.SendKeys(chromedp.ID("title"), "March statements"),
		chromedp.SetUploadFiles(chromedp.ID("files"), []string{path}))
	b.load("upload", 200, chromedp.Click(chromedp.CSS(`main form button[type=submit]`)))
	m := reviewURLRE.FindStringSubmatch(b.location())
	if m == nil {
		t.Fatalf("the upload led to %s, not a review\n%s", b.location(), b.text())
	}
	epid := m[1]
	b.expect("uploaded", []string{"1 file uploaded as mailing " + epid, "Review the letters of " + epid, "March statements", "statements.pdf"})

	// the review says it is reading until the letters are recorded; its
	// reload link shows them
	if strings.Contains(b.text(), "Reading your letters") {
		b.screenshot("auto-reading")
	}
	testenv.WaitFor(t, func() bool {
		if !strings.Contains(b.text(), "Reading your letters") {
			return true
		}
		b.load("reload", 200, chromedp.Click(chromedp.CSS(`section.reading a.button`)))
		return false
	}, func() string { return "the letters read; the server's log ends:\n" + lastLines(in.logs(), 30) })
	b.expect("the letters read", []string{"3 letters", "Letters 1–3 of 3", "statements.pdf p.\u00a01–2", "statements.pdf p.\u00a03", "statements.pdf p.\u00a04",
		"PA-1", "PA-2", "PA-3", "Jo Citizen\n10 Jones St\nUltimo NSW 2007", "Al Bad\n1 Nowhere Rd\nAtlantis VIC 2999", "Melbourne VIC 3000",
		"matched", "invalid", "invalid postal address", "the mailing is on customer hold", "Confirm and release", "Correct"})
	waitLetters(t, in, map[string]string{"PA-1": "Held customer", "PA-2": "Held address", "PA-3": "Held customer"})
	b.screenshot("auto-review")

	// correct the invalid address from the review
	b.load("open the correction", 200, chromedp.Click(chromedp.CSS(`a.fix[href="/portal/mailings/`+epid+`/letters/1"]`)))
	b.expect("letter 2", []string{"Letter 2", "Held", "1 Nowhere Rd", "Correct the address", "invalid"})
	b.do("type the corrected address",
		chromedp.Clear(chromedp.ID("address")),
		chromedp.SendKeys(chromedp.ID("address"), "Al Bad\n10 Jones St\nUltimo NSW 2007"))
	b.load("correct", 200, chromedp.Click(chromedp.CSS(`form[action$="/correct"] button[type=submit]`)))
	b.expect("corrected", []string{"Letter 2 corrected", "Ultimo NSW 2007"})
	// still on the customer's hold: nothing goes before the confirmation
	waitLetters(t, in, map[string]string{"PA-1": "Held customer", "PA-2": "Held customer", "PA-3": "Held customer"})
	b.screenshot("auto-letter-corrected")

	// back to the review, and confirm
	b.load("back to the review", 200, chromedp.Navigate(in.url+"/portal/auto/"+epid))
	b.expect("reviewed again", []string{"Al Bad\n10 Jones St\nUltimo NSW 2007", "Confirm and release"}, "1 Nowhere Rd")
	b.load("confirm", 200, chromedp.Click(chromedp.CSS(`form.bar button[type=submit]`)))
	b.expect("confirmed", []string{"3 letters released.", "Mailing " + epid}, "This mailing is on hold", "Not released")
	b.screenshot("auto-confirmed")

	// the letters go past the hold: checked and put in print batches
	// (the cancellation window is 0 here), then printed
	var batches []string
	testenv.WaitFor(t, func() bool {
		_, letters := getMailing(t, in, epid)
		batches = batches[:0]
		for _, l := range letters {
			if l.Status != "Processing" || l.Batch == "" {
				return false
			}
			if !slices.Contains(batches, l.Batch) {
				batches = append(batches, l.Batch)
			}
		}
		return len(letters) == 3
	}, func() string {
		_, letters := getMailing(t, in, epid)
		return fmt.Sprintf("the confirmed letters in a print batch: %+v", letters)
	})
	b.load("the review after confirming", 200, chromedp.Navigate(in.url+"/portal/auto/"+epid))
	b.expect("confirmed review", []string{"This mailing was confirmed", "Processing"}, "Confirm and release", "Held")
	for _, id := range batches {
		if out, err := in.admin("", "print", "done", id); err != nil {
			t.Fatalf("lodge print done %s: %v\n%s", id, err, out)
		}
	}
	waitLetters(t, in, map[string]string{"PA-1": "Printed", "PA-2": "Printed", "PA-3": "Printed"})
	b.load("the mailing printed", 200, chromedp.Navigate(in.url+"/portal/mailings/"+epid))
	b.expect("printed", []string{"Mailing " + epid, "March statements", "Printed 3"}, "Held", "Processing")
	b.screenshot("auto-printed")
}
