package main

import (
	"context"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/internal/testref"
)

// checkFixture imports the G-NAF fixture into a new data directory and
// writes an input of premise-level G-NAF addresses and the realistic mix:
// first 30,000 rows each seen once (a recipient line of its own: the
// verdict cache steps aside), then 40,000 where many repeat (it is used
// again). It returns the reference flags and the input's path.
func checkFixture(t *testing.T) (flags []string, input string) {
	t.Helper()
	root, err := testref.RepoRoot()
	mustNil(t, err)
	data, err := testref.DataDir()
	mustNil(t, err)
	dir := t.TempDir()
	flags = []string{"-data-dir", filepath.Join(dir, "data"), "-reference", data, "-quiet"}
	mustNil(t, runImport(context.Background(), append(append([]string{"gnaf"}, flags...), filepath.Join(root, "testdata", "gnaf", "G-NAF"))))

	f, err := os.Open(filepath.Join(root, "testdata", "gnaf", "expected.csv"))
	mustNil(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	mustNil(t, err)
	var addrs []string
	for _, r := range rows[1:] {
		addrs = append(addrs, "JO CITIZEN\n"+strings.ReplaceAll(r[1], ", ", "\n"))
	}
	mix, err := testref.Mix(3000, 1)
	mustNil(t, err)
	for _, m := range mix {
		addrs = append(addrs, strings.Join(m, "\n"))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	input = filepath.Join(dir, "in.csv")
	in, err := os.Create(input)
	mustNil(t, err)
	w := csv.NewWriter(in)
	w.Write([]string{"id", "address"})
	for i := range 30_000 {
		a := addrs[rng.IntN(len(addrs))]
		// its first line replaced by a recipient of its own
		_, rest, _ := strings.Cut(a, "\n")
		a = "JO CITIZEN " + strconv.Itoa(i) + "\n" + rest
		w.Write([]string{"d", a})
	}
	// the first 2,000 addresses repeat, the others come once or twice
	for i := range 40_000 {
		a := addrs[rng.IntN(len(addrs))]
		if rng.IntN(2) == 0 {
			a = addrs[rng.IntN(min(2000, len(addrs)))]
		}
		w.Write([]string{string(rune('a'+i%26)) + "x", a})
	}
	w.Flush()
	mustNil(t, w.Error())
	mustNil(t, in.Close())
	return flags, input
}

// TestCheckSameOutput: lodge check writes the same bytes whatever the
// number of workers and whether the verdict cache is on, off or too small
// for the input.
func TestCheckSameOutput(t *testing.T) {
	flags, input := checkFixture(t)
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		out := filepath.Join(dir, name+".csv")
		args = append(append(append([]string(nil), flags...), args...), "-o", out, input)
		mustNil(t, runCheck(context.Background(), args, strings.NewReader(""), os.Stdout))
		b, err := os.ReadFile(out)
		mustNil(t, err)
		return string(b)
	}
	want := run("w1-nocache", "-workers", "1", "-cache", "-1")
	for _, s := range []string{",matched,AUS,", ",invalid,", ",international,"} {
		if !strings.Contains(want, s) {
			t.Errorf("the input gave no %q verdict: a weak test", s)
		}
	}
	if rows, err := csv.NewReader(strings.NewReader(want)).ReadAll(); err != nil || len(rows) != 70_001 {
		t.Fatalf("%d rows out (%v), want 70,001", len(rows), err)
	}
	f := func(name string, args ...string) {
		t.Helper()
		if got := run(name, args...); got != want {
			t.Errorf("%s (%q): the output differs from one worker without the cache", name, args)
		}
	}
	f("w1-cache", "-workers", "1")
	f("w4-cache", "-workers", "4")
	f("w4-nocache", "-workers", "4", "-cache", "-1")
	f("w3-smallcache", "-workers", "3", "-cache", "50")
	f("default")
}

// TestCheckDevNull: output to a device is not synced (fsync on
// /dev/null fails with EINVAL: "sync /dev/null: invalid argument").
func TestCheckDevNull(t *testing.T) {
	flags, input := checkFixture(t)
	args := append(append([]string(nil), flags...), "-o", os.DevNull, input)
	if err := runCheck(context.Background(), args, strings.NewReader(""), os.Stdout); err != nil {
		t.Fatalf("lodge check -o %s: %v", os.DevNull, err)
	}
}
