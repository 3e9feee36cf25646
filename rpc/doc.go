// Package rpc implements lodge's JSON-RPC 2.0 interface: the addr_check
// method (and rpc.discover) over request bodies, independent of transport.
//
// The contract is ../shared/spec/mail-upload-address-check.md section 4.5
// with ../shared/docs/address-check.md: params hold exactly one of address
// or addresses; each address is an array of strings or a string; each
// result echoes the submitted address byte for byte, in the form it came
// in, because the echo is copied from the request body rather than
// re-encoded. The one exception keeps the response a JSON text (RFC 8259
// section 8: UTF-8, no lone surrogates): a byte that is not part of valid
// UTF-8, or a \u escape of a lone surrogate, is echoed as \ufffd, as
// encoding/json would write it. A line holding either is not text: the
// address is invalid ("line 2 is not valid UTF-8 text").
//
// Promises:
//   - Every standard error code: -32700 parse error (malformed JSON, nesting
//     deeper than Config.MaxDepth), -32600 invalid request, -32601 method not
//     found, -32602 invalid params (including more than Config.MaxAddresses
//     addresses in one call, or more than Config.MaxRequestAddresses in one
//     body: the calls of a batch are counted together, in order, and the
//     call that passes the limit and every addr_check call after it get
//     the error), -32603 internal error (a recovered panic).
//   - Batches (arrays of requests) get an array of responses in request
//     order; notifications (requests without an id) get none; a body of only
//     notifications gets an empty response.
//   - The id is echoed exactly as sent (up to Config.MaxIDBytes bytes),
//     with the same exception as the address.
//   - The common call, one addr_check with one address in plain strings,
//     is validated and taken apart in one pass (fast.go), its lines viewed
//     in the body; anything else, or anything that pass declines, is
//     decoded by walking the body with segmentio/encoding's tokenizer
//     after a validity check, strings unescaped into pooled buffers. Both
//     give the same answer byte for byte (FuzzFastPath). Responses are
//     appended to the caller's buffer: a request allocates nothing on the
//     hot path beyond what the engine returns.
//   - Nothing of the body is kept after Handle returns, so a transport may
//     reuse the body's memory at once (fasthttp's RequestCtx rule).
//   - HandleTo gives the same response as Handle, written in pieces of
//     about FlushBytes as it is made, so that a large answer is never held
//     whole: everything that could replace a part of it by an error (the
//     batch size, a call's address count and types) is checked before that
//     part is written.
//
// A Server is safe for concurrent use.
package rpc
