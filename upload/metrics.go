package upload

import (
	"github.com/lodge-mail/lodge/pipeline"

	"fmt"

	"github.com/VictoriaMetrics/metrics"
)

// The upload interface's counters, on the metric set Options.Metrics (the
// server's, so that /metrics shows them; a private set when nil). Every
// label takes a value from a fixed list in this package:
//
//	lodge_upload_sessions_opened_total
//	lodge_upload_sessions_ended_total            end_session (or mpf_upload) accepted the mailing
//	lodge_upload_sessions_expired_total          timed out open, files deleted
//	lodge_upload_sessions_abandoned_total        a failed mpf_upload, files deleted
//	lodge_upload_files_received_total            files stored by PUT and mpf_upload (ZIP entries not counted)
//	lodge_upload_bytes_received_total            their bytes
//	lodge_upload_mailings_total{status}          mailings accepted: received, queued_auto
//	lodge_upload_letters_total{status}           letters accepted, by the status they were handed
//	                                             to the mailroom with: Received or Held
//	lodge_upload_documents_purged_total          mailings whose documents the retention period removed
//	lodge_upload_rejections_total{reason}        upload requests not answered 2xx, once each, by
//	                                             reason (rejectReasons)
type storeMetrics struct {
	sessionsOpened, sessionsEnded, sessionsExpired, sessionsAbandoned *metrics.Counter
	filesReceived, bytesReceived, documentsPurged                     *metrics.Counter

	mailings   map[string]*metrics.Counter // by mailing status
	letters    map[string]*metrics.Counter // by letter status
	rejections map[string]*metrics.Counter // by reason
}

// Reasons an upload request is not answered 2xx, the values of
// lodge_upload_rejections_total's reason label.
const (
	rejectBadRequest   = "bad_request"    // method, path, parameters, format, multipart framing
	rejectForbidden    = "forbidden"      // another account's session or account
	rejectNoSession    = "no_session"     // no such session
	rejectExpired      = "expired"        // the session expired
	rejectAbandoned    = "abandoned"      // the session was abandoned
	rejectFileName     = "file_name"      // a name refused (path, drive, no extension ...)
	rejectDuplicate    = "duplicate_name" // two mpf_upload parts of one name
	rejectFileType     = "file_type"      // extension not accepted, content not what it says, empty
	rejectTooLarge     = "too_large"      // a file or a multipart request over its limit
	rejectCutOff       = "cut_off"        // the body ended early or its connection failed
	rejectSessionEnded = "session_ended"  // a file for an ended session
	rejectNoSpace      = "no_space"       // the disk is short of space
	rejectMailing      = "mailing"        // end_session or mpf_upload found problems (errs)
	rejectBusy         = "busy"           // every page-counting slot taken
	rejectServerError  = "server_error"   // the server failed
)

var rejectReasons = []string{rejectBadRequest, rejectForbidden, rejectNoSession, rejectExpired, rejectAbandoned,
	rejectFileName, rejectDuplicate, rejectFileType, rejectTooLarge, rejectCutOff, rejectSessionEnded, rejectNoSpace,
	rejectMailing, rejectBusy, rejectServerError}

var (
	mailingStatuses = []string{PackReceived, PackQueuedAuto}
	letterStatuses  = []string{pipeline.Received, pipeline.Held} // as accepted: the mailroom moves them on
)

func newStoreMetrics(set *metrics.Set) *storeMetrics {
	if set == nil {
		set = metrics.NewSet()
	}
	m := &storeMetrics{
		sessionsOpened:    set.GetOrCreateCounter("lodge_upload_sessions_opened_total"),
		sessionsEnded:     set.GetOrCreateCounter("lodge_upload_sessions_ended_total"),
		sessionsExpired:   set.GetOrCreateCounter("lodge_upload_sessions_expired_total"),
		sessionsAbandoned: set.GetOrCreateCounter("lodge_upload_sessions_abandoned_total"),
		filesReceived:     set.GetOrCreateCounter("lodge_upload_files_received_total"),
		bytesReceived:     set.GetOrCreateCounter("lodge_upload_bytes_received_total"),
		documentsPurged:   set.GetOrCreateCounter("lodge_upload_documents_purged_total"),
		mailings:          labelled(set, "lodge_upload_mailings_total", "status", mailingStatuses),
		letters:           labelled(set, "lodge_upload_letters_total", "status", letterStatuses),
		rejections:        labelled(set, "lodge_upload_rejections_total", "reason", rejectReasons),
	}
	return m
}

// labelled makes one counter per value of a label, so that every series
// exists (at 0) from the start and no other value can make a new one.
func labelled(set *metrics.Set, name, label string, values []string) map[string]*metrics.Counter {
	out := make(map[string]*metrics.Counter, len(values))
	for _, v := range values {
		out[v] = set.GetOrCreateCounter(fmt.Sprintf("%s{%s=%q}", name, label, v))
	}
	return out
}

// add adds n to the counter of value in a labelled family; a value not
// in its list is a bug of this package and is not counted.
func add(family map[string]*metrics.Counter, value string, n int) {
	if c := family[value]; c != nil && n > 0 {
		c.Add(n)
	}
}
