package upload

// RecentUploadsDoc is the OpenRPC method object of recent_uploads, which
// rpc.discover lists. (The letters' methods are the mailroom's:
// package pipeline.)
const (
	RecentUploadsDoc = `{"name":"recent_uploads","summary":"The account's upload sessions, newest first.","paramStructure":"by-name",` +
		`"params":[` +
		`{"name":"account","required":true,"description":"The account code; the credentials must be for it.","schema":{"type":"string"}},` +
		`{"name":"limit","required":false,"description":"How many sessions, 1 to 1,000 (default 20).","schema":{"type":"integer","minimum":1,"maximum":1000}},` +
		`{"name":"before","required":false,"description":"A session of the account: list those created before it (the last epid of one answer gives the next page).","schema":{"type":"string"}}],` +
		`"result":{"name":"result","schema":{"type":"object","required":["uploads"],"properties":{"uploads":{"type":"array","items":{"type":"object","properties":{` +
		`"epid":{"type":"string"},` +
		`"status":{"type":"string","description":"open, expired, abandoned (a failed mpf_upload), or once ended the status all the mailing's letters share in lower case (received, lodged, held, cancelled ...), mixed when they differ, queued_auto for a mailing without letters"},` +
		`"created_ts":{"type":"number","description":"Unix time the session was opened"},` +
		`"ended_ts":{"type":["number","null"],"description":"Unix time end_session ended it; null while open"},` +
		`"files":{"type":"integer"},` +
		`"letters":{"type":"object","additionalProperties":{"type":"integer"},"description":"The mailing's letters counted by status (Received, Held, Lodged, Cancelled ...); a status no letter has is absent"}}}}}}},` +
		`"errors":[{"code":-32602,"message":"invalid params: missing account, another account, a bad limit or an unknown before"}]}`
)
