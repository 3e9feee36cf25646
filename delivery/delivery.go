// Package delivery sends the mailroom's electronic letters: it
// implements pipeline.Sender for email, SMS and fax over the transports
// of its subpackages (email: SMTP with go-mail; internal/smpp: SMPP 3.4;
// fax: email to an email-to-fax gateway), builds each message from the
// mailing's settings (template, email_from, email_subj, sms_from) and the
// letter (its custom_data, its PDF), and signs the links lodge serves
// (delivery/links: the letter's PDF, and the tracking image of an email).
//
// # What it promises
//
//   - A send carries the pipeline's dedup id for the letter: the
//     Message-ID of an email or fax (<id@Host>), the reference of an SMS
//     (internal/smpp derives the concatenation reference and sends it as
//     user_message_reference). A send resumed after a crash carries the
//     same id again: at least once, and a receiver can drop a repeat.
//   - A letter's PDF is made once (production.Producer.LetterPDF) and,
//     with custom_data.password, encrypted AES-256 (revision 6); the
//     password stays in the letter's record only until the send is done.
//   - Failures are classified: a permanent one (SMTP 5xx, an SMPP status
//     that names the address or the text) fails the letter over to post
//     or fails it; anything else is sent again later.
//
// It stores nothing itself.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"html"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/lodge-mail/lodge/delivery/bounce"
	"github.com/lodge-mail/lodge/delivery/email"
	"github.com/lodge-mail/lodge/delivery/links"
	"github.com/lodge-mail/lodge/delivery/template"
	"github.com/lodge-mail/lodge/internal/smpp"
	"github.com/lodge-mail/lodge/pipeline"
)

// Mailer sends email (email.Mailer).
type Mailer interface {
	Send(ctx context.Context, msg email.Message) error
}

// SMSClient submits short messages (smpp.Client).
type SMSClient interface {
	Submit(ctx context.Context, msg smpp.Message) ([]string, error)
}

