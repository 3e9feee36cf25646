package safetar

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// entry is one tar entry of a test archive.
type entry struct {
	name string
	typ  byte // tar.Type*
	body []byte
	link string
}

// mkTar writes entries as a tar; archive/tar writes what it is given,
// hostile names and types included.
func mkTar(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Size: int64(len(e.body)), Mode: 0o644, ModTime: time.Unix(1e9, 0)}
		if e.typ != tar.TypeReg {
			hdr.Size = 0
		}
		if e.typ == tar.TypeXGlobalHeader {
			hdr = &tar.Header{Typeflag: e.typ, PAXRecords: map[string]string{"comment": "x"}}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("%q: %v", e.name, err)
		}
		if _, err := tw.Write(e.body); err != nil {
			t.Fatalf("%q: %v", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tarEntries reads a tar back into entries.
func tarEntries(t testing.TB, b []byte) []entry {
	t.Helper()
	var out []entry
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{name: hdr.Name, typ: hdr.Typeflag, body: body, link: hdr.Linkname})
	}
}

// extractInto extracts b into a fresh directory inside its own parent,
// and checks that nothing appeared beside it and that only directories
// and regular files are inside.
func extractInto(t testing.TB, b []byte, lim Limits) (string, error) {
	t.Helper()
	parent := t.TempDir()
	dir := filepath.Join(parent, "x")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err := Extract(bytes.NewReader(b), dir, lim)
	ents, _ := os.ReadDir(parent)
	if len(ents) != 1 || ents[0].Name() != "x" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("extract wrote beside its directory: %v", names)
	}
	var files, bytesIn int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case d.IsDir():
		case d.Type().IsRegular():
			info, _ := d.Info()
			files++
			bytesIn += info.Size()
		default:
			t.Fatalf("extract made %s, a %s", p, d.Type())
		}
		return nil
	})
	l := lim.WithDefaults()
	if bytesIn > l.MaxBytes || files > int64(l.MaxEntries) {
		t.Fatalf("extract wrote %d bytes in %d files, past %+v", bytesIn, files, l)
	}
	return dir, err
}

// TestExtractHostile: every entry that is not a plain file or directory
// with a plain relative name, or that goes past a limit, is refused with
// an error naming it, and nothing is written outside the directory.
func TestExtractHostile(t *testing.T) {
	small := Limits{MaxBytes: 100, MaxFileBytes: 60, MaxEntries: 4}
	f := func(name, want string, lim Limits, b []byte) {
		t.Helper()
		_, err := extractInto(t, b, lim)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, want)
		}
	}
	file := func(name string) entry { return entry{name: name, typ: tar.TypeReg, body: []byte("data")} }
	one := func(e entry) []byte { return mkTar(t, e) }

	f("absolute path", `entry 1 ("/etc/passwd"): absolute path`, small, one(file("/etc/passwd")))
	f("parent", `entry 1 ("../x"): path element ".."`, small, one(file("../x")))
	f("parent inside", `path element ".."`, small, one(file("a/../../x")))
	f("dot element", `path element "."`, small, one(file("a/./b")))
	f("leading dot", `path element "."`, small, one(file("./a")))
	f("empty element", "empty path element", small, one(file("a//b")))
	f("the directory itself", `path element "."`, small, one(entry{name: "./", typ: tar.TypeDir}))
	f("backslash", `byte 1 is '\\'`, small, one(file(`a\..\..\x`)))
	f("space", `byte 1 is ' '`, small, one(file("a b")))
	f("control character", `byte 1 is '\n'`, small, one(file("a\nb")))
	f("long element", "path element of 256 bytes", small, one(file(strings.Repeat("a", 256))))
	f("long name", "name of 1025 bytes", small, one(file(strings.Repeat("abcdefg/", 128)+"a")))
	f("symlink", `entry 1 ("l"): type '2'`, small, one(entry{name: "l", typ: tar.TypeSymlink, link: "/etc"}))
	f("symlink then a file through it", "type '2'", small, mkTar(t, entry{name: "l", typ: tar.TypeSymlink, link: ".."}, file("l/x")))
	f("hard link", "type '1'", small, one(entry{name: "h", typ: tar.TypeLink, link: "/etc/passwd"}))
	f("character device", "type '3'", small, one(entry{name: "c", typ: tar.TypeChar}))
	f("block device", "type '4'", small, one(entry{name: "b", typ: tar.TypeBlock}))
	f("fifo", "type '6'", small, one(entry{name: "p", typ: tar.TypeFifo}))
	f("pax global header", "type 'g'", small, mkTar(t, entry{name: "g", typ: tar.TypeXGlobalHeader}, file("a")))
	f("file twice", `entry 2 ("a"): named twice`, small, mkTar(t, file("a"), file("a")))
	f("directory twice", "named twice", small, mkTar(t, entry{name: "d/", typ: tar.TypeDir}, entry{name: "d/", typ: tar.TypeDir}))
	f("directory then a file of its name", "named twice", small, mkTar(t, entry{name: "d/", typ: tar.TypeDir}, file("d")))
	f("file then a file under it", `entry 2 ("a/b")`, small, mkTar(t, file("a"), file("a/b")))
	f("file over MaxFileBytes", "61 bytes, more than 60 in one file", small, one(entry{name: "a", typ: tar.TypeReg, body: make([]byte, 61)}))
	f("files over MaxBytes", "entry 2 (\"b\"): more than 100 bytes in all", small,
		mkTar(t, entry{name: "a", typ: tar.TypeReg, body: make([]byte, 60)}, entry{name: "b", typ: tar.TypeReg, body: make([]byte, 41)}))
	f("too many entries", "entry 5: more than 4 entries", small, mkTar(t, file("a"), file("b"), file("c"), file("d"), file("e")))
	f("size claimed past the data", "entry 1", small, one(entry{name: "a", typ: tar.TypeReg, body: make([]byte, 50)})[:512+10])
	f("cut in a header", "entry 1", small, one(file("a"))[:100])
	f("no entries", "no entries", small, make([]byte, 1024))
	f("not a tar", "entry 1", small, []byte(strings.Repeat("not a tar at all\n", 100)))
	f("empty", "no entries", small, nil)
}

