package index_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lodge-mail/lodge/engine"
	. "github.com/lodge-mail/lodge/index"
	"github.com/lodge-mail/lodge/internal/testref"
	"github.com/lodge-mail/lodge/progress"
)

var quiet = BuildOptions{Progress: progress.Options{Out: io.Discard}}

func sharedSources(t *testing.T) Sources {
	t.Helper()
	dir, err := testref.DataDir()
	if err != nil {
		t.Fatal(err)
	}
	src, err := FindSources(dir)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestBuildOpenIdempotent(t *testing.T) {
	src := sharedSources(t)
	for _, k := range []string{SrcGeoNamesAU, SrcGeoNamesNZ, SrcGNAFLocalities, SrcGNAFPostcodes, SrcGNAFCodes, SrcISO3166, SrcI18nCountries} {
		if src.Files[k] == "" {
			t.Errorf("FindSources missed %s", k)
		}
	}
	dataDir := t.TempDir()
	res, err := Build(context.Background(), src, dataDir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if res.UpToDate || res.Meta.Counts.Localities < 15318 || res.Meta.Counts.Countries < 249 || res.Meta.Counts.NZPostcodes < 1000 {
		t.Fatalf("first build: %+v", res)
	}
	ix, err := Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	f := ix.Ref.Facts()
	if f.Localities != res.Meta.Counts.Localities {
		t.Errorf("loaded %d localities, built %d", f.Localities, res.Meta.Counts.Localities)
	}
	attr := strings.Join(ix.Meta.Attributions(), "\n")
	for _, want := range []string{"GeoNames", "G-NAF © Geoscape Australia"} {
		if !strings.Contains(attr, want) {
			t.Errorf("attributions lack %q: %s", want, attr)
		}
	}
	// the loaded reference judges like the built one
	e, err := engine.New(ix.Ref, engine.Config{CacheEntries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Check([]string{"Jo", "1 Smith St", "Melborne VIC 3000"}, true); len(r.Detail.Suggestion) == 0 {
		t.Errorf("no suggestion through the bleve corrector: %+v", r.Detail)
	}
	e.Close()
	ix.Close()

	again, err := Build(context.Background(), src, dataDir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if !again.UpToDate || again.Dir != res.Dir {
		t.Errorf("second build not up to date: %+v", again)
	}
	forced, err := Build(context.Background(), src, dataDir, BuildOptions{Force: true, Progress: quiet.Progress})
	if err != nil {
		t.Fatal(err)
	}
	if forced.UpToDate || forced.Dir == res.Dir {
		t.Errorf("forced build reused %s", forced.Dir)
	}
	if _, err := os.Stat(res.Dir); !os.IsNotExist(err) {
		t.Errorf("old index %s left behind (%v)", res.Dir, err)
	}
	if cur, _ := os.Readlink(filepath.Join(dataDir, "current")); filepath.Join(dataDir, cur) != forced.Dir {
		t.Errorf("current is %s, want %s", cur, forced.Dir)
	}
}

// TestInterruptedBuild: a build that fails or is cancelled leaves the
// previous index current and openable, and no half-built directory that
// Open would use.
func TestInterruptedBuild(t *testing.T) {
	src := sharedSources(t)
	dataDir := t.TempDir()
	first, err := Build(context.Background(), src, dataDir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Build(ctx, src, dataDir, BuildOptions{Force: true, Progress: quiet.Progress}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v", err)
	}
	// a source that breaks half way through
	broken := Sources{Dir: src.Dir, Files: map[string]string{}}
	for k, v := range src.Files {
		broken.Files[k] = v
	}
	bad := filepath.Join(t.TempDir(), "AU.txt")
	good, _ := os.ReadFile(src.Files[SrcGeoNamesAU])
	os.WriteFile(bad, append(good[:len(good)/2:len(good)/2], []byte("\nAU\t12\tBroken\n")...), 0o644)
	broken.Files[SrcGeoNamesAU] = bad
	if _, err := Build(context.Background(), broken, dataDir, quiet); err == nil || !strings.Contains(err.Error(), "columns") {
		t.Fatalf("broken source: %v", err)
	}
	// a crash mid-build leaves a .tmp directory behind
	os.MkdirAll(filepath.Join(dataDir, "index-29990101T000000Z.tmp", "pebble"), 0o755)
	ix, err := Open(dataDir)
	if err != nil {
		t.Fatalf("previous index unusable: %v", err)
	}
	if ix.Dir != first.Dir {
		t.Errorf("current moved to %s", ix.Dir)
	}
	ix.Close()
	if _, err := Build(context.Background(), src, dataDir, BuildOptions{Force: true, Progress: quiet.Progress}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dataDir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("stale %s not cleaned up", e.Name())
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dataDir := t.TempDir()
	if _, err := Open(dataDir); !errors.Is(err, ErrNoIndex) {
		t.Errorf("empty dir: %v", err)
	}
	os.MkdirAll(filepath.Join(dataDir, "index-x", "pebble"), 0o755)
	os.Symlink("index-x", filepath.Join(dataDir, "current"))
	if _, err := Open(dataDir); err == nil {
		t.Errorf("index without records opened")
	}
}

// geonamesZip packs a GeoNames text file the way download.geonames.org does.
func geonamesZip(t *testing.T, name string, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("readme.txt")
	w.Write([]byte("GeoNames postal codes\n"))
	w, _ = zw.Create(name)
	w.Write(body)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDownloadDefaultReference: with no reference folder, AU.zip and
// NZ.zip are downloaded from the GeoNames base URL, verified and imported.
func TestDownloadDefaultReference(t *testing.T) {
	if _, err := os.Stat(filepath.Join(SystemISOCodes, "iso_3166-1.json")); err != nil {
		t.Fatalf("country names need Debian iso-codes (scripts/test installs it): %v", err)
	}
	src := sharedSources(t)
	au, _ := os.ReadFile(src.Files[SrcGeoNamesAU])
	nz, _ := os.ReadFile(src.Files[SrcGeoNamesNZ])
	files := map[string][]byte{"/export/zip/AU.zip": geonamesZip(t, "AU.txt", au), "/export/zip/NZ.zip": geonamesZip(t, "NZ.txt", nz)}
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	defer srv.Close()
	dataDir := t.TempDir()
	ro := ResolveOptions{Candidates: []string{}, DownloadDir: filepath.Join(dataDir, "reference"), GeoNamesURL: srv.URL + "/export/zip/"}
	ix, from, err := Ensure(context.Background(), dataDir, ro, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if !strings.Contains(from, srv.URL) || requests != 2 {
		t.Errorf("from %q after %d requests", from, requests)
	}
	if n := ix.Ref.Facts().Localities; n < 15000 {
		t.Errorf("%d localities from GeoNames alone", n)
	}
	e, _ := engine.New(ix.Ref, engine.Config{CacheEntries: -1})
	defer e.Close()
	if r := e.Check([]string{"Jo", "1 Smith St", "Melbourne VIC 3000"}, false); r.Status != engine.StatusMatched {
		t.Errorf("downloaded reference: %s", r.Status)
	}
	// the download is kept: a second resolve fetches nothing
	if _, _, err := ResolveSources(context.Background(), ro); err != nil || requests != 2 {
		t.Errorf("second resolve: %v after %d requests", err, requests)
	}
}

func TestDownloadRejectsBadFiles(t *testing.T) {
	f := func(name string, body []byte, status int, want string) {
		t.Helper()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			w.Write(body)
		}))
		defer srv.Close()
		dir := t.TempDir()
		_, _, err := ResolveSources(context.Background(), ResolveOptions{Candidates: []string{}, DownloadDir: dir, GeoNamesURL: srv.URL})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to mention %q", name, err, want)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 0 {
			t.Errorf("%s: left %d files behind", name, len(ents))
		}
	}
	f("not found", nil, 404, "404")
	f("not a zip", []byte("<html>maintenance</html>"), 200, "zip")
	f("empty zip", geonamesZip(t, "other.csv", []byte("x")), 200, "no GeoNames")
	f("truncated rows", geonamesZip(t, "AU.txt", []byte("AU\t2000\tSydney\tNew South Wales\tNSW\t\t\t\t\t-33.8\t151.2\t4\n")), 200, "rows")
	f("wrong country", geonamesZip(t, "AU.txt", []byte("NZ\t0600\tX\tAuckland\tE7\t\t\t\t\t-36\t174\t4\n")), 200, "country")
}

// TestTranslationsFromTheSystem: iso-codes' translations of the country
// names are read from the system when an index is built (they are not
// compiled in), kept in the index, and name countries once it is opened;
// without them the names of the compiled-in table still do.
func TestTranslationsFromTheSystem(t *testing.T) {
	check := func(ix *Index, last, want string) {
		t.Helper()
		e, err := engine.New(ix.Ref, engine.Config{CacheEntries: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		r := e.Check([]string{"Jo", "10 Main St", "Berlin", last}, false)
		if got := r.Status.String() + " " + r.Nation; got != want {
			t.Errorf("%q: %s, want %s", last, got, want)
		}
	}
	src := sharedSources(t)
	if len(src.Translations) < 100 {
		t.Fatalf("FindSources found %d of iso-codes' translations (%s/*/LC_MESSAGES/iso_3166-1.mo): scripts/test installs iso-codes", len(src.Translations), SystemLocale)
	}
	dataDir := t.TempDir()
	res, err := Build(context.Background(), src, dataDir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	var info *SourceInfo
	for i := range res.Meta.Sources {
		if res.Meta.Sources[i].Name == SrcISO3166Translations {
			info = &res.Meta.Sources[i]
		}
	}
	if info == nil || info.Rows < 10000 || info.Licence != "LGPL-2.1-or-later" || info.SHA256 == "" {
		t.Fatalf("translations' source info %+v", info)
	}
	ix, err := Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	check(ix, "Germanio", "international DEU")                      // Esperanto: iso-codes only
	check(ix, "Federacia Respubliko Germanio", "international DEU") // its official name
	check(ix, "Deutschland", "international DEU")                   // i18n-iso-countries too
	ix.Close()

	// a change of the translations makes the index out of date
	src.Translations = src.Translations[:len(src.Translations)-1]
	again, err := Build(context.Background(), src, dataDir, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if again.UpToDate {
		t.Error("an index built with other translations is up to date")
	}

	// none found: the compiled-in names only
	defer func(old string) { SystemLocale = old }(SystemLocale)
	SystemLocale = t.TempDir()
	src = sharedSources(t)
	if len(src.Translations) != 0 {
		t.Fatalf("translations found in an empty folder: %q", src.Translations)
	}
	if _, err := Build(context.Background(), src, dataDir, quiet); err != nil {
		t.Fatal(err)
	}
	if ix, err = Open(dataDir); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	check(ix, "Germanio", "invalid AUS")
	check(ix, "Deutschland", "international DEU")
}
