package upload

// EndResult is the answer to end_session, in the layout of the service in
// the field (../shared/docs/service-compat.md). Meanings this project
// gives the fields:
//
//	session_id  the EPID
//	result      "ok" when the mailing was accepted, "error" when it was not
//	status      "received" (the letters are the mailroom's: see
//	            get_mailing and get_letter_status),
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
	APath    string  `json:"apath"` // where it came from: its name, ARCHIVE!ENTRY for a file unpacked from a ZIP, portal!NAME for a copy of a library document the metadata names
	GPath    string  `json:"gpath"` // where it is kept: blobs/<epid>/<blob> under the upload directory
	SHA1     string  `json:"sha1"`
}

// Mailing statuses, as end_session answers them (status) for an accepted
// mailing.
const (
	PackReceived   = "received"    // letters recorded: the mailroom has them
	PackQueuedAuto = "queued_auto" // no letters: the auto processor reads the documents
)
