// Package email sends letters as email over SMTP submission, and by fax
// through an email-to-fax gateway (a fax is an email to the gateway).
//
// A Mailer holds a small pool of open SMTP connections to one server
// (Config.URL) and sends one Message per call to Send: a plain-text body,
// an HTML alternative when the Message has one, attachments, optional
// DKIM signing. It stores nothing: no queue, no per-message state; a
// Message is composed in memory, sent, and forgotten. Retrying, recording
// and deduplicating are the caller's (the Message-ID it gives is the
// dedup key a receiver sees on every attempt).
//
// # Server URL
//
//	smtp://user:pass@host:port    submission (port 587 by default): STARTTLS
//	                              when the server offers it
//	smtp://…?tls=required         STARTTLS or fail (temporary error)
//	smtps://user:pass@host:port   implicit TLS from the first byte (465)
//	…&insecure_auth=1             allow AUTH without TLS (loopback tests)
//
// User and password (percent-encoded in the URL) are sent with AUTH PLAIN,
// or LOGIN when the server offers only that, and only over TLS: without
// insecure_auth=1 a server that offers no TLS gets no credentials (the
// send fails, temporarily). Without a user the Mailer does not
// authenticate. Certificates are checked against Config.RootCAs (the
// system's roots when nil) and the URL's host.
//
// # Messages and what is refused
//
// From and To are single addresses (net/mail syntax, display name
// allowed); ReturnPath is the envelope sender (MAIL FROM), the From
// address when empty: a VERP address (package delivery/bounce) makes
// bounces name the letter. Header injection cannot happen: a control
// character (CR, LF, NUL, TAB, DEL ...) in From, To, ReturnPath, Subject,
// a header name or value, the Message-ID or an attachment's name is
// refused with an error that wraps ErrInvalid and names the field,
// before anything is sent. A non-ASCII subject or header value is
// encoded (RFC 2047). Headers set by this package (From, To, Subject,
// Date, Message-ID, MIME-Version, Content-*, DKIM-Signature, and Cc, Bcc,
// Sender, Return-Path, Received) cannot be given in Message.Headers.
//
// Limits: Subject at most 1,000 characters, a header value at most 998
// bytes, at most 50 extra headers, a Message-ID at most 250 bytes, at
// most 100 attachments; the server's own size limit applies to the whole
// message (a 552 reply is a permanent error).
//
// # Errors
//
// IsPermanent tells whether sending the same Message again cannot
// succeed: an SMTP 5xx reply to MAIL, RCPT or DATA (the recipient or the
// content refused), or a Message refused before sending (ErrInvalid).
// Everything else is temporary and worth a retry later with the same
// Message-ID: 4xx replies, timeouts, connection loss (also mid-DATA: the
// server may or may not have the message, hence the dedup key), TLS and
// authentication failures and 530 (a configuration problem of this
// server, not of the letter). The *Error in the chain says at which
// stage the server answered what.
//
// # Connections
//
// Send is safe for concurrent use; at most Config.Pool connections are
// open and at most that many Sends talk to the server at a time (the
// others wait, or give up when their context ends). A connection is kept
// open after a message, reset (RSET) after a refused one, and closed
// after an I/O error or a timeout. A kept connection that the server has
// closed meanwhile (idle timeout, restart, a 421 reply) is found out at
// MAIL FROM, before any of the message was accepted, and replaced by a
// new one for the same Send without the caller seeing it; a connection
// idle longer than a minute is not tried but replaced. Each Send has
// Config.Timeout (default 30 s), or the context's deadline if earlier,
// for everything including connecting: a server that stops answering
// costs a timeout, never a hang.
//
// # Fax
//
// FaxTo makes the recipient address of a fax: the number in E.164 digits
// without the plus (an Australian number 02 9374 4000 or +61 2 9374 4000
// both become 61293744000) as the local part at the gateway's domain,
// 61293744000@fax.example.net. Send the letter's PDF as an attachment to
// that address; the gateway dials the number and faxes the PDF.
//
// # Metrics
//
// With Config.Metrics set: lodge_email_sent_total,
// lodge_email_failed_total{kind="temporary"|"permanent"},
// lodge_email_connections_opened_total and
// lodge_email_send_duration_seconds.
package email
