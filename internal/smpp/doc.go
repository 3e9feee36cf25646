// Package smpp sends SMS over SMPP 3.4 as an ESME: a small codec of its
// own (no SMPP library is available to the build) and a client keeping
// one bound transceiver session to an SMSC.
//
// # Client
//
//	c, err := smpp.Dial(ctx, smpp.Config{Addr: "smsc:2775", SystemID: "id", Password: "pw"})
//	ids, err := c.Submit(ctx, smpp.Message{From: "+61400000000", To: "+61412345678", Text: "…", Ref: "EPID-3-0", Receipt: true})
//	for r := range c.Receipts() { … r.MessageID, r.State … }
//	c.Close()
//
// Dial binds (bind_transceiver) and returns once bound; the Client then
// keeps the session: enquire_link every Config.EnquireLink both ways
// (the SMSC's are answered, an unanswered one of ours drops the session),
// and after any loss (the connection breaks, the SMSC unbinds or sends a
// PDU this package cannot read) it binds again with a backoff of 200 ms
// doubling to 30 s. A session's faults never crash or hang the process:
// every wait is bounded by Config.ResponseTimeout.
//
// Submit splits the text (Split), sends a submit_sm per part and returns
// every part's message id once all are answered. Parts of every Submit
// share one window of Config.Window (10) submit_sm awaiting their
// response: Submits called from many goroutines are pipelined. A part
// holds its slot from its sending to its answer (or timeout, or the
// session's loss), so a message of more parts than the window goes
// through as answers come. The
// sender (Message.From) is a number, "+" international (TON 1, NPI 1)
// or national/unknown, or an alphanumeric name of up to 11 characters
// (TON 5); whether a name is allowed for an account is the caller's
// rule, not this package's.
//
// Delivery receipts (deliver_sm with the receipt esm_class) come out of
// Receipts, read from the receipt text and the receipted_message_id,
// message_state and network_error_code TLVs; each is acknowledged with
// deliver_sm_resp once buffered. Other deliver_sm (replies from handsets)
// are acknowledged and dropped.
//
// # Errors
//
// IsPermanent tells a failure that sending again cannot cure (a
// permanent command_status such as ESME_RINVDSTADR, ESME_RINVSRCADR or
// ESME_RINVMSGLEN, or a message refused before sending: ErrInvalidMessage)
// from one worth retrying (ESME_RTHROTTLED, ESME_RMSGQFUL, ESME_RSYSERR
// and the other statuses Status.Temporary lists, ErrConnLost, ErrTimeout,
// ErrNotBound, a cancelled context). The client does not retry a Submit
// itself: the caller does, with its own backoff.
//
// # At least once
//
// A Submit that failed temporarily may have been accepted by the SMSC,
// wholly or some of its parts (the connection broke after the SMSC took
// a submit_sm but before its response arrived). The caller sends the
// message again with the same Message.Ref: every attempt carries the
// same user_message_reference (16 bits of Ref's FNV-1a digest) and the
// same concatenation reference, so the SMSC or a receiver that keeps
// them can tell the repeat. The recipient may still see a message
// twice: a handset does not deduplicate.
//
// # Text
//
// A text of characters all in the GSM 03.38 default alphabet and its
// extension table (escape 0x1B: ^ { } \ [ ~ ] | € and form feed) is sent
// with data_coding 0, one septet per octet (unpacked, as SMPP servers
// expect; the SMSC packs them for the air); any other character makes
// the whole text UCS-2 (UTF-16BE, data_coding 8, surrogate pairs kept
// whole). One message holds 160 septets or 70 UCS-2 units; a longer
// text is sent as concatenated parts of 153 septets or 67 units, each
// with a user data header (IEI 0x00, 8-bit reference) and esm_class
// 0x40, an escape never separated from its septet. At most 255 parts
// (39,015 GSM characters); more is ErrInvalidMessage.
//
// # Codec bounds
//
// ReadPDU and Decode read the header, bind_transceiver(_resp), unbind,
// enquire_link, generic_nack, submit_sm and deliver_sm and their
// responses; any other command_id is kept raw and, as a request, is
// answered generic_nack (ESME_RINVCMDID). command_length is 16 to 65,536
// octets and checked before anything is allocated; every C-octet string
// is at most its SMPP 3.4 maximum (system_id 16, password 9, system_type
// 13, address_range 41, service_type 6, addresses 21, times 0 or 17,
// message_id 65, NUL included); sm_length at most 254; a TLV's length
// stays inside the PDU, and the known fixed-size TLVs
// (user_message_reference, sar_*, sc_interface_version, message_state,
// network_error_code) and receipted_message_id have their size; unknown
// TLVs are kept and written back. A response without a body (allowed
// when its status is an error) decodes with a nil Body. Anything else is
// a *MalformedError (errors.Is ErrMalformed) naming the command, field
// and offset, never a panic. Append checks the same rules when
// encoding.
//
// Not supported: TLS (ssmpp), bind as transmitter or receiver only,
// outbind, data_sm, submit_multi, query_sm, cancel_sm and replace_sm,
// message_payload for long texts (concatenation uses the UDH), and
// 16-bit concatenation references when sending (read when decoding).
//
// # Concurrency
//
// Client's methods are safe for concurrent use. Close waits for the
// Submits in progress (each part's answer at most ResponseTimeout),
// unbinds, and closes the Receipts channel; Submit after Close returns
// ErrClosed.
//
// # Tests
//
// The client is tested against a real SMPP server, the npm package smpp
// run by testdata/server.js (package smpptest starts it and reads what
// it received), and against hostile servers of the tests' own.
//
// # Figures
//
// go run ./bench/smsbench: one-part messages from 64 goroutines to the
// npm server on loopback, 2 cores shared with other work (load 3 to 7,
// so the figures vary by run). With the window of 10: 22,000 to 49,000
// parts/s when the server answers at once (its single JavaScript thread
// is the limit), 1,600 to 1,850 parts/s when it answers each submit_sm
// 5 ms late, as a distant SMSC would. With a window of 1: 14,000 to
// 18,000, and 169 to 189. The window is worth 9.1 to 9.8 times at 5 ms,
// near its bound of 10; on loopback, where a round trip costs almost
// nothing, 1.4 to 3.5 times.
package smpp
