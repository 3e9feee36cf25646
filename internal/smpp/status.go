package smpp

import (
	"errors"
	"fmt"
)

// Status is a PDU's command_status: 0 in requests and in successful
// responses, else the reason of a refusal.
type Status uint32

// The command_status values of SMPP 3.4 §5.1.3 this package names.
const (
	StatusOK              Status = 0x00 // ESME_ROK
	StatusInvMsgLen       Status = 0x01 // ESME_RINVMSGLEN
	StatusInvCmdLen       Status = 0x02 // ESME_RINVCMDLEN
	StatusInvCmdID        Status = 0x03 // ESME_RINVCMDID
	StatusInvBindStatus   Status = 0x04 // ESME_RINVBNDSTS
	StatusAlreadyBound    Status = 0x05 // ESME_RALYBND
	StatusSysErr          Status = 0x08 // ESME_RSYSERR
	StatusInvSrcAddr      Status = 0x0A // ESME_RINVSRCADR
	StatusInvDstAddr      Status = 0x0B // ESME_RINVDSTADR
	StatusInvMsgID        Status = 0x0C // ESME_RINVMSGID
	StatusBindFail        Status = 0x0D // ESME_RBINDFAIL
	StatusInvPassword     Status = 0x0E // ESME_RINVPASWD
	StatusInvSystemID     Status = 0x0F // ESME_RINVSYSID
	StatusMsgQueueFull    Status = 0x14 // ESME_RMSGQFUL
	StatusInvESMClass     Status = 0x43 // ESME_RINVESMCLASS
	StatusSubmitFail      Status = 0x45 // ESME_RSUBMITFAIL
	StatusInvSrcTON       Status = 0x48 // ESME_RINVSRCTON
	StatusInvDstTON       Status = 0x50 // ESME_RINVDSTTON
	StatusThrottled       Status = 0x58 // ESME_RTHROTTLED
	StatusRxTemporary     Status = 0x64 // ESME_RX_T_APPN: the receiver cannot take it now
	StatusRxPermanent     Status = 0x65 // ESME_RX_P_APPN: the receiver will never take it
	StatusRxReject        Status = 0x66 // ESME_RX_R_APPN
	StatusDeliveryFailure Status = 0xFE // ESME_RDELIVERYFAILURE
	StatusUnknownErr      Status = 0xFF // ESME_RUNKNOWNERR
)

var statusNames = map[Status]string{
	0x00: "ESME_ROK", 0x01: "ESME_RINVMSGLEN", 0x02: "ESME_RINVCMDLEN", 0x03: "ESME_RINVCMDID",
	0x04: "ESME_RINVBNDSTS", 0x05: "ESME_RALYBND", 0x06: "ESME_RINVPRTFLG", 0x07: "ESME_RINVREGDLVFLG",
	0x08: "ESME_RSYSERR", 0x0A: "ESME_RINVSRCADR", 0x0B: "ESME_RINVDSTADR", 0x0C: "ESME_RINVMSGID",
	0x0D: "ESME_RBINDFAIL", 0x0E: "ESME_RINVPASWD", 0x0F: "ESME_RINVSYSID", 0x11: "ESME_RCANCELFAIL",
	0x13: "ESME_RREPLACEFAIL", 0x14: "ESME_RMSGQFUL", 0x15: "ESME_RINVSERTYP", 0x33: "ESME_RINVNUMDESTS",
	0x34: "ESME_RINVDLNAME", 0x40: "ESME_RINVDESTFLAG", 0x42: "ESME_RINVSUBREP", 0x43: "ESME_RINVESMCLASS",
	0x44: "ESME_RCNTSUBDL", 0x45: "ESME_RSUBMITFAIL", 0x48: "ESME_RINVSRCTON", 0x49: "ESME_RINVSRCNPI",
	0x50: "ESME_RINVDSTTON", 0x51: "ESME_RINVDSTNPI", 0x53: "ESME_RINVSYSTYP", 0x54: "ESME_RINVREPFLAG",
	0x55: "ESME_RINVNUMMSGS", 0x58: "ESME_RTHROTTLED", 0x61: "ESME_RINVSCHED", 0x62: "ESME_RINVEXPIRY",
	0x63: "ESME_RINVDFTMSGID", 0x64: "ESME_RX_T_APPN", 0x65: "ESME_RX_P_APPN", 0x66: "ESME_RX_R_APPN",
	0x67: "ESME_RQUERYFAIL", 0xC0: "ESME_RINVOPTPARSTREAM", 0xC1: "ESME_ROPTPARNOTALLWD",
	0xC2: "ESME_RINVPARLEN", 0xC3: "ESME_RMISSINGOPTPARAM", 0xC4: "ESME_RINVOPTPARAMVAL",
	0xFE: "ESME_RDELIVERYFAILURE", 0xFF: "ESME_RUNKNOWNERR",
}

func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return fmt.Sprintf("%s (0x%08X)", n, uint32(s))
	}
	return fmt.Sprintf("command_status 0x%08X", uint32(s))
}

// Temporary reports whether the same PDU may succeed later: the SMSC is
// busy or failing (throttled, queue full, system error, submit failed,
// unknown error), or the session is in a wrong state (ESME_RINVBNDSTS,
// cured by binding again). Every other status, the vendor-specific ones
// included, is permanent: it says the PDU itself is refused, and sending
// it again is refused again.
func (s Status) Temporary() bool {
	switch s {
	case StatusInvBindStatus, StatusSysErr, StatusMsgQueueFull, StatusSubmitFail,
		StatusThrottled, StatusRxTemporary, StatusDeliveryFailure, StatusUnknownErr:
		return true
	}
	return false
}

// StatusError is a refusal by the SMSC: the response to Command carried
// Status.
type StatusError struct {
	Command CommandID // the request refused
	Status  Status
}

func (e *StatusError) Error() string {
	kind := "permanent"
	if e.Status.Temporary() {
		kind = "temporary"
	}
	return fmt.Sprintf("smpp: %s refused: %s (%s)", e.Command, e.Status, kind)
}

// Errors of Submit and Dial besides *StatusError. All are temporary
// except ErrInvalidMessage.
var (
	// ErrInvalidMessage: the message cannot be sent as it is (an
	// address or text this package refuses before sending). Permanent.
	ErrInvalidMessage = errors.New("smpp: invalid message")
	// ErrConnLost: the connection broke with the submit_sm in flight;
	// the SMSC may or may not have taken it.
	ErrConnLost = errors.New("smpp: connection lost")
	// ErrTimeout: no response within Config.ResponseTimeout; the SMSC
	// may or may not have taken the PDU.
	ErrTimeout = errors.New("smpp: no response in time")
	// ErrNotBound: no bound session within Config.ResponseTimeout (the
	// error says why the last attempt to bind failed); nothing was sent.
	ErrNotBound = errors.New("smpp: not bound")
	// ErrClosed: the Client is closed.
	ErrClosed = errors.New("smpp: client closed")
)

// IsPermanent reports whether err says that sending the same message
// again cannot succeed: a permanent command_status from the SMSC, or a
// message this package refuses (ErrInvalidMessage). Everything else
// (temporary statuses, connection loss, timeouts, a cancelled context)
// is temporary: send again, with the same Message.Ref.
func IsPermanent(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return !se.Status.Temporary()
	}
	return errors.Is(err, ErrInvalidMessage)
}
