// Package bounce takes back the delivery status notifications (bounces)
// of the email lodge sends: a small inbound SMTP listener
// (github.com/emersion/go-smtp, server side) for the VERP return paths
// the sender gives each letter, and the reader of RFC 3464 reports.
//
// # VERP
//
// Each email's envelope sender is bounce+<token>@<domain> (VERP), the
// token being the caller's name for the letter (opaque here: letters,
// digits and . _ = -, at most MaxToken characters). A report about the
// email comes back to that address, so the token says which letter
// failed whatever the report's own contents. VERP and ParseVERP make and
// read the addresses.
//
// # The listener
//
// Server takes mail only for bounce+<token>@Config.Domain; any other
// recipient is refused with 550 at RCPT (it is no open relay and no
// mailbox). It offers no AUTH, STARTTLS when Config.TLS is set, and has
// explicit limits: a message of at most Config.MaxSize (10 MiB; SIZE is
// announced, a larger one gets 552), 10 VERP recipients a message, lines
// of 2,000 bytes, Config.Timeout (1 minute) for each command, line and
// answer, Config.SessionTimeout (10 minutes) for a whole connection,
// Config.MaxConns (100) connections at once.
//
// Each message is read with ParseDSN. For each VERP recipient and each
// recipient section of the report that tells of a failure
// (Recipient.Failed: Action failed or delayed, or without an Action a 5
// or 4 status), Config.Handler gets a Bounce: the token, Permanent (the
// reporting system gave up: Action failed, also with a 4.x.x status such
// as 4.4.7 expired), Status, Diagnostic, the failed Recipient, and the
// original Message-ID when the report returned the headers. Sections
// that tell of delivery (delivered, relayed, expanded) call nothing.
// The Server answers 250 only after Handler has returned for every one;
// a Handler error makes it answer 451 so that the reporting system sends
// the report again later (at least once: Handler must take a repeat).
//
// A message to a VERP address that is not a delivery status
// notification (an auto-reply such as "out of office", a read receipt,
// a report of another form) or that cannot be read as one is accepted
// (250: refusing it would only make the sender's system bounce the
// bounce) and ignored: Handler is not called, the message is logged
// (info) and counted. Such messages are no evidence that the letter was
// not delivered.
//
// The Server stores nothing: a message is held in memory while it is
// read and handed to Handler, then dropped.
//
// # Reports
//
// ParseDSN reads multipart/report; report-type=delivery-status (and the
// UTF-8 form of RFC 6533): the per-message fields (Reporting-MTA), each
// recipient's Final-Recipient, Original-Recipient, Action, Status,
// Diagnostic-Code and Remote-MTA, and the Message-ID of the returned
// message or headers. Only the top level is read: no part is searched
// for nested reports, which bounds the work of a hostile message
// whatever its nesting. Limits: MaxDSNSize bytes, 100 parts, a 1 MiB
// status part, 1,000 recipients, 256 KiB of returned headers, field
// values cut at 1,000 bytes; values are made valid UTF-8 without
// control characters.
//
// # Metrics
//
// With Config.Metrics set: lodge_bounce_messages_total (messages taken),
// lodge_bounce_reports_total{kind="permanent"|"temporary"} (Handler
// calls that succeeded), lodge_bounce_ignored_total,
// lodge_bounce_refused_recipients_total and
// lodge_bounce_handler_errors_total.
package bounce
