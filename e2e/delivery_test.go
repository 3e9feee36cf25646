package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/smtp"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/mailpittest"
	"github.com/lodge-mail/lodge/internal/smpp/smpptest"
	"github.com/lodge-mail/lodge/internal/testdoc/mailpdf"
	"github.com/lodge-mail/lodge/internal/testenv"
)

// deliveryInstance starts lodge with email (Mailpit), SMS (the npm smpp
// server), fax through an email-to-fax domain, links under a public URL
// that the test maps back to the instance, and no cancellation window.
func deliveryInstance(t *testing.T, start startFunc, mp *mailpittest.Server, sms *smpptest.Server) *instance {
	t.Helper()
	in := start(t, nil, "-cancel-window", "0s", "-smtp", mp.URL(), "-email-from", "lodge <noreply@lodge.example>",
		"-smpp", sms.URL(), "-sms-from", "61400000000", "-fax-gateway-domain", "fax.example.com",
		"-public-url", "https://lodge.test", "-bounce-addr", "127.0.0.1:0", "-bounce-domain", "bounces.lodge.test")
	if out, err := in.admin("", "account", "sender", "add", "DEM00001", "-email", "acme.com.au"); err != nil {
		t.Fatalf("sender add: %v\n%s", err, out)
	}
	return in
}

