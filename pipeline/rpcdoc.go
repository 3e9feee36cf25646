package pipeline

// OpenRPC method objects of the mailroom's JSON-RPC methods, which
// rpc.discover lists.

const letterStatusEnum = `["Unknown","Received","Held","Processing","Printed","Lodged","Cancelled","Returned","Failed"]`

const statusDescription = `Received: accepted, being checked or within its cancellation window; Held: waiting for the customer (hold_reason says why); ` +
	`Processing: in a print batch; Printed; Lodged: handed to the postal service; Cancelled; Returned; Failed. ` +
	`Unknown, Received, Lodged, Cancelled and Returned are the service in the field's; Held, Processing, Printed and Failed are this service's additions.`

const selectionParams = `{"name":"account","required":true,"description":"The account code; the credentials must be for it.","schema":{"type":"string"}},` +
	`{"name":"refs","required":false,"description":"Letter references (up to 1,000): every letter of the account with one of them.","schema":{"type":"array","items":{"type":"string"},"maxItems":1000}},` +
	`{"name":"session_id","required":false,"description":"A mailing (EPID): its letters, or those of letters.","schema":{"type":"string"}},` +
	`{"name":"letters","required":false,"description":"Indexes of letters of session_id (from 0); none: all of them.","schema":{"type":"array","items":{"type":"integer","minimum":0},"maxItems":10000}}`

const outcomesResult = `"result":{"name":"result","schema":{"type":"object","required":["letters"],"properties":{"letters":{"type":"array","items":{"type":"object","properties":{` +
	`"epid":{"type":"string"},"ref":{"type":"string"},"idx":{"type":"integer","description":"-1 for a ref that matches no letter"},` +
	`"status":{"type":"string","enum":` + letterStatusEnum + `,"description":"After the call"},` +
	`"changed":{"type":"boolean","description":"True when this call changed the letter"},` +
	`"why":{"type":"string","description":"Why the call did not apply to the letter"}}}}}}}`

const paramErrors = `"errors":[{"code":-32602,"message":"invalid params: another account, a mailing that is not the account's, a letter index out of range, or a malformed request"}]`