// Config configures the senders. The zero value of each field means its
// documented default.
type Config struct {
	// Mailer sends email and fax; nil: neither channel.
	Mailer Mailer
	// SMS submits short messages; nil: no SMS channel.
	SMS SMSClient
	// FaxDomain is the email-to-fax gateway's domain: a fax to +61 2
	// 6123 4567 is an email to 61261234567@FaxDomain. Empty: no fax
	// channel.
	FaxDomain string
	// From is the email From of a mailing without email_from (required
	// for email and fax).
	From string
	// SMSFrom is the sender of an SMS whose mailing has no sms_from: the
	// service's number (empty: the SMSC's default).
	SMSFrom string
	// Host names this service in Message-IDs (default "lodge.invalid").
	Host string
	// BounceDomain, when set, makes every email's return path a VERP
	// address at it (bounce+<letter>@BounceDomain) that the bounce
	// listener takes back; empty: bounces go to the From address.
	BounceDomain string
	// LinkBase is the HTTPS address lodge is reached at from outside
	// ("https://mail.example.com.au"): links to letters' PDFs and the
	// tracking image of emails start with it. Empty: no links (a
	// template with {{link}} cannot be sent) and no tracking.
	LinkBase string
	// LinkKey signs links (links.LoadOrCreateKey); LinkTTL is how long a
	// link opens (default 30 days).
	LinkKey []byte
	LinkTTL time.Duration
	// PDF returns a letter's PDF for electronic delivery, encrypted with
	// password when it is not empty (production.Producer.LetterPDF).
	PDF func(ctx context.Context, m *pipeline.Mailing, l *pipeline.Letter, password string) (string, error)
	// DocumentError tells a PDF error that is the letter's fault (its
	// documents, its password: it cannot be sent) from the server's.
	DocumentError func(error) bool
	Now           func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Host == "" {
		c.Host = "lodge.invalid"
	}
	if c.LinkTTL <= 0 {
		c.LinkTTL = 30 * 24 * time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.LinkBase = strings.TrimRight(c.LinkBase, "/")
	return c
}

// Senders returns the mailroom's senders for the channels cfg can send
// by, keyed as pipeline.Config.Senders wants.
func Senders(cfg Config) map[string]pipeline.Sender {
	cfg = cfg.withDefaults()
	out := map[string]pipeline.Sender{}
	d := &deliverer{cfg: cfg}
	if cfg.Mailer != nil {
		out["email"] = emailSender{d}
		if cfg.FaxDomain != "" {
			out["fax"] = faxSender{d}
		}
	}
	if cfg.SMS != nil {
		out["sms"] = smsSender{d}
	}
	return out
}

type deliverer struct{ cfg Config }

// settings are the mailing attributes delivery reads.
type settings struct {
	Title     string `json:"title"`
	Template  string `json:"template"`
	EmailFrom string `json:"email_from"`
	EmailSubj string `json:"email_subj"`
	SMSFrom   string `json:"sms_from"`
}

func settingsOf(m *pipeline.Mailing) settings {
	var s settings
	if len(m.Settings) > 0 {
		json.Unmarshal(m.Settings, &s)
	}
	if s.Title == "" {
		s.Title = m.Title
	}
	return s
}

// permanent wraps an error that sending again cannot mend.
func permanent(format string, args ...any) error {
	return &pipeline.SendError{Permanent: true, Err: fmt.Errorf(format, args...)}
}

// classify makes a transport's error a pipeline.SendError.
func classify(err error, isPermanent func(error) bool) error {
	if err == nil {
		return nil
	}
	return &pipeline.SendError{Permanent: isPermanent(err), Err: err}
}

// link signs a link of kind ("doc": the letter's PDF, "open": the
// tracking image) for a letter.
func (d *deliverer) link(l *pipeline.Letter, kind string) string {
	if d.cfg.LinkBase == "" || len(d.cfg.LinkKey) == 0 {
		return ""
	}
	tok := links.Sign(d.cfg.LinkKey, l.EPID, l.Idx, kind, d.cfg.Now().Add(d.cfg.LinkTTL))
	if kind == "open" {
		return d.cfg.LinkBase + "/o/" + tok + ".gif"
	}
	return d.cfg.LinkBase + "/l/" + tok
}

// content is what a letter's message says: its body from the template
// (or a default), the link to its PDF when the template asks for one,
// and the PDF to attach otherwise.
type content struct {
	text, html string
	attach     string // path of the PDF to attach, or ""
}

func (d *deliverer) content(ctx context.Context, m *pipeline.Mailing, l *pipeline.Letter, s settings, wantAttach bool) (content, error) {
	var c content
	var tmpl *template.Template
	if s.Template != "" {
		t, err := template.Parse(s.Template)
		if err != nil {
			return c, permanent("the mailing's template: %v", err)
		}
		tmpl = t
	}
	hasDoc := len(l.Documents) > 0
	link := ""
	if tmpl != nil && tmpl.UsesLink() {
		if !hasDoc {
			return c, permanent("the template links to the letter's PDF, but the letter has no document")
		}
		if link = d.link(l, "doc"); link == "" {
			return c, permanent("the template links to the letter's PDF, but this server has no public address for links (lodge serve -public-url)")
		}
	}
	if hasDoc && d.cfg.PDF != nil && (link != "" || wantAttach) {
		path, err := d.cfg.PDF(ctx, m, l, l.CustomData["password"])
		if err != nil {
			if d.cfg.DocumentError != nil && d.cfg.DocumentError(err) {
				return c, permanent("the letter's PDF: %v", err)
			}
			return c, err
		}
		if link == "" {
			c.attach = path
		}
	} else if hasDoc && wantAttach {
		return c, errors.New("no producer of letters' PDFs is configured")
	}
	switch {
	case tmpl != nil:
		var err error
		if c.text, c.html, err = tmpl.Body(l.CustomData, link); err != nil {
			return c, permanent("the template: %v", err)
		}
	case hasDoc:
		c.text = fmt.Sprintf("Please find your letter %s attached.", titleOf(s, l))
	default:
		return c, permanent("the letter has neither a document nor a template to send")
	}
	return c, nil
}

func titleOf(s settings, l *pipeline.Letter) string {
	switch {
	case s.Title != "" && l.Reference != "":
		return fmt.Sprintf("%q (%s)", s.Title, l.Reference)
	case s.Title != "":
		return fmt.Sprintf("%q", s.Title)
	case l.Reference != "":
		return l.Reference
	}
	return ""
}

// withPixel adds the tracking image to an email's HTML part (making one
// from the text when there is none).
func withPixel(text, htm, pixel string) string {
	if pixel == "" {
		return htm
	}
	if htm == "" {
		htm = "<!DOCTYPE html><html><body><p>" + strings.ReplaceAll(html.EscapeString(text), "\n", "<br>\n") + "</p></body></html>"
	}
	img := `<img src="` + html.EscapeString(pixel) + `" width="1" height="1" alt="" style="display:block;border:0">`
	if i := strings.LastIndex(strings.ToLower(htm), "</body>"); i >= 0 {
		return htm[:i] + img + htm[i:]
	}
	return htm + img
}

// bounceToken names a letter in a VERP return path.
func bounceToken(l *pipeline.Letter) string { return fmt.Sprintf("%s.%d", l.EPID, l.Idx) }

// ParseBounceToken is the letter a VERP token names.
func ParseBounceToken(tok string) (epid string, idx int, err error) {
	e, i, ok := strings.Cut(tok, ".")
	e = strings.ToUpper(e) // a mail system may have folded the case
	if !ok || e == "" {
		return "", 0, fmt.Errorf("bounce token %q names no letter", tok)
	}
	if _, err := fmt.Sscanf(i, "%d", &idx); err != nil || idx < 0 || fmt.Sprint(idx) != i {
		return "", 0, fmt.Errorf("bounce token %q names no letter", tok)
	}
	return e, idx, nil
}

func (d *deliverer) email(ctx context.Context, m *pipeline.Mailing, l *pipeline.Letter, id, to, subject string, c content) error {
	s := settingsOf(m)
	from := s.EmailFrom
	if from == "" {
		from = d.cfg.From
	}
	if from == "" {
		return errors.New("no email From address is configured (lodge serve -email-from)")
	}
	msg := email.Message{MessageID: id + "@" + d.cfg.Host, From: from, To: to, Subject: subject, Text: c.text,
		HTML: withPixel(c.text, c.html, d.link(l, "open"))}
	if d.cfg.BounceDomain != "" {
		rp, err := bounce.VERP(bounceToken(l), d.cfg.BounceDomain)
		if err != nil {
			return err
		}
		msg.ReturnPath = rp
	}
	if c.attach != "" {
		msg.Attachments = []email.Attachment{{Name: pdfName(l), ContentType: "application/pdf", Path: c.attach}}
	}
	return classify(d.cfg.Mailer.Send(ctx, msg), email.IsPermanent)
}

func pdfName(l *pipeline.Letter) string {
	name := "letter"
	if l.Reference != "" {
		name = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
				return r
			}
			return '_'
		}, l.Reference)
	}
	return name + ".pdf"
}

