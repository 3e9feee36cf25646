package upload

// OpenRPC method objects of the upload interface's JSON-RPC methods, which
// rpc.discover lists; they describe GetLetterStatus, CancelLetters and
// RecentUploads.
const (
	GetLetterStatusDoc = `{"name":"get_letter_status","summary":"Status of the account's letters with the given references.","paramStructure":"by-name",` +
		`"params":[` +
		`{"name":"account","required":true,"description":"The account code; the credentials must be for it.","schema":{"type":"string"}},` +
		`{"name":"refs","required":true,"description":"1 to 1,000 letter references (the metadata field reference).","schema":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":1000}}],` +
		`"result":{"name":"result","schema":{"type":"object","required":["letters"],"properties":{"letters":{"type":"array",` +
		`"description":"For each ref in order, every letter of the account with that reference, oldest mailing first; a ref that matches no letter gives one entry with only ref and status Unknown.",` +
		`"items":{"type":"object","required":["ref","status"],"properties":{` +
		`"epid":{"type":"string","description":"The session (mailing) the letter belongs to"},` +
		`"ref":{"type":"string"},` +
		`"status":{"type":"string","enum":["Unknown","Received","Held","Lodged","Cancelled"],"description":"Unknown: no letter of the account has this reference"},` +
		`"idx":{"type":"integer","description":"The letter's position in its mailing's metadata, from 0"},` +
		`"received_ts":{"type":"number","description":"Unix time the mailing was received"},` +
		`"transport":{"description":"POST, EMAIL, SMS or FAX; an array when the letter goes by several","oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]},` +
		`"hold_reason":{"type":"string","description":"Why the letter is held"},` +
		`"address":{"type":"object","description":"The postal address's verdict (status, nation, message)"}}}}}}},` +
		`"errors":[{"code":-32602,"message":"invalid params: missing account or refs, another account, or more than 1,000 refs"}]}`
	CancelLettersDoc = `{"name":"cancel_letters","summary":"Cancel the account's letters with the given references that are not yet lodged.","paramStructure":"by-name",` +
		`"description":"Every letter of the account with one of the references whose status is Received or Held becomes Cancelled, all in one durable commit; letters already Lodged or Cancelled are left as they are and reported.",` +
		`"params":[` +
		`{"name":"account","required":true,"description":"The account code; the credentials must be for it.","schema":{"type":"string"}},` +
		`{"name":"refs","required":true,"description":"1 to 1,000 letter references (the metadata field reference); a reference given twice counts once.","schema":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":1000}}],` +
		`"result":{"name":"result","schema":{"type":"object","required":["letters"],"properties":{"letters":{"type":"array",` +
		`"description":"For each ref in order, every letter of the account with that reference, oldest mailing first; a ref that matches no letter gives one entry with status Unknown.",` +
		`"items":{"type":"object","required":["ref","status","cancelled"],"properties":{` +
		`"epid":{"type":"string","description":"The session (mailing) the letter belongs to"},` +
		`"ref":{"type":"string"},` +
		`"idx":{"type":"integer","description":"The letter's position in its mailing's metadata, from 0"},` +
		`"status":{"type":"string","enum":["Unknown","Lodged","Cancelled"],"description":"The letter's status after the call; Unknown: no letter of the account has this reference"},` +
		`"cancelled":{"type":"boolean","description":"True when this call cancelled the letter"}}}}}}},` +
		`"errors":[{"code":-32602,"message":"invalid params: missing account or refs, another account, or more than 1,000 refs"}]}`
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
