package metadata_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/lodge-mail/lodge/upload/metadata"
)

var update = flag.Bool("update", false, "rewrite testdata/*.plan.json from the current results")

// golden is what a mailing shape is expected to become: whether it has
// letters, the problems (warnings) of validation and the plan.
type golden struct {
	HasLetters bool
	Problems   []string
	Plan       []metadata.PlannedLetter
}

// TestGolden parses every mailing shape of spec section 1 from JSON and
// from XML, checks both give the same pack, validates it against the
// session's files and compares the plan with testdata/NAME.plan.json.
func TestGolden(t *testing.T) {
	f := func(name string, files metadata.Files) {
		t.Helper()
		var packs [2]*metadata.Pack
		for i, ext := range []string{".json", ".xml"} {
			data, err := os.ReadFile(filepath.Join("testdata", name+ext))
			if err != nil {
				t.Fatal(err)
			}
			p, probs := metadata.Parse(name+ext, data, metadata.Limits{})
			if len(probs) > 0 || p == nil {
				t.Fatalf("%s%s: problems %v", name, ext, probs)
			}
			packs[i] = p
		}
		j, x := stripRaw(packs[0]), stripRaw(packs[1])
		if !reflect.DeepEqual(j, x) {
			t.Fatalf("%s: JSON and XML differ:\njson %s\nxml  %s", name, dump(j), dump(x))
		}
		plan, probs := packs[0].Plan(files)
		got := golden{HasLetters: packs[0].HasLetters(), Problems: strs(probs), Plan: plan}
		if v := metadata.Validate(packs[1], files); !reflect.DeepEqual(strs(v), got.Problems) {
			t.Errorf("%s: Validate %q, Plan's problems %q", name, strs(v), got.Problems)
		}
		out, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, '\n')
		file := filepath.Join("testdata", name+".plan.json")
		if *update {
			if err := os.WriteFile(file, out, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, want) {
			t.Errorf("%s: plan differs from %s (go test -update rewrites it):\n%s", name, file, out)
		}
	}
	meta := func(name string) metadata.FileInfo { return metadata.FileInfo{Name: name, Kind: "json"} }
	doc := func(name string, pages int) metadata.FileInfo { return metadata.FileInfo{Name: name, Pages: pages} }

	f("single_addressed", metadata.Files{doc("letter.pdf", 2), meta("single_addressed.json")})
	f("unaddressed_one", metadata.Files{meta("m.json"), doc("welcome.pdf", 3)})
	f("unaddressed_many", metadata.Files{doc("notice.pdf", 1)})
	f("statements", metadata.Files{doc("statements.pdf", 10)})
	f("colour_duplex", metadata.Files{doc("brochure.pdf", 4)})
	f("attachments_letterhead", metadata.Files{doc("offer-a.pdf", 2), doc("offer-b.pdf", 2), doc("terms.pdf", 3), doc("insert.pdf", 2)})
	f("files_first_is_letter", metadata.Files{doc("cover.pdf", 1), doc("report.pdf", 5), doc("appendix.pdf", 0)})
	f("references", metadata.Files{doc("invoices.pdf", 2)})
	f("department", metadata.Files{doc("renewal.ps", 0)})
	f("text_only", metadata.Files{meta("reminders.json")})
	f("password_link", metadata.Files{doc("statements.pdf", 6), meta("s.json")})
	f("auto", metadata.Files{doc("a.pdf", 1), doc("b.xps", 1)})
}

// stripRaw clears Postal.Raw, the one field that differs between the
// formats (it is the source text).
func stripRaw(p *metadata.Pack) *metadata.Pack {
	c := *p
	c.Letters = append([]metadata.Letter(nil), p.Letters...)
	for i := range c.Letters {
		if pp := c.Letters[i].Postal; pp != nil {
			cp := *pp
			cp.Raw = ""
			c.Letters[i].Postal = &cp
		}
	}
	return &c
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func strs(probs []metadata.Problem) []string {
	var s []string
	for _, p := range probs {
		s = append(s, p.String())
	}
	return s
}
