package upload

import "time"

// EndResult is the answer to end_session, in the layout of the service in
// the field (../shared/docs/service-compat.md). Meanings this project
// gives the fields:
//
//	session_id  the EPID
//	result      "ok" when the mailing was accepted, "error" when it was not
//	status      "received" (letters recorded and queued for lodgement),
//	            "queued_auto" (no metadata or no letters: the auto
//	            processor will read the documents), "rejected" (problems
//	            below; the session stays open for corrected files, but
//	            mpf_upload's is abandoned: the request is sent again)
//	files       the files received, see File
//	error       a one-line summary of the problems, empty when none
//	errs        every problem, each "location: message"
type EndResult struct {
	SessionID string    `json:"session_id"`
	Result    string    `json:"result"`
	Status    string    `json:"status"`
	Files     []EndFile `json:"files"`
	Error     string    `json:"error"`
	Errs      []string  `json:"errs"`
	// Warnings are what the mailing was accepted despite (an extension:
	// absent when there are none), as "metadata file: path: message".
	Warnings []string `json:"warnings,omitempty"`
}

// EndFile is a file as end_session lists it.
type EndFile struct {
	Name     string  `json:"name"`
	Size     int64   `json:"sz"`
	Received int64   `json:"upld_sz"`
	Declared int64   `json:"cl_sz"`
	Chunks   int     `json:"chunks"`
	Intent   int     `json:"intent"`
	First    float64 `json:"first"`
	Last     float64 `json:"last"`
	Host     string  `json:"host"`  // the server that stored it
	APath    string  `json:"apath"` // where it came from: its name, or ARCHIVE!ENTRY for a file unpacked from a ZIP
	GPath    string  `json:"gpath"` // where it is kept: blobs/<epid>/<blob> under the upload directory
	SHA1     string  `json:"sha1"`
}

// Pack statuses.
const (
	PackReceived   = "received"
	PackQueuedAuto = "queued_auto"
	PackProcessed  = "processed"
)

// Pack is a mailing: what an ended session became.
type Pack struct {
	EPID     string    `json:"epid"`
	Account  string    `json:"account"`
	User     string    `json:"user"`
	Status   string    `json:"status"`
	CustHold bool      `json:"cust_hold,omitempty"`
	Title    string    `json:"title,omitempty"`
	Letters  int       `json:"letters"`
	Metadata string    `json:"metadata,omitempty"` // the metadata file's name
	Created  time.Time `json:"created"`
	Lodged   time.Time `json:"lodged,omitempty"`
	Settings []byte    `json:"settings,omitempty"` // the mailing attributes as parsed, JSON
}

// Letter statuses, as get_letter_status reports them. A letter is
// Received when its mailing is committed; the lodgement worker makes it
// Lodged or Held; cancel_letters makes a Received or Held letter
// Cancelled. LetterUnknown is never stored: it is what get_letter_status
// and cancel_letters report for a reference that matches no letter.
const (
	LetterReceived  = "Received"
	LetterHeld      = "Held"
	LetterLodged    = "Lodged"
	LetterCancelled = "Cancelled"
	LetterUnknown   = "Unknown"
)

// Letter is one letter of a mailing.
type Letter struct {
	EPID       string    `json:"epid"`
	Account    string    `json:"account"`
	Idx        int       `json:"idx"`
	Reference  string    `json:"ref,omitempty"`
	Status     string    `json:"status"`
	HoldReason string    `json:"hold_reason,omitempty"`
	Transport  []string  `json:"transport"` // channels in order of preference, primary first
	Postal     []string  `json:"postal,omitempty"`
	Email      string    `json:"email,omitempty"`
	SMS        string    `json:"sms,omitempty"`
	Fax        string    `json:"fax,omitempty"`
	Address    *Verdict  `json:"address,omitempty"` // the address check of the postal address
	Documents  []DocPart `json:"documents,omitempty"`
	Received   time.Time `json:"received_ts"`
	Lodged     time.Time `json:"lodged_ts,omitempty"`
	Cancelled  time.Time `json:"cancelled_ts,omitempty"` // when cancel_letters cancelled it
}

// Verdict is the address check of a letter's postal address.
type Verdict struct {
	Status  string `json:"status"`
	Nation  string `json:"nation"`
	Message string `json:"message,omitempty"`
}

// DocPart is a page range of an uploaded document used by a letter.
type DocPart struct {
	File       string `json:"file"`
	PageStart  int    `json:"page_start"`
	PageEnd    int    `json:"page_end"` // -1: to the end
	Attachment bool   `json:"attachment,omitempty"`
}
