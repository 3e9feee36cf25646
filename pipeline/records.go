package pipeline

import (
	"time"

	"github.com/segmentio/encoding/json"
)

// Letter statuses. A letter is Received when its mailing is committed; the
// check stage holds it (Held) or leaves it Received until its mailing's
// cancellation window ends; the batch stage puts it in a print batch
// (Processing); the operator marks the batch printed (Printed) and handed
// to the postal service (Lodged). Cancelled, Returned and Failed end a
// letter's life too. Unknown is never stored: it is what the status
// queries report for a reference that matches no letter.
const (
	Received   = "Received"
	Held       = "Held"
	Processing = "Processing"
	Printed    = "Printed"
	Lodged     = "Lodged"
	Cancelled  = "Cancelled"
	Returned   = "Returned"
	Failed     = "Failed"
	Unknown    = "Unknown"
)

// Statuses lists every stored letter status, in the order a letter passes
// them (the final ones last): the keys of per-status counts.
var Statuses = []string{Received, Held, Failover, Processing, Printed, Lodged, Delivered, Cancelled, Returned, Failed}

// Final reports whether a letter in status s will not be produced (again).
func Final(s string) bool {
	switch s {
	case Printed, Lodged, Delivered, Cancelled, Returned, Failed:
		return true
	}
	return false
}

// Hold kinds say who can lift a hold and how.
const (
	// HoldCustomer: the mailing's cust_hold; release_letters lifts it.
	HoldCustomer = "customer"
	// HoldAddress: the postal address is invalid; correct_letter lifts it
	// with an address that passes the check.
	HoldAddress = "address"
	// HoldWindow: the envelope window of the letter's first page does not
	// show the letter's address; correct_letter lifts it with the address
	// the window shows, or the letter is cancelled and sent again.
	HoldWindow = "window"
	// HoldDocument: the letter's document cannot be produced (a converter
	// refused it, pages missing); it is cancelled and sent again.
	HoldDocument = "document"
)

// Event is one entry of a letter's timeline.
type Event struct {
	Time   time.Time `json:"time"`
	Event  string    `json:"event"`
	Detail string    `json:"detail,omitempty"`
}

// Verdict is the address check of a letter's postal address.
type Verdict struct {
	Status  string `json:"status"`
	Nation  string `json:"nation"`
	Message string `json:"message,omitempty"`
}

// DocPart is a page range of a document used by a letter.
type DocPart struct {
	File       string `json:"file"`
	PageStart  int    `json:"page_start"`
	PageEnd    int    `json:"page_end"` // -1: to the end
	Attachment bool   `json:"attachment,omitempty"`
}

