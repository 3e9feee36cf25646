package inspect

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"testing"
)

// Builders for the test documents: ZIPs through archive/zip or byte by
// byte, XPS packages and PostScript (PDFs: internal/testdoc's PDFBuilder).

// zipOf builds a ZIP with archive/zip: name, content pairs, deflated.
func zipOf(t testing.TB, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		f, err := w.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(files[i+1]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const (
	xpsNS   = `xmlns="http://schemas.microsoft.com/xps/2005/06"`
	xpsPage = `<FixedPage Width="793.76" Height="1122.56" ` + xpsNS + ` xml:lang="en-AU"><Path Data="M 0,0 L 10,10" Stroke="#000000"/></FixedPage>`
)

// xpsParts is a two-page XPS package.
func xpsParts() []string {
	return []string{
		"[Content_Types].xml", `<?xml version="1.0" encoding="utf-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="fdseq" ContentType="application/vnd.ms-package.xps-fixeddocumentsequence+xml"/>` +
			`<Default Extension="fdoc" ContentType="application/vnd.ms-package.xps-fixeddocument+xml"/>` +
			`<Default Extension="fpage" ContentType="application/vnd.ms-package.xps-fixedpage+xml"/></Types>`,
		"_rels/.rels", `<?xml version="1.0" encoding="utf-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Type="http://schemas.microsoft.com/xps/2005/06/fixedrepresentation" Target="/FixedDocSeq.fdseq" Id="R0"/></Relationships>`,
		"FixedDocSeq.fdseq", `<FixedDocumentSequence ` + xpsNS + `><DocumentReference Source="Documents/1/FixedDoc.fdoc"/></FixedDocumentSequence>`,
		"Documents/1/FixedDoc.fdoc", `<FixedDocument ` + xpsNS + `><PageContent Source="Pages/1.fpage"/><PageContent Source="Pages/2.fpage"/></FixedDocument>`,
		"Documents/1/Pages/1.fpage", xpsPage,
		"Documents/1/Pages/2.fpage", xpsPage,
	}
}

func twoPageXPS(t testing.TB) []byte { return zipOf(t, xpsParts()...) }

const (
	psTwoPages = "%!PS-Adobe-3.0\n%%Creator: lodge test\n%%Pages: 2\n%%EndComments\n%%Page: 1 1\nshowpage\n%%Page: 2 2\nshowpage\n%%EOF\n"
	psAtEnd    = "%!PS-Adobe-3.0\r\n%%Pages: (atend)\r\n%%EndComments\r\n%%Page: 1 1\r\nshowpage\r\n%%Trailer\r\n%%Pages: 3\r\n%%EOF\r\n"
)

// rawEntry is one entry of a ZIP built byte by byte.
type rawEntry struct {
	name         string
	localName    string // when it differs from name
	data         []byte // as stored (compressed when method is 8)
	method       uint16
	flags        uint16
	crc          uint32
	csize, usize uint32 // 0: len(data)
	extAttr      uint32
	creator      uint16
	offset       int  // the central directory's local header offset; 0: where it is written
	cdOnly       bool // no local header and data: only a central directory record
}

// rawZip writes entries with their local headers and a central directory.
func rawZip(entries ...rawEntry) []byte {
	var buf bytes.Buffer
	offs := make([]int, len(entries))
	for i, e := range entries {
		offs[i] = buf.Len()
		if e.cdOnly {
			continue
		}
		ln := e.name
		if e.localName != "" {
			ln = e.localName
		}
		buf.Write(localHeader(ln, e))
		buf.Write(e.data)
	}
	cd := buf.Len()
	for i, e := range entries {
		off := offs[i]
		if e.offset != 0 {
			off = e.offset
		}
		buf.Write(centralHeader(e, off))
	}
	buf.Write(endRecord(len(entries), buf.Len()-cd, cd))
	return buf.Bytes()
}

func (e rawEntry) sizes() (uint32, uint32, uint32) {
	c, u, crc := e.csize, e.usize, e.crc
	if c == 0 {
		c = uint32(len(e.data))
	}
	if u == 0 {
		u = uint32(len(e.data))
	}
	if crc == 0 && e.method == 0 {
		crc = crc32.ChecksumIEEE(e.data)
	}
	return c, u, crc
}

func localHeader(name string, e rawEntry) []byte {
	c, u, crc := e.sizes()
	h := make([]byte, 30, 30+len(name))
	le.PutUint32(h, sigLocal)
	le.PutUint16(h[4:], 20)
	le.PutUint16(h[6:], e.flags)
	le.PutUint16(h[8:], e.method)
	le.PutUint32(h[14:], crc)
	le.PutUint32(h[18:], c)
	le.PutUint32(h[22:], u)
	le.PutUint16(h[26:], uint16(len(name)))
	return append(h, name...)
}

func centralHeader(e rawEntry, off int) []byte {
	c, u, crc := e.sizes()
	h := make([]byte, 46, 46+len(e.name))
	le.PutUint32(h, sigCentral)
	le.PutUint16(h[4:], e.creator<<8|20)
	le.PutUint16(h[6:], 20)
	le.PutUint16(h[8:], e.flags)
	le.PutUint16(h[10:], e.method)
	le.PutUint32(h[16:], crc)
	le.PutUint32(h[20:], c)
	le.PutUint32(h[24:], u)
	le.PutUint16(h[28:], uint16(len(e.name)))
	le.PutUint32(h[38:], e.extAttr)
	le.PutUint32(h[42:], uint32(off))
	return append(h, e.name...)
}

func endRecord(n, cdLen, cdOff int) []byte {
	h := make([]byte, 22)
	le.PutUint32(h, sigEnd)
	le.PutUint16(h[8:], uint16(n))
	le.PutUint16(h[10:], uint16(n))
	le.PutUint32(h[12:], uint32(cdLen))
	le.PutUint32(h[16:], uint32(cdOff))
	return h
}
