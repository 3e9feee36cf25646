package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestUploadMetricsAndLog: after an upload through the real binary,
// /metrics shows the upload counters (sessions, files, bytes, mailings,
// letters by status, rejections by reason) and the log tells the accepted
// mailing at INFO.
//
// One node only: the counters are each process's own (a node's /metrics
// counts what that node did), so the exact values hold for one node.
func TestUploadMetricsAndLog(t *testing.T) {
	in := start(t)
	auth := []string{"-H", "Authorization: Bearer " + in.key}
	code, epid := in.curl(append(auth, in.url+"/publicinterface/get_session_id.text?account=DEM00001")...)
	epid = strings.TrimSpace(epid)
	if code != 200 || len(epid) != 28 {
		t.Fatalf("get_session_id: %d %q", code, epid)
	}
	dir := t.TempDir()
	pdf := pdfPages(2)
	meta := []byte(`{"letters":[{"postal":["Joe Blogs","10 Jones St","Melbourne VIC 3000"],"reference":"M-1"}]}`)
	for name, b := range map[string][]byte{"letter.pdf": pdf, "m.json": meta} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, body := in.curl(append(auth, "-T", p, in.url+"/direct_upload/"+epid+"/"+name)...); code != 201 {
			t.Fatalf("PUT %s: %d %s", name, code, body)
		}
	}
	if code, body := in.curl(append(auth, in.url+"/publicinterface/end_session.json?session_id="+epid)...); code != 200 {
		t.Fatalf("end_session: %d %s", code, body)
	}
	if code, _ := in.curl(append(auth, "-T", filepath.Join(dir, "letter.pdf"), in.url+"/direct_upload/ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ/a.pdf")...); code != 404 {
		t.Errorf("PUT to no session: %d", code)
	}
	code, body := in.curl(in.url + "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		"lodge_upload_sessions_opened_total 1",
		"lodge_upload_sessions_ended_total 1",
		"lodge_upload_files_received_total 2",
		fmt.Sprintf("lodge_upload_bytes_received_total %d", len(pdf)+len(meta)),
		`lodge_upload_mailings_total{status="received"} 1`,
		`lodge_upload_letters_total{status="Received"} 1`,
		`lodge_upload_rejections_total{reason="no_session"} 1`,
		`lodge_upload_rejections_total{reason="too_large"} 0`,
	} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `$`).MatchString(body) {
			t.Errorf("/metrics has no line %q", want)
		}
	}
	if !regexp.MustCompile(`level=INFO msg="mailing accepted" epid=` + epid + ` account=DEM00001 user=\S+ status=received letters=1 held=0 files=2 bytes=` + fmt.Sprint(len(pdf)+len(meta))).MatchString(in.logs()) {
		t.Errorf("no INFO line for the accepted mailing in the log:\n%s", in.logs())
	}
}
