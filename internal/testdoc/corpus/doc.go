// Package corpus generates a corpus of mailed documents whose letters are
// known by construction, for the tests and benchmarks of the auto processor
// (which reads letters out of documents uploaded without metadata): PDFs
// from several producers, PostScript and XPS copies, and manifest.json
// saying, for every document and letter, what a correct reader finds.
//
// # What a reader must find (the contract)
//
// Coordinates are from the top-left corner of a page as it is displayed
// (after a PDF page's /Rotate). The window zone is production's default
// envelope window, DL (x 20 mm, y 50 mm, 95 × 38 mm) or C4 (x 20 mm, y 50
// mm, 95 × 45 mm), widened by production's 3 mm tolerance on every side
// (Zone and ZoneC4 below).
//
//   - A letter's address is the text inside the zone of its first page,
//     read top to bottom. The zone may first hold, in this order and each
//     on its own line, `ref:<reference>`, `email:<address>`, `fax:<number>`
//     and `sms:<number>`; those lines may be white, drawn with text render
//     mode 3 (PDF, PostScript) or fully transparent (XPS): customers hide the
//     reference so, and hidden text counts. The remaining lines are the
//     postal address, exactly as Letter.Address has them (words separated by
//     one space).
//   - A new letter starts on a page whose zone holds an address different
//     from the previous page's. Continuation pages show nothing in the zone
//     (C4's, the larger) or the very same postal lines again. Documents
//     with PagesPerLetter set are meant for a profile that fixes the pages
//     per letter: there, consecutive letters may repeat an address.
//   - Everything else (letterheads, logos, return addresses, the date and
//     account block at the right, body text in one or two columns, tables,
//     footers) lies outside the C4 zone on every page. Every conforming
//     address lies inside the DL zone, so both envelopes read the same.
//   - Non-conforming documents and letters carry the expected outcome in
//     Hold (see the Hold* constants): pages before the first address, a
//     window showing only an image (a scan), an address set in a font
//     whose glyphs map to no text (no ToUnicode, glyph names that mean
//     nothing), an address crossing the zone's left edge by more than the
//     tolerance.
//
// Every address is checked by the engine on the default reference data
// (the shared GeoNames and G-NAF locality lists) and Letter.Verdict is
// what it answers: mostly matched (real localities), some unmatched
// (misspelt localities), invalid (too few lines, a postcode of another
// state) and international.
//
// # Layouts and producers
//
// See Layouts for the list. Producers: internal/pdf's Writer (standard
// fonts, forms it is given as streams), testdoc's PDFBuilder (objects
// written by hand: /Rotate, Type 3 fonts), Ghostscript's pdfwrite from
// PostScript written here (embedded Type 1C subsets, custom encodings,
// TrueType fonts found through fontconfig; the PostScript is kept as a
// document of its own), headless Chromium printing HTML written here
// (CID TrueType fonts, Identity-H; single-letter files are cut out of one
// print with qpdf), and internal/xps's Writer (XPS copies of documents
// made with internal/pdf's Writer, from the same page descriptions).
//
// # Generation
//
// Generate writes a corpus into a directory (bench/lettercorpus is its
// command); Cached keeps corpora in a directory the caller names, keyed by
// a hash of everything that goes into them (documents written in Go, the
// PostScript and HTML given to the tools, the manifest, the tools' and
// fonts' identities), so tests pay for generation once. Options{Letters:
// Small} is every layout, producer and non-conforming case in 60 letters
// (about 2.5 s); Full, 2,000 letters, takes 8 to 15 s on two cores (go run
// ./bench/lettercorpus -out DIR), Chromium's and Ghostscript's runs in
// parallel. The same Options give the same manifest and the same bytes in
// every file but the XPS ones, whose font parts internal/xps names by
// random GUIDs: Ghostscript runs without dates and identifiers (-dOmitInfoDate
// -dOmitID -dOmitXMP), Chromium's dates are set to 1 January 2026 digit for
// digit, qpdf cuts with --deterministic-id. Chromium, Ghostscript, qpdf and
// the Liberation and DejaVu fonts must be installed (scripts/test installs
// them); the tests also use poppler's pdftotext and pdfimages and xpstopdf.
//
// A test of another package uses it so:
//
//	dir, m, err := corpus.Cached(ctx, filepath.Join(os.TempDir(), "lodge-lettercorpus"), corpus.Options{Letters: corpus.Small})
//	for _, d := range m.Documents {
//		// read filepath.Join(dir, d.File) (d.Format), then for each of
//		// d.Letters compare pages FirstPage..LastPage, WindowLines(),
//		// Reference, Email, Fax, SMS, or the expected Hold (and d.Hold).
//	}
package corpus