const (
	GetLetterStatusDoc = `{"name":"get_letter_status","summary":"Status of the account's letters with the given references.","paramStructure":"by-name",` +
		`"params":[{"name":"account","required":true,"schema":{"type":"string"}},` +
		`{"name":"refs","required":true,"description":"1 to 1,000 letter references.","schema":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":1000}}],` +
		`"result":{"name":"result","schema":{"type":"object","required":["letters"],"properties":{"letters":{"type":"array",` +
		`"description":"For each ref in order, every letter of the account with that reference, oldest mailing first; a ref that matches no letter gives one entry with only ref and status Unknown.",` +
		`"items":{"type":"object","required":["ref","status"],"properties":{` +
		`"epid":{"type":"string"},"ref":{"type":"string"},` +
		`"status":{"type":"string","enum":` + letterStatusEnum + `,"description":"` + statusDescription + `"},` +
		`"idx":{"type":"integer","description":"The letter's position in its mailing, from 0"},` +
		`"received_ts":{"type":"number","description":"Unix time the mailing was received"},` +
		`"transport":{"description":"POST, EMAIL, SMS or FAX; an array when the letter has several channels, primary first","oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]},` +
		`"price":{"type":"number","description":"The letter's price in dollars (0 until it is checked)"},` +
		`"dbid":{"type":"integer","description":"The letter's stable numeric identifier"},` +
		`"lodged_ts":{"type":"number","description":"Unix time the letter was handed to the postal service"},` +
		`"email_first_opened":{"type":"number","description":"Unix time the email's tracking image was first fetched"},"email_last_opened":{"type":"number","description":"Unix time it was last fetched (recorded once a minute at most)"},` +
		`"doc_first_opened":{"type":"number","description":"Unix time the link to the letter's PDF was first followed"},"doc_last_opened":{"type":"number","description":"Unix time it was last followed (recorded once a minute at most)"},` +
		`"hold":{"type":"string","enum":["customer","address","window","document","channel"]},"hold_reason":{"type":"string"},` +
		`"address":{"type":"object","description":"The postal address's verdict"},"batch":{"type":"string","description":"The print batch"}}}}}}},` +
		paramErrors + `}`

	CancelLettersDoc = `{"name":"cancel_letters","summary":"Cancel letters that are not yet in a print batch.","paramStructure":"by-name",` +
		`"description":"Every selected letter that is Received or Held (within its cancellation window, by default an hour after end_session, or held) becomes Cancelled, all in one durable commit; the others are reported with why not.",` +
		`"params":[` + selectionParams + `],` + outcomesResult + `,` + paramErrors + `}`

	ReleaseLettersDoc = `{"name":"release_letters","summary":"Release letters held by the customer (cust_hold).","paramStructure":"by-name",` +
		`"description":"Every selected letter held by the customer's hold goes ahead (its cancellation window still applies); releasing a whole mailing (session_id without letters) also ends its cust_hold. Letters held for another reason stay held and are reported with it.",` +
		`"params":[` + selectionParams + `],` + outcomesResult + `,` + paramErrors + `}`

	CorrectLetterDoc = `{"name":"correct_letter","summary":"Replace the postal address of a letter held for its address.","paramStructure":"by-name",` +
		`"description":"The new address is checked with addr_check's engine; when it is not invalid the letter's address is replaced and it goes ahead (checked again, the envelope window included); otherwise nothing changes. Only a letter held for an invalid address or a window that shows another address can be corrected.",` +
		`"params":[{"name":"account","required":true,"schema":{"type":"string"}},` +
		`{"name":"session_id","required":false,"schema":{"type":"string"}},{"name":"letter","required":false,"description":"Index of the letter in session_id","schema":{"type":"integer","minimum":0}},` +
		`{"name":"ref","required":false,"description":"Instead of session_id and letter: the letter's reference","schema":{"type":"string"}},` +
		`{"name":"postal","required":true,"description":"The new address: lines separated by newlines, or an array of lines","schema":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}}],` +
		`"result":{"name":"result","schema":{"type":"object","properties":{"verdict":{"type":"object","description":"The new address's verdict (status, nation, message)"},"letters":{"type":"array","items":{"type":"object"}}}}},` +
		paramErrors + `}`

	GetMailingDoc = `{"name":"get_mailing","summary":"A mailing: its settings, counts per status and its letters, paged.","paramStructure":"by-name",` +
		`"params":[{"name":"account","required":true,"schema":{"type":"string"}},` +
		`{"name":"session_id","required":true,"description":"The mailing's EPID","schema":{"type":"string"}},` +
		`{"name":"from","required":false,"description":"First letter index of the page (default 0)","schema":{"type":"integer","minimum":0}},` +
		`{"name":"limit","required":false,"description":"Letters in the page, 1 to 1,000 (default 100)","schema":{"type":"integer","minimum":1,"maximum":1000}}],` +
		`"result":{"name":"result","schema":{"type":"object","properties":{` +
		`"epid":{"type":"string"},"created_ts":{"type":"number"},"cancellable_until_ts":{"type":"number","description":"End of the cancellation window"},` +
		`"settings":{"type":"object","description":"The mailing attributes, after profiles"},"production":{"type":"object"},"files":{"type":"array"},` +
		`"letters_total":{"type":"integer"},"counts":{"type":"object","description":"Letters per status"},` +
		`"letters":{"type":"array","items":{"type":"object","description":"idx, ref, status, hold, hold_reason, channels, postal (as given), email, sms, fax, verdict, unaddressed, send ({channel, id, attempts, started, done, detail}: an email, SMS or fax send), failover ({from, reason, ts}), masks ([{x, y, w, h}] in mm from the top-left of the first page: the auto processor's ref:, email:, fax:, sms: lines, painted white in print), documents, pages, sheets, envelope, postage, price, batch, dbid, events [{ts, time, event, detail}]"}},` +
		`"next":{"type":["integer","null"],"description":"from of the next page; null after the last"}}}},` +
		paramErrors + `}`
)