type emailSender struct{ *deliverer }

func (e emailSender) Send(ctx context.Context, m *pipeline.Mailing, l *pipeline.Letter, id string) (string, []string, error) {
	s := settingsOf(m)
	c, err := e.content(ctx, m, l, s, true)
	if err != nil {
		return "", nil, err
	}
	subject := s.EmailSubj
	if subject == "" {
		subject = strings.TrimSpace("Letter " + titleOf(s, l))
	}
	if err := e.email(ctx, m, l, id, l.Email, subject, c); err != nil {
		return "", nil, err
	}
	return "Message-ID <" + id + "@" + e.cfg.Host + ">", nil, nil
}

type faxSender struct{ *deliverer }

func (f faxSender) Send(ctx context.Context, m *pipeline.Mailing, l *pipeline.Letter, id string) (string, []string, error) {
	to, err := email.FaxTo(l.Fax, f.cfg.FaxDomain)
	if err != nil {
		return "", nil, permanent("fax number: %v", err)
	}
	if len(l.Documents) == 0 {
		return "", nil, permanent("a fax needs a document")
	}
	s := settingsOf(m)
	s.Template = "" // a fax is the document
	c, err := f.content(ctx, m, l, s, true)
	if err != nil {
		return "", nil, err
	}
	subject := s.EmailSubj
	if subject == "" {
		subject = strings.TrimSpace("Fax " + titleOf(s, l))
	}
	if err := f.email(ctx, m, l, id, to, subject, c); err != nil {
		return "", nil, err
	}
	return "to " + to + ", Message-ID <" + id + "@" + f.cfg.Host + ">", nil, nil
}

