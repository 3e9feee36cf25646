// Package ipp is a small client of the Internet Printing Protocol: the
// binary encoding of RFC 8010 (Encode: Message.AppendBinary; Decode) and
// the three operations of RFC 8011 lodge needs to hand a print batch to a
// printer and find it there again: Print-Job, Get-Jobs and
// Get-Job-Attributes, over HTTP (ipp://) or HTTPS (ipps://).
//
// # Why our own
//
// The codec is under 400 lines; the one maintained Go library,
// github.com/phin1x/go-ipp (v1.6.1, Apache-2.0), was read and tried
// first. Its decoder trusts the lengths it reads: a 12-byte response
// whose name length is 0xFFFF panics it ("makeslice: len out of range");
// a short read is taken as the whole value and its error dropped; the
// length of an integer is ignored; a status-message that is not text
// panics its error check. Its HTTP adapter turns TLS verification off,
// takes no context or timeout, reads a response of any size and sizes
// its buffer from the response's Content-Length. Attributes are kept in
// maps, so a request's attributes go out in random order (RFC 8011 fixes
// the first ones). A printer is a network peer: its answers are parsed
// here like any other input, with limits, located errors, a fuzz target
// (FuzzDecode) and a table of hostile messages.
//
// # What it promises
//
//   - Decode never panics and never reads past its input: every length
//     is checked against what is left and against its value's type;
//     collections must nest (at most Limits.MaxDepth deep); at most
//     Limits.MaxValues values (default 100,000). A message it cannot
//     read is a *DecodeError at the offending byte.
//   - Values are kept as they came (tag and bytes), collections flat, so
//     that nothing a printer sends is misread as something else; the
//     accessors read the kinds lodge uses (integers, enums, strings).
//   - A Client reads at most Config.MaxResponseBytes (default 4 MiB) of
//     an answer, checks that it is application/ipp answering its request
//     (the request-id), and gives an unsuccessful status as a
//     *StatusError with the printer's status-message. Every request
//     carries Config.User as requesting-user-name. Documents are
//     streamed (not held in memory) with their length, after an
//     Expect: 100-continue.
//   - Requests are IPP/2.0; contexts bound every request.
package ipp
