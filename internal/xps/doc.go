// Package xps reads text with positions out of XPS documents (Microsoft
// XPS 1.0 and OpenXPS, ECMA-388) for the auto processor, which looks for
// each letter's address in its envelope window; and it writes XPS
// packages for tests and test corpora (Writer).
//
// # Reading
//
// Open reads a package whose bytes may be hostile: no input panics, hangs
// or grows without bound, and every error matches ErrMalformed or
// ErrLimit and names the part (and for XML, the line) at fault. The
// package is a ZIP (archive/zip, deflate through klauspost/compress);
// part names are looked up as OPC has them: without a leading slash,
// percent-decoded, ignoring ASCII case, interleaved parts
// ("name/[0].piece" ... "name/[n].last.piece") joined. The relationship
// of _rels/.rels whose type ends in /fixedrepresentation names the
// FixedDocumentSequence (without one, the package's only .fdseq part);
// its DocumentReference elements name FixedDocuments, whose PageContent
// elements name the pages. Sources resolve relative to the part that
// holds them and never climb above the package root; a URI of another
// scheme is an error. A FixedDocument named twice counts twice (read
// once); one named as its own page, the sequence named as a page or a
// document, a sequence or document whose root element is not the one
// expected (or is in another namespace than XPS 1.0's or OpenXPS's), and
// a page not in the package are errors at Open; a page whose root is not
// a FixedPage is an error of PageText. XML parts are UTF-8 or UTF-16 (told by the
// byte order mark), read with encoding/xml's Decoder token by token (no
// DTD, no entity but the five predefined and character references; end
// tags must match).
//
// PageText(i, zone, p) reads page i: the FixedPage's Width and Height in
// points (XPS units are 1/96 inch: × 0.75), every character its Glyphs
// draw and the boxes of its raster images, in points from the page's
// top-left corner, as package pagetext describes them. With a zone, only
// characters whose box centre lies in the zone are kept, and only images
// that meet it.
//
// A Glyphs element is laid out as ECMA-388 §12.1 has it: from OriginX,
// OriginY, at FontRenderingEmSize, through its RenderTransform and those
// of the Canvases around it (each an attribute, a property element
// holding a MatrixTransform, or "{StaticResource key}" found in the
// Resources of the element or any ancestor, inline or in a remote
// ResourceDictionary part named by Source). UnicodeString (after its "{}"
// escape) and Indices go together entry by entry: an entry
// "(c:g)index,advance,u,v" draws c UTF-16 code units of the text with g
// glyphs, the first moved by the u and v offsets (1/100 em; v upwards);
// advances are in 1/100 em. A missing glyph index is the font's cmap
// glyph for the character, a missing advance the font's hmtx advance;
// text past the end of Indices is laid out one glyph a character from
// the font, glyphs past the end of the text are U+FFFD. BidiLevel odd
// lays glyphs out leftwards from the origin; IsSideways gives a box
// centred on the baseline, one em tall; StyleSimulations change no
// position and are ignored.
//
// A character is one cluster: its text (one rune, or the runes a
// ligature glyph draws), its box from the pen position to the end of its
// glyphs' advances along the baseline, and from the font's ascent above
// the baseline to its descent below (hhea; 0.8 and 0.2 em when the font
// gives none or cannot be read but is not needed), through the
// transform; Size is the em size through the transform, Dir the quarter
// turn nearest the baseline's direction. Invisible is set for text
// filled with white (any alpha), with alpha 0 (#AARRGGBB, sc#, the alpha
// of ContextColor), with an Opacity of 0 on the Glyphs, its brush or any
// ancestor Canvas, or with no Fill at all. A Path whose Fill is an
// ImageBrush (an element, an attribute resource) adds the bounds of its
// geometry (Data in abbreviated syntax, or a PathGeometry with Figures
// or PathFigure segments, end and control points) through its transform
// to Images.
//
// Fonts are read once per Doc: FontUri is resolved relative to the page;
// a part named .odttf is deobfuscated with the GUID its name holds
// (ECMA-388 §9.1.7.3: the first 32 bytes XORed with the GUID's bytes in
// reverse; a font under another name whose data does not parse is tried
// so too, as libgxps does), "#n" picks font n of a collection; golang.org/x/image/font/
// sfnt reads TrueType and OpenType (CFF) fonts. A font that is missing
// or broken is an error only for a run that needs it (an index or an
// advance the Indices do not give), said each time; a font is never
// needed for a run that is outside the zone.
//
// What is not read: text inside a VisualBrush (it paints a fill, it is
// not text on the page), Clip and OpacityMask (clipped or masked text
// still counts, as hidden text does), text drawn as Path outlines, the
// Choice branches of markup compatibility (mc:AlternateContent is read
// through its Fallback), elements of other namespaces (skipped with
// their content), PrintTicket, LinkTarget, story fragments, signatures
// and hyperlinks. Attribute values keep their white space (encoding/xml
// does not normalise it).
//
// # Speed
//
// Most of a page's bytes are its Glyphs' Indices and UnicodeString, and
// encoding/xml costs about 8 ns a byte. So the plain values of those two
// attributes are lifted out of the page before the Decoder reads it
// (lift.go: checked element by element, the page read whole on any
// doubt), and a run whose baseline runs along an axis more than 2 em
// from the zone (upright, upside down or a quarter turn; no v offsets)
// is never laid out. On the
// 2-core machine of this project, BenchmarkPageText reads typical letter
// pages (an address, a date, 40 lines of body text: a 48 KB FixedPage)
// at about 4,700 pages a second on one core with the window zone and
// 2,100 without one:
//
//	go test -run '^$' -bench PageText -cpu 1 ./internal/xps
//
// # Bounds
//
// Limits (the zero value of each field means its default):
//
//	MaxParts       250,000   ZIP entries; a larger count declared by the
//	                         end of central directory is refused before
//	                         archive/zip reads the directory (which costs
//	                         about six times its size in memory)
//	MaxPages       100,000   pages of the document (and DocumentReferences,
//	                         and PageContents of one FixedDocument)
//	MaxPartBytes   32 MiB    one XML part decompressed (a page of 100,000
//	                         text objects is 15 MiB); checked against the
//	                         declared size before inflating, and the
//	                         declared size is enforced while inflating
//	MaxFontBytes   32 MiB    one font part (a CJK font is up to 20 MiB)
//	MaxTotalBytes  2 GiB     everything one Doc inflates in its life, a
//	                         part read twice counting twice: a small
//	                         package whose pages all name one large part
//	                         stops here
//	MaxDepth       256       XML nesting
//	MaxElements    1,000,000 elements in one part
//	MaxChars       200,000   characters one page reports
//	Timeout        10 s      Open, then each PageText call: a deadline
//	                         (internal/deadline) checked per XML token and
//	                         per glyph
//
// Fixed bounds: numbers are decimals of at most 1e9 in size (no NaN,
// Inf, hex); page sizes at most 1e6 units; a box further than 1e12 pt
// (transforms multiplied out) is an error; glyph indices at most 65,535,
// cluster maps at most 65,536 code units or glyphs, BidiLevel 0 to 61; a
// resource dictionary at most 100,000 entries, a document at most 1,000
// remote dictionary parts (each read once); parsed fonts are kept up to
// 64 MiB of font data (past it the cache is emptied), and a font's
// glyph caches up to 65,536 entries each.
//
// A Doc belongs to one goroutine.
//
// # Writing
//
// Writer writes what the tests and the corpus need: one
// FixedDocumentSequence, one FixedDocument, FixedPages of Glyphs whose
// Indices carry each glyph's index and advance (measured with sfnt, to
// 1/10,000 em), fonts embedded whole as obfuscated .odttf parts with a
// random GUID, PNG images as Paths filled with an ImageBrush, solid
// rectangles, nested Canvases with transforms, XPS 1.0 or OpenXPS
// namespaces, and the pages' required-resource relationships. libgxps
// (xpstopdf) renders what it writes with the words where PageText finds
// them (TestSecondReader).
package xps