// Letter is one letter of a mailing.
type Letter struct {
	EPID      string `json:"epid"`
	Account   string `json:"account"`
	Idx       int    `json:"idx"`
	Reference string `json:"ref,omitempty"`
	Status    string `json:"status"`
	// Hold and HoldReason say why a Held letter is held (a Hold... kind
	// and a sentence for people).
	Hold       string   `json:"hold,omitempty"`
	HoldReason string   `json:"hold_reason,omitempty"`
	Channels   []string `json:"channels"` // postal, email, sms, fax: primary first
	Postal     []string `json:"postal,omitempty"`
	Email      string   `json:"email,omitempty"`
	SMS        string   `json:"sms,omitempty"`
	Fax        string   `json:"fax,omitempty"`
	// CustomData is the letter's custom_data (spec 2.7): template values
	// and the password of its PDF, which is deleted once the letter is
	// sent (it lives on only inside the encrypted PDF).
	CustomData map[string]string `json:"custom_data,omitempty"`
	// Send is its electronic send, once started; Failover says why it
	// left its electronic channel for post.
	Send     *Send         `json:"send,omitempty"`
	Failover *FailoverInfo `json:"failover,omitempty"`
	// Address is the engine's verdict on Postal.
	Address   *Verdict  `json:"address,omitempty"`
	Documents []DocPart `json:"documents,omitempty"`
	// Unaddressed: the document carries no address (spec section 1), so
	// production prints Postal in the envelope window.
	Unaddressed bool `json:"unaddressed,omitempty"`
	// Masks are areas of the letter's first page that production paints
	// white: the lines the auto processor read in the envelope window
	// that are for lodge, not for the postman (ref:, email:, fax:, sms:).
	Masks []Area `json:"masks,omitempty"`
	// CoverSheet: the address goes on a cover sheet before the letter
	// (its window area is not clear and the profile asks for one).
	CoverSheet bool `json:"cover_sheet,omitempty"`
	// Checked is set by the check stage; a corrected or released letter
	// is checked again.
	Checked bool `json:"checked,omitempty"`
	// Production facts, set by the check stage for postal letters.
	Pages    int    `json:"pages,omitempty"`
	Sheets   int    `json:"sheets,omitempty"`
	Envelope string `json:"envelope,omitempty"` // DL or C4
	Postage  string `json:"postage,omitempty"`  // priority or regular
	Postcode string `json:"postcode,omitempty"` // for the batch's sort order
	// Price in cents, from the account's price table.
	Price int64  `json:"price"`
	Batch string `json:"batch,omitempty"`
	Sheet int    `json:"first_sheet,omitempty"` // 1-based sheet of the batch its first page is on
	// Opens: the first and last openings of its email and its document
	// (opens.go).
	Opens
	// Received is when the mailing was committed.
	Received time.Time `json:"received_ts"`
	Events   []Event   `json:"events"`
}

// Add appends an event to the letter's timeline.
func (l *Letter) Add(at time.Time, event, detail string) {
	l.Events = append(l.Events, Event{Time: at, Event: event, Detail: detail})
}

// SetStatus moves the letter to status with an event of the same name.
func (l *Letter) SetStatus(at time.Time, status, detail string) {
	l.Status = status
	if status != Held {
		l.Hold, l.HoldReason = "", ""
	}
	l.Add(at, status, detail)
}

// HoldFor holds the letter for a reason of a kind (Hold...).
func (l *Letter) HoldFor(at time.Time, kind, reason string) {
	l.Status, l.Hold, l.HoldReason = Held, kind, reason
	l.Add(at, Held, reason)
}

// IsPostal reports whether the letter is produced on paper: its primary
// channel is post.
func (l *Letter) IsPostal() bool { return len(l.Channels) > 0 && l.Channels[0] == "postal" }

// Time returns when the letter last entered status s (zero when never).
func (l *Letter) Time(s string) time.Time {
	for i := len(l.Events) - 1; i >= 0; i-- {
		if l.Events[i].Event == s {
			return l.Events[i].Time
		}
	}
	return time.Time{}
}

// File is a document of a mailing as production reads it.
type File struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // pdf, ps, xps
	Path string `json:"path"` // absolute path of the uploaded bytes on the node that ended the session
	// Blob is the bytes' key in the upload store's blob store
	// (upload.BlobKey: blobs/<epid>/<blob>), which any node of several
	// reads; on one node, the path of the bytes under the upload
	// directory.
	Blob  string `json:"blob,omitempty"`
	Pages int    `json:"pages"`
	SHA1  string `json:"sha1,omitempty"`
}

// Production holds the print settings of a mailing, from its metadata and
// profiles.
type Production struct {
	Duplex  bool   `json:"duplex"`
	Colour  bool   `json:"colour"`
	ForceC4 bool   `json:"force_c4,omitempty"`
	Postage string `json:"postage"` // priority or regular
	// Background is the letterhead or background template document drawn
	// behind the letters' pages; BackgroundPages is "first" or "all".
	Background      string `json:"background,omitempty"`
	BackgroundPages string `json:"background_pages,omitempty"`
	// CoverSheet: an unaddressed letter whose first page's window area is
	// not clear gets an address cover sheet (else its address is printed
	// in the window area).
	CoverSheet bool   `json:"cover_sheet,omitempty"`
	Stock      string `json:"stock,omitempty"` // paper stock; "" the default
	// SplitPages and SplitMarker tell the auto processor where letters
	// start in a print stream: every SplitPages pages, or on each page
	// showing SplitMarker (default: where the address in the window
	// changes).
	SplitPages  int    `json:"split_pages,omitempty"`
	SplitMarker string `json:"split_marker,omitempty"`
}

