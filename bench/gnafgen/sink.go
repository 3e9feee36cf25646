package main

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// A release is where the tables go: a folder, the parts of a ZIP (each
// table deflated by the goroutine that writes it, so compression runs in
// parallel; the parts are put together with zip.Writer.CreateRaw at the
// end), or both.
type release struct {
	folder string // .../G-NAF/G-NAF NOVEMBER 2024, or "" when no folder is written
	tmp    string // directory for deflated parts, or "" when no ZIP is written
	prefix string // path of the release inside the ZIP: G-NAF/G-NAF NOVEMBER 2024/
	eol    string

	mu    sync.Mutex
	sinks []*sink
}

// A sink is one table file being written. Rows are appended to buf by the
// generator; flush passes full buffers on to the plain file and the deflater.
type sink struct {
	rel   string // path inside the release: "Standard/NSW_LOCALITY_psv.psv"
	buf   []byte
	eol   string
	plain *os.File
	tmp   *os.File
	tbuf  *bufio.Writer
	fw    *flate.Writer
	crc   uint32
	size  int64 // uncompressed bytes
	zsize int64 // compressed bytes
	rows  int64
	err   error
}

const sinkFlush = 256 << 10

func (rl *release) create(rel string, header []string) (*sink, error) {
	s := &sink{rel: rel, buf: make([]byte, 0, sinkFlush+64<<10), eol: rl.eol}
	if rl.folder != "" {
		p := filepath.Join(rl.folder, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(p)
		if err != nil {
			return nil, err
		}
		s.plain = f
	}
	if rl.tmp != "" {
		f, err := os.Create(filepath.Join(rl.tmp, strings.NewReplacer("/", "_", " ", "_").Replace(rel)+".deflate"))
		if err != nil {
			return nil, err
		}
		s.tmp = f
		s.tbuf = bufio.NewWriterSize(f, 256<<10)
		s.fw, _ = flate.NewWriter(s.tbuf, flate.BestSpeed)
	}
	rl.mu.Lock()
	rl.sinks = append(rl.sinks, s)
	rl.mu.Unlock()
	s.buf = append(s.buf, strings.Join(header, "|")...)
	s.buf = append(s.buf, s.eol...)
	return s, nil
}

// newFileSink returns a sink writing to a plain file, without header.
func newFileSink(path string) (*sink, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &sink{rel: path, buf: make([]byte, 0, sinkFlush+64<<10), eol: "\n", plain: f}, nil
}

// end finishes the row being appended to buf.
func (s *sink) end() {
	s.buf = append(s.buf, s.eol...)
	s.rows++
	if len(s.buf) >= sinkFlush {
		s.flush()
	}
}

func (s *sink) flush() {
	if len(s.buf) == 0 || s.err != nil {
		s.buf = s.buf[:0]
		return
	}
	if s.plain != nil {
		if _, err := s.plain.Write(s.buf); err != nil {
			s.err = err
		}
	}
	if s.fw != nil {
		s.crc = crc32.Update(s.crc, crc32.IEEETable, s.buf)
		if _, err := s.fw.Write(s.buf); err != nil {
			s.err = err
		}
	}
	s.size += int64(len(s.buf))
	s.buf = s.buf[:0]
}

// row appends fields joined by pipes as one row.
func (s *sink) row(fields ...string) {
	for i, f := range fields {
		if i > 0 {
			s.buf = append(s.buf, '|')
		}
		s.buf = append(s.buf, f...)
	}
	s.end()
}

func (s *sink) close() error {
	s.flush()
	if s.plain != nil {
		if err := s.plain.Close(); err != nil && s.err == nil {
			s.err = err
		}
	}
	if s.fw != nil {
		if err := s.fw.Close(); err != nil && s.err == nil {
			s.err = err
		}
		if err := s.tbuf.Flush(); err != nil && s.err == nil {
			s.err = err
		}
		if off, err := s.tmp.Seek(0, io.SeekCurrent); err == nil {
			s.zsize = off
		} else if s.err == nil {
			s.err = err
		}
	}
	if s.err != nil {
		return fmt.Errorf("%s: %w", s.rel, s.err)
	}
	return nil
}

// writeZip puts the deflated parts together as a ZIP at path, directories
// first, then every file in name order, all stamped with modified.
func (rl *release) writeZip(path string, modified time.Time) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	zw := zip.NewWriter(bw)
	// Small entries (directories) go through the registered compressor;
	// the tables arrive already deflated at BestSpeed.
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed)
	})
	sinks := append([]*sink(nil), rl.sinks...)
	sort.Slice(sinks, func(a, b int) bool { return sinks[a].rel < sinks[b].rel })
	dirs := []string{"G-NAF/", rl.prefix}
	seen := map[string]bool{}
	for _, s := range sinks {
		d := rl.prefix + s.rel[:strings.LastIndex(s.rel, "/")+1]
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		fh := &zip.FileHeader{Name: d, Method: zip.Store, Modified: modified}
		fh.SetMode(0o755 | os.ModeDir)
		if _, err := zw.CreateHeader(fh); err != nil {
			return err
		}
	}
	for _, s := range sinks {
		fh := &zip.FileHeader{
			Name:               rl.prefix + s.rel,
			Method:             zip.Deflate,
			Modified:           modified,
			CRC32:              s.crc,
			CompressedSize64:   uint64(s.zsize),
			UncompressedSize64: uint64(s.size),
			CreatorVersion:     3<<8 | 20,
			ReaderVersion:      20,
			ExternalAttrs:      0o644 << 16,
		}
		// CreateRaw writes the MS-DOS time fields as given.
		fh.ModifiedDate, fh.ModifiedTime = msDosTime(modified)
		w, err := zw.CreateRaw(fh)
		if err != nil {
			return err
		}
		if _, err := s.tmp.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(w, s.tmp); err != nil {
			return err
		}
		s.tmp.Close()
		os.Remove(s.tmp.Name())
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

func msDosTime(t time.Time) (date, tm uint16) {
	date = uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9)
	tm = uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11)
	return
}