type smsSender struct{ *deliverer }

func (t smsSender) Send(ctx context.Context, m *pipeline.Mailing, l *pipeline.Letter, id string) (string, []string, error) {
	s := settingsOf(m)
	c, err := t.content(ctx, m, l, s, false)
	if err != nil {
		return "", nil, err
	}
	if c.attach != "" || s.Template == "" && len(l.Documents) > 0 {
		// no template: the SMS links to the letter's PDF
		link := t.link(l, "doc")
		if link == "" {
			return "", nil, permanent("an SMS carries a document only as a link, and this server has no public address for links (lodge serve -public-url)")
		}
		if t.cfg.PDF != nil {
			if _, err := t.cfg.PDF(ctx, m, l, l.CustomData["password"]); err != nil {
				return "", nil, err
			}
		}
		c.text = strings.TrimSpace(fmt.Sprintf("Your letter %s: %s", titleOf(s, l), link))
	}
	if strings.Contains(l.SMS, "@") {
		// an SMS to an email address (spec 2.4) goes as a text email
		if t.cfg.Mailer == nil {
			return "", nil, permanent("an SMS to an email address needs email, which this server does not send")
		}
		c.html = ""
		if err := t.email(ctx, m, l, id, l.SMS, "Message "+titleOf(s, l), content{text: c.text}); err != nil {
			return "", nil, err
		}
		return "as email, Message-ID <" + id + "@" + t.cfg.Host + ">", nil, nil
	}
	from := s.SMSFrom
	if from == "" {
		from = t.cfg.SMSFrom
	}
	ids, err := t.cfg.SMS.Submit(ctx, smpp.Message{From: from, To: l.SMS, Text: c.text, Ref: id, Receipt: true})
	if err != nil {
		return "", nil, classify(err, smpp.IsPermanent)
	}
	return fmt.Sprintf("%d part(s), message ids %s", len(ids), strings.Join(ids, " ")), ids, nil
}

// Confirmer returns the sender of confirmation emails (spec 2.2
// confirmation_email), from cfg.From through cfg.Mailer; nil without a
// mailer.
func Confirmer(cfg Config) pipeline.Confirmer {
	if cfg.Mailer == nil {
		return nil
	}
	return confirmer{&deliverer{cfg: cfg.withDefaults()}}
}

type confirmer struct{ *deliverer }

func (c confirmer) Confirm(ctx context.Context, m *pipeline.Mailing, kind, to, id string, counts, holds map[string]int) (string, error) {
	if c.cfg.From == "" {
		return "", permanent("no email From address is configured (lodge serve -email-from)")
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	name := m.EPID
	if m.Title != "" {
		name = fmt.Sprintf("%q (%s)", m.Title, m.EPID)
	}
	var b strings.Builder
	subject := "Mailing " + name + " accepted"
	if kind == "done" {
		subject = "Mailing " + name + " produced and sent"
		fmt.Fprintf(&b, "Your mailing %s has been produced and sent as far as it can go.\n\n", name)
	} else {
		fmt.Fprintf(&b, "Your mailing %s was accepted.\n\n", name)
	}
	fmt.Fprintf(&b, "Letters: %d\n", total)
	for _, st := range pipeline.Statuses {
		if n := counts[st]; n > 0 {
			fmt.Fprintf(&b, "  %-10s %d\n", st, n)
		}
	}
	if len(holds) > 0 {
		b.WriteString("\nHeld, and why:\n")
		reasons := make([]string, 0, len(holds))
		for r := range holds {
			reasons = append(reasons, r)
		}
		slices.Sort(reasons)
		for _, r := range reasons {
			fmt.Fprintf(&b, "  %d: %s\n", holds[r], r)
		}
	}
	msg := email.Message{MessageID: id + "@" + c.cfg.Host, From: c.cfg.From, To: to, Subject: subject, Text: b.String()}
	if err := c.cfg.Mailer.Send(ctx, msg); err != nil {
		return "", classify(err, email.IsPermanent)
	}
	return "Message-ID <" + msg.MessageID + ">", nil
}
