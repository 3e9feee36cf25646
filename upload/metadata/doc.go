// Package metadata reads and checks the metadata file of a mail upload
// session: the optional JSON or XML document that describes a mailing
// (a "pack") and its letters (spec sections 2.1 to 2.7).
//
// Three steps, each usable alone:
//
//	p, probs := metadata.Parse(name, data, metadata.Limits{}) // syntax, types, field names
//	metadata.ApplyProfile(p, profile)                         // unset attributes from a profile
//	plan, more := p.Plan(files)                               // rules against the session's files
//
// Parse checks what the file alone can tell; Validate (or Plan, which
// returns the same problems) checks the pack against the documents of the
// session: references, page ranges, channels, addresses and numbers, and
// rules 1 to 4 of spec 2.4. Every Problem carries its location in the
// metadata ("letters[3].postal[1].postcode"), the same for JSON and XML;
// a problem in an attribute a profile supplied also names the profile
// (Problem.Source, Problem.In; see ApplyProfile).
// A mailing with any problem that is not a Warning must be rejected:
// end_session reports the problems in errs and leaves the session open,
// so that the client can upload a corrected metadata file and end again.
//
// Without metadata, or with metadata that has no letters (Pack.HasLetters
// false), the mailing goes to the auto processor, which reads addresses
// from the documents; Plan then returns no plan.
//
// # JSON
//
// The file is UTF-8 (RFC 7159; a UTF-8 byte order mark is skipped, UTF-16
// is refused) and holds exactly one value, an object. Field names are
// case-sensitive; an unknown name is a problem, with a suggestion when it
// looks like a typo ("letters[2].emial: unknown field; did you mean
// email?"), and so is a name given twice in one object ("duplicate
// field"; the first value is kept). A value of the wrong type is a
// problem ("letters[0].page_start: want an integer, got string"); there
// is no conversion between types: "true" is not a boolean, "3" is not an
// integer, 3.0 and 1e2 are not integers, and a postcode is a string. A
// member whose value is null is treated as absent. Strings are kept
// exactly as written (not trimmed), except postal lines and address
// parts, which are trimmed. No string may contain U+0000.
//
// Mailing attributes, all optional (spec 2.2), in the root object:
//
//	duplex              boolean  double-sided printing
//	colour_model        integer  0 to 9 (the allowed values are not published; 0 to 9 are accepted)
//	title               string   friendly name of the mailing
//	customer_email      string   an email address: receives confirmations
//	confirmation_email  boolean  true needs customer_email
//	department          string
//	purchase_order      string   each distinct value is invoiced separately
//	profile             string   name of a profile supplying unset attributes
//	terminal            string   name of the sending computer
//	cust_hold           boolean  hold the pack until released in the portal
//	orientation         integer  0 to 9, as colour_model
//	attachments         array of strings: document names used as attachments
//	production_options  object:
//	    aup_dlvtyp      integer  0 priority, 1 regular
//	    force_c4        boolean  C4 envelope stock
//	    background      string   extension: a document of the session drawn behind
//	                             the letters' pages (a letterhead); not a letter
//	    background_pages string  extension: "first" (default) or "all"
//	    cover_sheet     boolean  extension: an address cover sheet where an
//	                             unaddressed letter's window area is not clear
//	    stock           string   extension: the paper stock (1 to 32 of A-Z a-z 0-9 - _)
//	    split_pages     integer  extension: the auto processor's letters have this many
//	                             pages each (1 to 10000); default: a letter starts
//	                             where the address in the envelope window changes
//	    split_marker    string   extension: a letter starts on each page showing this
//	                             text (3 to 100 characters); not with split_pages
//	template            string   body of an SMS or email; markers {{key}} (a custom_data key), {{link}}
//	                             (the letter's PDF), {{{{ (a literal "{{"): package delivery/template
//	sms_from            string   at most 10 characters; see Validate
//	email_from          string   an email address, display name allowed ("Acme <noreply@acme.com.au>")
//	email_subj          string   one line
//	letters             array of letter objects
//
// Letter object, all fields optional (spec 2.4):
//
//	postal       string (lines separated by LF, CRLF or CR) or an array
//	             whose items are each a string (one line) or an object of
//	             address parts: locality or suburb, state or region,
//	             postcode, country (all strings; spec 2.6). country stands
//	             alone in its own object; the other parts go together in
//	             one object. An empty string or array is no postal address.
//	email        string   recipient email address
//	fax          string   recipient fax number
//	sms          string   recipient mobile number or email address
//	primary      string   postal, email, sms or fax
//	reference    string   searchable customer reference
//	custom_data  object whose values are all strings; "password" protects
//	             a PDF delivered by email or SMS (spec 2.7)
//	file_name    string   the letter's document, no path
//	page_start   integer  first page, 0-based (default 0)
//	page_end     integer  last page, 0-based, inclusive (default: the last)
//	files        array of file objects: file_name, page_start, page_end (spec 2.5)
//
// An empty string in email, fax, sms, primary, reference or file_name is
// the same as leaving the field out.
//
// # XML
//
// The spec leaves the XML form open beyond its root element and its
// text-valued primitives; this package reads the following. The file is
// UTF-8 or UTF-16 (XML 1.0 requires both; .NET writes UTF-16 by default),
// or ISO-8859-1 (latin1), Windows-1252 or US-ASCII when its declaration
// names them; all are converted to UTF-8 before they are read. UTF-16 is
// told by its byte order mark (FF FE little-endian, FE FF big-endian) or,
// without one, by a first character ('<' or white space) written in two
// bytes, one of them zero; without a mark the declaration must name
// UTF-16 (encoding="UTF-16", or UTF-16LE or UTF-16BE as the bytes are).
// Refused, with their line: a byte order mark and a declaration that
// disagree, a UTF-16 declaration in a file that is not UTF-16, a lone
// surrogate or half a character at the end (with its column too), and
// any other encoding (UTF-32, EBCDIC, Shift_JIS …). A UTF-8 byte order
// mark is skipped; the declaration <?xml …?> is
// optional and, when present, comes first (white space may precede it).
// A document type declaration (<!DOCTYPE …>) is refused, so no entity is
// ever defined or expanded: only the five predefined entities (&amp; &lt;
// &gt; &quot; &apos;) and character references (&#233; &#xE9;) are
// understood. Comments and processing instructions are ignored anywhere.
//
//   - The root element is <pack>; exactly one root, nothing but white
//     space, comments and processing instructions around it.
//   - Every field is a child element named as the JSON field, in any
//     order: <duplex>true</duplex>. Element names are case-sensitive;
//     namespaces are ignored (only local names count).
//   - Text is character data and CDATA sections, concatenated. Strings are
//     trimmed of leading and trailing white space (space, tab, CR, LF),
//     except <template>, which is kept exactly (use CDATA for markup).
//     <title/> is an empty string.
//   - Booleans are the text true or false (nothing else: not 1, yes or
//     True); integers are optionally signed decimal digits; surrounding
//     white space is allowed in both. An empty element is not a boolean or
//     an integer.
//   - xsi:nil="true" (xsi bound to
//     http://www.w3.org/2001/XMLSchema-instance, or the unbound prefix
//     xsi) makes a field absent, as null does in JSON.
//   - Attributes carry nothing: xmlns declarations, xml:* and xsi:*
//     attributes are accepted and ignored, any other attribute is a
//     problem.
//   - Text beside child elements (other than white space) is a problem;
//     a child element where text is expected is a problem.
//   - Lists are a wrapper element holding repeated singular elements:
//     <attachments><attachment>a.pdf</attachment></attachments>,
//     <letters><letter>…</letter></letters>,
//     <files><file><file_name>…</file_name><page_start>…</page_start></file></files>.
//     Any other element inside a list is a problem; an empty wrapper
//     (<attachments/>) is an empty list.
//   - <production_options> holds <aup_dlvtyp>, <force_c4> and the
//     extensions <background>, <background_pages>, <cover_sheet>, <stock>,
//     <split_pages>, <split_marker>.
//   - <postal> holds either text (lines separated by line breaks, each
//     trimmed, empty lines dropped; &#10; writes a line break on one
//     line) or repeated <line> elements. A <line> holds either text (one
//     line) or address part elements: <locality> or <suburb>, <state> or
//     <region>, <postcode>, <country>.
//   - <custom_data> has one child element per key, named by the key, its
//     text the value: <custom_data><password>s3cret</password></custom_data>.
//     Keys are therefore XML names.
//
// Example:
//
//	<?xml version="1.0" encoding="UTF-8"?>
//	<pack>
//	  <duplex>true</duplex>
//	  <attachments><attachment>terms.pdf</attachment></attachments>
//	  <letters>
//	    <letter>
//	      <postal>
//	        <line>Jo Citizen</line>
//	        <line>3/72 Charles St</line>
//	        <line><suburb>St Kilda</suburb><state>VIC</state><postcode>3182</postcode></line>
//	      </postal>
//	      <reference>INV-1001</reference>
//	      <file_name>invoices.pdf</file_name><page_start>0</page_start><page_end>1</page_end>
//	    </letter>
//	  </letters>
//	</pack>
//
// The same pack in JSON parses to the same Pack (except Postal.Raw, which
// is the source text of each format); the golden files in testdata hold
// each mailing shape of spec section 1 in both formats.
//
// # Limits
//
// Limits bound every input (zero fields take the defaults): MaxBytes
// (32 MiB of the file as given; the UTF-8 copy of a UTF-16 file is at
// most 1.5 times as long), MaxDepth (32 levels of objects and arrays, or of elements),
// MaxLetters (100,000; the first are kept and one problem is reported),
// MaxStringBytes (64 KiB per decoded value or key), MaxValues (2,000,000
// attachments, postal lines, files entries and custom_data entries in
// all; then decoding stops) and MaxProblems (1,000, then one "too many
// problems" entry and decoding stops). The schema itself needs 5 levels
// in JSON and 6 in XML.
//
// # Promises
//
// Parse, Validate, Plan and ApplyProfile never panic, whatever the input.
// Nothing recurses on the input's nesting: JSON depth is measured by a
// flat scan before anything else reads the file (a file nested 10,000
// deep is refused when the scan meets its 33rd bracket), XML depth is counted token
// by token as encoding/xml streams them. Time is linear in the size of
// the file. The memory kept is the decoded pack — at most MaxLetters
// letters and MaxValues other values, whose strings together are no
// longer than the file — and at most MaxProblems problems, each of
// bounded size (quoted values are cut short); garbage made on the way is
// proportional to the file. Parse does not retain data.
//
// # Validation
//
// Validate checks (paths as in the metadata; w marks a warning):
//   - every letter has at least one of postal, email, fax, sms; primary is
//     one of postal, email, sms, fax and names a channel the letter has;
//     unset, it is the first given of sms, fax, email, postal;
//   - email addresses (customer_email, email_from, a letter's email, an
//     sms that contains @) parse with net/mail, and their domain has a
//     dot, no spaces, no empty or hyphen-edged labels, no address literal
//     and a top-level domain of at least two characters, not all digits;
//   - sms numbers are Australian mobiles (04xxxxxxxx, +614xxxxxxxx) or
//     other countries' numbers in E.164 form (+ and 8 to 15 digits);
//     spaces, dashes, dots and parentheses are allowed; +61 numbers must be
//     mobiles;
//   - fax numbers are Australian (0[2378]xxxxxxxx, +61[2378]xxxxxxxx,
//     1300 and 1800 numbers) or E.164;
//   - sms_from has at most 10 characters and no control characters; when
//     all digits (with an optional leading +) it must be a mobile number
//     that replies can reach. Any other text must be pre-approved by the
//     service, which this package cannot know;
//   - email_subj is one line; colour_model and orientation are 0 to 9;
//     aup_dlvtyp is 0 or 1; confirmation_email true needs customer_email;
//   - file names (file_name, files[].file_name, attachments) are not empty,
//     hold no / or \, no drive, no control characters, are not . or ..,
//     and have a name and an extension; each names a document (pdf, ps,
//     xps) in Files — a metadata file or another type is a problem, and a
//     near miss is suggested ("did you mean "Terms.PDF"?");
//   - page_start and page_end are not negative, page_start is not after
//     page_end, and both are within the document when its page count is
//     known; page_start and page_end beside files, or file_name together
//     with files, are problems;
//   - rule 1: a document is not both a letter document and an attachment
//     (listed in attachments, or — without an attachments list — first
//     in one letter's files and later in another's);
//   - rule 2: with one uploaded document, letters need not name it;
//   - rule 3 (w): several documents uploaded and none referenced: the
//     first in upload order is used, the others are ignored;
//   - (w) several documents uploaded, some referenced, and a letter names
//     none: the first unreferenced one is used; an uploaded document no
//     letter uses is reported;
//   - rule 4: several letters may share a document;
//   - a letter without any document (no document uploaded, or only
//     attachments) is a text-only message: it needs a template and email
//     or sms as its primary channel (postal or fax beside it: w);
//   - (w) pages of a letter document (not an attachment) of known page
//     count that no letter takes, numbered as page_start and page_end:
//     "statements.pdf": pages 2-6 are in no letter and will not be sent
//     (at most 10 ranges are listed; not told while there are errors);
//   - custom_data.password is not empty, is at most 127 bytes with no
//     control characters (what PDF readers take: internal/pdf
//     CheckPassword), and (w) the letter goes by email or sms;
//   - the template parses (delivery/template: a malformed marker is a
//     problem at "template" with its line and column); each letter going
//     by email or sms has every custom_data key the template uses, and a
//     PDF when it uses {{link}}; filled, it is at most 1 MiB;
//   - attachments listed twice (w).
//
// Plan resolves each letter: its documents (the letter's own with page
// ranges; then the attachments its files list, explicit per the
// attachments list or, without one, every file after the first; then
// every listed attachment no letter references, which is appended to all
// letters), its primary and other channels, address lines, reference and
// custom data.
package metadata