// Mailing is what an ended session became.
type Mailing struct {
	EPID          string    `json:"epid"`
	Account       string    `json:"account"`
	User          string    `json:"user"`
	Created       time.Time `json:"created"`
	Title         string    `json:"title,omitempty"`
	Department    string    `json:"department,omitempty"`
	PurchaseOrder string    `json:"purchase_order,omitempty"`
	CustHold      bool      `json:"cust_hold,omitempty"`
	// Auto: the letters are to be read out of the documents (no metadata,
	// or metadata without letters).
	Auto       bool            `json:"auto,omitempty"`
	Settings   json.RawMessage `json:"settings,omitempty"` // the mailing attributes after profiles
	Production Production      `json:"production"`
	Files      []File          `json:"files,omitempty"`
	Letters    int             `json:"letters"`
	// Batches counts the print batches made of the mailing so far (it
	// numbers the next).
	Batches int `json:"batches,omitempty"`
	// ReleaseAt is when the cancellation window ends: production waits for
	// it.
	ReleaseAt time.Time `json:"release_at"`
	// Result is the end_session answer, kept so that an end_session
	// interrupted after the mailing was recorded finishes with it.
	Result json.RawMessage `json:"result,omitempty"`
	// Confirmations are the confirmation emails sent to customer_email
	// (confirmation_email): accepted, then done.
	Confirmations []Confirmation `json:"confirmations,omitempty"`
	// Documents are deleted after Expires (zero: not yet known).
	Expires time.Time `json:"expires,omitempty"`
	Purged  bool      `json:"purged,omitempty"`
}

// File returns the mailing's document name.
func (m *Mailing) File(name string) (File, bool) {
	for _, f := range m.Files {
		if f.Name == name {
			return f, true
		}
	}
	return File{}, false
}

// Batch states.
const (
	BatchComposing = "composing" // letters assigned, files being written
	BatchReady     = "ready"     // in the hot folder, released to the printer
	BatchPrinted   = "printed"
	BatchLodged    = "lodged"
	// BatchVoid: every letter of the batch was taken out of it (held:
	// their documents could not be read); nothing to print.
	BatchVoid = "void"
)

// Batch is a print batch: letters of one mailing sharing envelope, colour,
// duplex, postage class and stock, sorted by postcode.
type Batch struct {
	ID       string    `json:"id"`
	EPID     string    `json:"epid"`
	Account  string    `json:"account"`
	Created  time.Time `json:"created"`
	State    string    `json:"state"`
	Envelope string    `json:"envelope"`
	Postage  string    `json:"postage"`
	Colour   bool      `json:"colour"`
	Duplex   bool      `json:"duplex"`
	Stock    string    `json:"stock,omitempty"`
	Letters  []int     `json:"letters"` // letter indexes in print order
	Sheets   int       `json:"sheets"`
	Pages    int       `json:"pages"`
	Price    int64     `json:"price"`
	Dir      string    `json:"dir,omitempty"` // the batch's folder in the hot folder, once ready
	Ready    time.Time `json:"ready_ts,omitempty"`
	Printed  time.Time `json:"printed_ts,omitempty"`
	Lodged   time.Time `json:"lodged_ts,omitempty"`
	// Printer is the IPP job the batch was sent as, when a printer is
	// configured.
	Printer string `json:"printer,omitempty"`
}

// Job is a unit of queued work: a stage (Kind) for one mailing or batch
// (Key), due at a time.
type Job struct {
	Kind     string    `json:"kind"`
	Key      string    `json:"key"`
	Due      time.Time `json:"due"`
	Attempts int       `json:"attempts,omitempty"`
	Error    string    `json:"error,omitempty"` // the last failure
	// lease is the claim this job was handed out under; zero for a job
	// not claimed.
	lease uint64
}
