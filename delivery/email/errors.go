package email

import (
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"os"
)

// ErrInvalid is wrapped by the error of a Message refused before sending
// (a control character in a header, an address that does not parse ...):
// sending it again cannot succeed, so IsPermanent is true.
var ErrInvalid = errors.New("invalid message")

// Error is a failed Send's SMTP side: at which stage, with the server's
// reply when it gave one.
type Error struct {
	// Stage is "connect", "tls", "auth", "MAIL", "RCPT" or "DATA".
	Stage string
	// Code is the server's reply code, 0 when there was no reply (an I/O
	// error, a timeout, a refused connection).
	Code int
	// Reply is the server's reply text (enhanced status code included).
	Reply string
	// Err is the underlying error.
	Err error
}

func (e *Error) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("email: %s: %d %s", e.Stage, e.Code, e.Reply)
	}
	return fmt.Sprintf("email: %s: %v", e.Stage, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// IsPermanent reports whether sending the same message again cannot
// succeed: the server refused it with a 5xx reply to MAIL, RCPT or DATA
// (530, authentication required, excepted: that is the configuration's
// fault, not the letter's), or the message was refused before sending
// (ErrInvalid). 4xx replies, timeouts and lost connections are
// temporary.
func IsPermanent(err error) bool {
	if errors.Is(err, ErrInvalid) {
		return true
	}
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Stage {
	case "MAIL", "RCPT", "DATA":
		return e.Code >= 500 && e.Code < 600 && e.Code != 530
	}
	return false
}

// stageError wraps err, met at stage, into an *Error with the server's
// reply when err is one.
func stageError(stage string, err error) *Error {
	e := &Error{Stage: stage, Err: err}
	var tp *textproto.Error
	if errors.As(err, &tp) {
		e.Code, e.Reply = tp.Code, tp.Msg
	}
	return e
}

// isReply reports whether err is the server's answer (the connection is
// still in step and may be reused after RSET), not an I/O failure.
func isReply(err error) bool {
	var tp *textproto.Error
	return errors.As(err, &tp)
}

// isTimeout reports whether err is a deadline met.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

func invalid(field, format string, args ...any) error {
	return fmt.Errorf("email: %s: %s: %w", field, fmt.Sprintf(format, args...), ErrInvalid)
}