// TestExtractFiles: the files and directories of a plain tar come out as
// they went in (parents made for files listed before their directory).
func TestExtractFiles(t *testing.T) {
	b := mkTar(t,
		entry{name: "pebble/", typ: tar.TypeDir},
		entry{name: "pebble/000001.sst", typ: tar.TypeReg, body: []byte("sst")},
		entry{name: "bleve/store/root.bolt", typ: tar.TypeReg, body: []byte("bolt")},
		entry{name: "bleve/store/", typ: tar.TypeDir},
		entry{name: "empty", typ: tar.TypeReg},
	)
	dir, err := extractInto(t, b, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"pebble/000001.sst": "sst", "bleve/store/root.bolt": "bolt", "empty": ""} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
}

// TestWriteRoundTrip: Write and Extract give back the directory;
// a symlink in it is refused.
func TestWriteRoundTrip(t *testing.T) {
	src := t.TempDir()
	for name, body := range map[string]string{"pebble/MANIFEST-000001": "m", "pebble/000002.sst": "sst", "bleve/index_meta.json": "{}", "bleve/store/a.zap": "zap"} {
		p := filepath.Join(src, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := Write(context.Background(), &b, src); err != nil {
		t.Fatal(err)
	}
	dir, err := extractInto(t, b.Bytes(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pebble/MANIFEST-000001", "pebble/000002.sst", "bleve/index_meta.json", "bleve/store/a.zap"} {
		want, _ := os.ReadFile(filepath.Join(src, name))
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
	if err := os.Symlink("/etc", filepath.Join(src, "pebble", "link")); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), io.Discard, src); err == nil || !strings.Contains(err.Error(), "neither a regular file nor a directory") {
		t.Errorf("a symlink in the index: %v", err)
	}
}

// FuzzExtract: any bytes extract or fail without panicking, writing only
// directories and regular files inside the directory, within the limits.
func FuzzExtract(f *testing.F) {
	f.Add(mkTar(f, entry{name: "pebble/", typ: tar.TypeDir}, entry{name: "pebble/a", typ: tar.TypeReg, body: []byte("abc")}))
	f.Add(mkTar(f, entry{name: "l", typ: tar.TypeSymlink, link: ".."}, entry{name: "l/x", typ: tar.TypeReg, body: []byte("x")}))
	f.Add(mkTar(f, entry{name: "../x", typ: tar.TypeReg, body: []byte("x")}))
	f.Add(mkTar(f, entry{name: "a", typ: tar.TypeReg, body: make([]byte, 300)}))
	f.Add(mkTar(f, entry{name: "a", typ: tar.TypeReg, body: []byte("x")}, entry{name: "a/b", typ: tar.TypeReg, body: []byte("y")}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		extractInto(t, b, Limits{MaxBytes: 1 << 12, MaxFileBytes: 1 << 10, MaxEntries: 20})
	})
}
