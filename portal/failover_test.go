package portal_test

import (
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/pipeline"
)

// TestFailoversOwnAccount: the failovers page lists the account's own
// failed-over letters and never another account's, whose letter pages
// stay 404.
func TestFailoversOwnAccount(t *testing.T) {
	f := newFixture(t)
	failover := func(epid string, idx int, reason string) {
		t.Helper()
		err := f.mr.Store().Update([]string{epid}, func(tx pipeline.Tx) error {
			l, err := tx.Letter(epid, idx)
			if err != nil {
				return err
			}
			l.Failover = &pipeline.FailoverInfo{From: "email", Reason: reason, Time: f.clock.Now()}
			l.SetStatus(f.clock.Now(), pipeline.Failover, reason)
			tx.PutLetter(l)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	failover("FIX1", 0, "jo's mailbox is full")
	failover("EVE1", 0, "eve's secret bounce")
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	b.get("/portal/failovers").expect(200, "jo&#39;s mailbox is full", `href="/portal/mailings/FIX1/letters/0"`)
	for _, leak := range []string{"EVE1", "eve", "secret"} {
		if strings.Contains(b.body, leak) {
			t.Fatalf("jo's failovers show %q: %s", leak, b.body)
		}
	}
	b.get("/portal/mailings/EVE1/letters/0").expect(404, "no such page, mailing or letter")

	e := f.browser()
	e.signIn("eve", evePass).expect(200)
	e.get("/portal/failovers").expect(200, "eve&#39;s secret bounce")
	if strings.Contains(e.body, "FIX1") || strings.Contains(e.body, "mailbox is full") {
		t.Fatalf("eve's failovers show jo's: %s", e.body)
	}
}

// TestTemplateTextEscaped: a mailing's settings, template text included,
// are shown escaped on its page.
func TestTemplateTextEscaped(t *testing.T) {
	f := newFixture(t)
	settings := `{"template":"<script>alert('template')</script>","email_subject":"<img src=x onerror=alert(1)>"}`
	m := pipeline.Mailing{EPID: "TPL1", Account: "ABC00001", Letters: 1, Settings: []byte(settings)}
	ls := []pipeline.Letter{{Idx: 0, Channels: []string{"email"}, Email: "jo@example.com"}}
	if err := f.mr.Submit(m, ls); err != nil {
		t.Fatal(err)
	}
	b := f.browser()
	b.signIn("jo", joPass).expect(200)
	b.get("/portal/mailings/TPL1").expect(200, "&lt;script&gt;alert(&#39;template&#39;)&lt;/script&gt;", "&lt;img src=x onerror=alert(1)&gt;")
	for _, bad := range []string{"<script>alert", "<img src=x"} {
		if strings.Contains(b.body, bad) {
			t.Fatalf("the mailing page shows %q unescaped", bad)
		}
	}
}
