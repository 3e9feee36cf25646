package rpc

// openRPC is the OpenRPC document rpc.discover returns.
var openRPC = []byte(`{"openrpc":"1.2.6","info":{"title":"lodge address check","version":"1.0.0",` +
	`"description":"Australian postal address check (JSON-RPC 2.0). Each address is an array of 3 to 6 strings or one string of lines separated by newlines (or commas)."},` +
	`"methods":[` +
	`{"name":"addr_check","summary":"Check one or more postal addresses.","paramStructure":"by-name",` +
	`"params":[` +
	`{"name":"address","required":false,"description":"One address: an array of lines or a string. Give this or addresses.","schema":{"$ref":"#/components/schemas/Address"}},` +
	`{"name":"addresses","required":false,"description":"Several addresses (at most 10,000 by default), forms may be mixed. Give this or address.","schema":{"type":"array","items":{"$ref":"#/components/schemas/Address"}}},` +
	`{"name":"detail","required":false,"description":"Extension: add the parsed components, granularity, suggestion and fault codes to each result.","schema":{"type":"boolean"}}],` +
	`"result":{"name":"result","description":"One result for address; an array in request order for addresses.","schema":{"oneOf":[{"$ref":"#/components/schemas/Result"},{"type":"array","items":{"$ref":"#/components/schemas/Result"}}]}},` +
	`"errors":[{"code":-32602,"message":"invalid params: both, neither or a wrong type of address/addresses, or too many addresses"}]},` +
	`{"name":"rpc.discover","summary":"This document.","params":[],"result":{"name":"openrpc","schema":{"type":"object"}}}],` +
	`"components":{"schemas":{` +
	`"Address":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"},"minItems":1}]},` +
	`"Result":{"type":"object","required":["status","nation","address"],"properties":{` +
	`"status":{"type":"string","enum":["matched","unmatched","invalid","international"]},` +
	`"nation":{"type":"string","description":"ISO 3166-1 alpha-3; AUS for domestic addresses"},` +
	`"address":{"description":"The submitted address, byte for byte, in its submitted form (bytes that are not UTF-8 and lone surrogate escapes are written \\ufffd)"},` +
	`"message":{"type":"string","description":"What is wrong; present when status is invalid"},` +
	`"detail":{"type":"object","description":"Present when detail was asked for"}}}}}}`)