// fetch gets a link lodge signed for https://lodge.test from the instance.
func (in *instance) fetch(t *testing.T, link string) (int, []byte) {
	t.Helper()
	u := strings.Replace(link, "https://lodge.test", in.url, 1)
	resp, err := in.httpsClient(t).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func statusOf(t *testing.T, in *instance, ref string) map[string]any {
	t.Helper()
	ls := letterStatuses(t, in, ref)
	if len(ls) != 1 {
		t.Fatalf("%s: %v", ref, ls)
	}
	return ls[0]
}

func waitStatus(t *testing.T, in *instance, ref string, want ...string) map[string]any {
	t.Helper()
	var got map[string]any
	testenv.WaitFor(t, func() bool {
		got = statusOf(t, in, ref)
		for _, w := range want {
			if got["status"] == w {
				return true
			}
		}
		return false
	}, func() string {
		return fmt.Sprintf("letter %s %v, has %v; log:\n%s", ref, want, got, lastLines(in.logs(), 20))
	})
	return got
}

// TestElectronicDelivery sends the mailing shapes of spec section 1 that
// use email, SMS or fax through the real binary to real servers, and
// reads what they received: an email with its letter attached and the
// template filled, a text-only email, a fax to the gateway with the
// PDF, an SMS long enough for three parts carrying a link to the
// password-protected PDF (opened with the password by qpdf, refused
// without), the receipts and openings in get_letter_status, the
// confirmation emails; and a letter whose email the server refuses
// for good failing over to post.
func TestElectronicDelivery(t *testing.T) { eachSetup(t, testElectronicDelivery) }

func testElectronicDelivery(t *testing.T, start startFunc) {
	qpdf := testenv.Tool(t, "qpdf")
	mp := mailpittest.Start(t, mailpittest.Options{Chaos: true})
	sms := smpptest.Start(t)
	in := deliveryInstance(t, start, mp, sms)

	doc := mailDoc(t, mailpdf.Page{Address: []string{"Jo Citizen", "10 Jones St", "Melbourne VIC 3000"}, Text: "Statement for March"},
		mailpdf.Page{Text: "Fax cover"})
	other := mailDoc(t, mailpdf.Page{Text: "unused"})

	// Mailing A: email with the letter, fax, text-only email, confirmations.
	metaA := `{"title":"March","email_from":"Acme Billing <billing@acme.com.au>","email_subj":"Your March statement",
		"template":"Dear {{name}},\nyour statement is attached.","customer_email":"ops@acme.com.au","confirmation_email":true,
		"letters":[
		 {"email":"jo@example.net","reference":"A-email","custom_data":{"name":"Jo"},"file_name":"doc.pdf","page_start":0,"page_end":0},
		 {"fax":"+61 2 6123 4567","reference":"A-fax","custom_data":{"name":"Fax"},"file_name":"doc.pdf","page_start":1,"page_end":1}]}`
	sendMailing(t, in, "doc.pdf", doc, "other.pdf", other, "meta.json", metaA)
	// a text-only email: metadata and no document
	sendMailing(t, in, "meta.json", `{"email_from":"billing@acme.com.au","email_subj":"Your March statement","template":"Dear {{name}},\nyour statement is attached.",
		"letters":[{"email":"al@example.net","reference":"A-text","custom_data":{"name":"Al"}}]}`)
	waitStatus(t, in, "A-email", "Lodged")
	waitStatus(t, in, "A-fax", "Lodged")
	waitStatus(t, in, "A-text", "Lodged")
	byTo := map[string]mailpittest.Message{}
	for _, s := range mp.WaitCount(t, 5) { // three letters, two confirmations
		m := mp.Message(t, s.ID)
		byTo[m.To[0].Address+" "+m.Subject] = m
	}
	em, ok := byTo["jo@example.net Your March statement"]
	if !ok {
		t.Fatalf("no email to jo@example.net: %v", keys(byTo))
	}
	if em.From.Address != "billing@acme.com.au" || !strings.Contains(crlf(em.Text), "Dear Jo,\nyour statement is attached.") || len(em.Attachments) != 1 {
		t.Errorf("email: from %v text %q attachments %v", em.From, em.Text, em.Attachments)
	} else {
		pdfPath := filepath.Join(t.TempDir(), "a.pdf")
		os.WriteFile(pdfPath, mp.Part(t, em.ID, em.Attachments[0].PartID), 0o644)
		if txt := pdftotext(t, pdfPath); !strings.Contains(txt, "Statement for March") || strings.Contains(txt, "Fax cover") {
			t.Errorf("the attached letter reads %q", txt)
		}
	}
	// the tracking image, opened: get_letter_status says when
	pixel := between(em.HTML, `src="`, `"`)
	if code, _ := in.fetch(t, pixel); code != 200 {
		t.Errorf("tracking image %s: %d", pixel, code)
	}
	if st := statusOf(t, in, "A-email"); st["email_first_opened"] == nil {
		t.Errorf("opening not reported: %v", st)
	}
	fax, ok := byTo["61261234567@fax.example.com Your March statement"]
	if !ok || len(fax.Attachments) != 1 {
		t.Errorf("no fax to the gateway with its PDF: %v", keys(byTo))
	}
	text, ok := byTo["al@example.net Your March statement"]
	if !ok || len(text.Attachments) != 0 || !strings.Contains(text.Text, "Dear Al,") {
		t.Errorf("text-only email: %+v", text)
	}
	conf := 0
	for k := range byTo {
		if strings.HasPrefix(k, "ops@acme.com.au ") {
			conf++
		}
	}
	if conf != 2 {
		t.Errorf("%d confirmation emails, want accepted and done: %v", conf, keys(byTo))
	}

	// Mailing B: an SMS of three parts with a link to its PDF, protected.
	long := strings.Repeat("Your account summary is ready. ", 8)
	metaB := `{"sms_from":"0412345678","template":"Hi {{name}}. ` + long + `Open it here: {{link}}",
		"letters":[{"sms":"0412000111","reference":"B-sms","custom_data":{"name":"Jo","password":"s3cret pw"},"file_name":"doc.pdf"},
		 {"email":"ann@example.net","reference":"B-email","custom_data":{"name":"Ann","password":"other pw"},"file_name":"doc.pdf"}]}`
	sendMailing(t, in, "doc.pdf", doc, "meta.json", metaB)
	waitStatus(t, in, "B-sms", "Lodged", "Delivered")
	msgs := sms.WaitMessages(t, 1)
	got := msgs[len(msgs)-1]
	if len(got.Parts) < 3 || got.Dest != "0412000111" || !strings.HasPrefix(got.Text, "Hi Jo. "+long+"Open it here: https://lodge.test/l/") {
		t.Fatalf("SMS: %d parts to %s: %q", len(got.Parts), got.Dest, got.Text)
	}
	link := got.Text[strings.Index(got.Text, "https://"):]
	code, body := in.fetch(t, link)
	if code != 200 || !strings.HasPrefix(string(body), "%PDF") {
		t.Fatalf("link: %d %.40q", code, body)
	}
	pdfPath := filepath.Join(t.TempDir(), "b.pdf")
	os.WriteFile(pdfPath, body, 0o644)
	if out, err := exec.Command(qpdf, "--check", "--password=s3cret pw", pdfPath).CombinedOutput(); err != nil {
		t.Errorf("qpdf with the password: %v\n%s", err, out)
	}
	if out, err := exec.Command(qpdf, "--check", pdfPath).CombinedOutput(); err == nil {
		t.Errorf("opens without the password:\n%s", out)
	}
	if st := waitStatus(t, in, "B-sms", "Delivered"); st["doc_first_opened"] == nil {
		t.Errorf("document opening not reported: %v", st)
	}
	if code, _ := in.fetch(t, link+"x"); code != 404 {
		t.Errorf("a forged link: %d", code)
	}
	// the email of the same mailing carries its own link, to its own
	// protected PDF, and no attachment
	waitStatus(t, in, "B-email", "Lodged")
	var bm mailpittest.Message
	for _, s := range mp.Messages(t) {
		if m := mp.Message(t, s.ID); m.To[0].Address == "ann@example.net" {
			bm = m
		}
	}
	elink := between(crlf(bm.Text), "Open it here: ", "\n")
	if !strings.HasPrefix(elink, "https://lodge.test/l/") || len(bm.Attachments) != 0 || !strings.HasPrefix(crlf(bm.Text), "Hi Ann. ") {
		t.Fatalf("email with a link: %q, %d attachments", bm.Text, len(bm.Attachments))
	}
	code, body = in.fetch(t, strings.TrimSpace(elink))
	epdf := filepath.Join(t.TempDir(), "e.pdf")
	os.WriteFile(epdf, body, 0o644)
	if out, err := exec.Command(qpdf, "--check", "--password=other pw", epdf).CombinedOutput(); code != 200 || err != nil {
		t.Errorf("the email's link: %d, qpdf: %v\n%s", code, err, out)
	}

	// Mailing E: a text-only SMS (no document), in UCS-2 for its
	// characters outside GSM.
	sendMailing(t, in, "meta.json", `{"template":"Reminder: your appointment with Dr Łukasz is on {{date}} ✓",
		"letters":[{"sms":"0412000222","reference":"E-sms","custom_data":{"date":"3 April"}}]}`)
	waitStatus(t, in, "E-sms", "Lodged", "Delivered")
	var textOnly *smpptest.Message
	for _, m := range sms.Messages(t) {
		if m.Dest == "0412000222" {
			textOnly = &m
		}
	}
	if textOnly == nil || textOnly.Text != "Reminder: your appointment with Dr Łukasz is on 3 April ✓" || textOnly.DataCoding != 8 {
		t.Errorf("text-only SMS: %+v", textOnly)
	}

	// Mailing C: the email server refuses the address for good: the
	// letter fails over to post and is printed.
	mp.SetChaos(t, mailpittest.Chaos{Recipient: mailpittest.Trigger{ErrorCode: 550, Probability: 100}})
	metaC := `{"letters":[{"email":"gone@example.net","primary":"email","reference":"C-failover",
		"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"],"file_name":"doc.pdf"}]}`
	sendMailing(t, in, "doc.pdf", doc, "meta.json", metaC)
	// Processing twice: first being sent, then (failed over) in a print batch
	var st map[string]any
	testenv.WaitFor(t, func() bool {
		st = statusOf(t, in, "C-failover")
		return st["status"] == "Processing" && st["failover"] != nil && st["batch"] != nil
	}, func() string { return fmt.Sprintf("C-failover failed over and batched: %v", st) })
	mp.SetChaos(t, mailpittest.Chaos{})
	if fo, _ := st["failover"].(map[string]any); fo == nil || fo["from"] != "EMAIL" || !strings.Contains(fmt.Sprint(fo["reason"]), "550") {
		t.Errorf("failover: %v", st)
	}
	code2, out := in.curl(in.url+"/publicinterface/failovers.json?account=DEM00001", "-H", "Authorization: Bearer "+in.key)
	if code2 != 200 || !strings.Contains(out, `"reference":"C-failover"`) {
		t.Errorf("failovers.json: %d %s", code2, out)
	}

	// Mailing D: the email is taken, then bounces (a delivery status
	// notification to its VERP return path): it fails over to post.
	metaD := `{"letters":[{"email":"later-gone@example.net","primary":"email","reference":"D-bounce",
		"postal":["Jo Citizen","10 Jones St","Melbourne VIC 3000"],"file_name":"doc.pdf"}]}`
	epidD, _ := sendMailing(t, in, "doc.pdf", doc, "meta.json", metaD)
	waitStatus(t, in, "D-bounce", "Lodged")
	var rp string
	for _, s := range mp.Messages(t) {
		if m := mp.Message(t, s.ID); m.To[0].Address == "later-gone@example.net" {
			rp = m.ReturnPath
		}
	}
	if want := "bounce+" + epidD + ".0@bounces.lodge.test"; rp != want {
		t.Fatalf("return path %q, want %q", rp, want)
	}
	bounceAddr := regexp.MustCompile(`msg="taking bounces" addr=(\S+)`).FindStringSubmatch(in.logs())
	if bounceAddr == nil {
		t.Fatal("the bounce listener's address is not in the log")
	}
	dsn := "From: MAILER-DAEMON@mx.example.net\r\nTo: " + rp + "\r\nSubject: Undelivered Mail\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/report; report-type=delivery-status; boundary=\"b1\"\r\n\r\n" +
		"--b1\r\nContent-Type: text/plain\r\n\r\nThe mail could not be delivered.\r\n" +
		"--b1\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.net\r\n\r\n" +
		"Final-Recipient: rfc822; later-gone@example.net\r\nAction: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp; 550 5.1.1 no such user\r\n\r\n--b1--\r\n"
	if err := smtp.SendMail(bounceAddr[1], nil, "", []string{rp}, []byte(dsn)); err != nil {
		t.Fatalf("sending the bounce: %v", err)
	}
	st = waitStatus(t, in, "D-bounce", "Processing")
	if fo, _ := st["failover"].(map[string]any); fo == nil || !strings.Contains(fmt.Sprint(fo["reason"]), "5.1.1") {
		t.Errorf("bounce failover: %v", st)
	}

	// every email and SMS was sent once (of several nodes, by one)
	sent := map[string]int{}
	for _, s := range mp.Messages(t) {
		m := mp.Message(t, s.ID)
		sent[m.To[0].Address+" "+m.Subject]++
	}
	for _, m := range sms.Messages(t) {
		sent["SMS to "+m.Dest]++
	}
	for what, n := range sent {
		if n != 1 {
			t.Errorf("%s: sent %d times", what, n)
		}
	}
}

func crlf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

func keys(m map[string]mailpittest.Message) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func between(s, a, b string) string {
	i := strings.Index(s, a)
	if i < 0 {
		return ""
	}
	s = s[i+len(a):]
	if j := strings.Index(s, b); j >= 0 {
		return s[:j]
	}
	return s
}

func pdftotext(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, "pdftotext"), "-q", path, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

var _ = json.Marshal
var _ = http.StatusOK
