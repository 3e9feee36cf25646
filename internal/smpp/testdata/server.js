// An SMPP 3.4 server for lodge's tests, on the npm package smpp (MIT,
// pinned by npm/package-lock.json; internal/smpp/smpptest installs it and
// runs this script with NODE_PATH set to its node_modules).
//
//   node server.js --records FILE --system-id ID --password PW
//                  [--fd N] [--enquire-link-ms MS] [--submit-delay-ms MS]
//
// It listens on the inherited socket N (the Go helper binds 127.0.0.1:0
// and passes it, so a restarted server keeps the address) or else on
// 127.0.0.1 port 0, and prints "listening PORT" on stdout once it
// accepts connections.
//
// It takes bind_transceiver with that system_id and password (else
// ESME_RINVSYSID or ESME_RINVPASWD), answers enquire_link and unbind,
// sends an enquire_link every MS milliseconds when asked, and answers
// submit_sm with a message id, reassembling nothing (MS milliseconds
// later when --submit-delay-ms is set: a distant SMSC's latency). Every event is one
// JSON line appended to FILE before the answer is sent (so a client that
// has the answer finds the line): kind "bind", "submit_sm" (the fields
// read from the PDU's own bytes: short_message and TLV values in hex),
// "deliver_sm_resp", "enquire_link" (the client's), "enquire_link_resp"
// (answers to the server's), "unbind", "error".
//
// A submit_sm with registered_delivery gets a delivery receipt
// (deliver_sm, esm_class 0x04, the standard text and the
// receipted_message_id and message_state TLVs) right after its answer.
// The destination number chooses a failure:
//
//   61400000001  ESME_RINVDSTADR (permanent)
//   61400000002  ESME_RTHROTTLED the first time this process sees it
//   61400000003  no answer at all
//   61400000004  accepted; the receipt says UNDELIV, err:001
//   61400000005  ESME_RSYSERR, always
'use strict';

const fs = require('fs');
const crypto = require('crypto');
const smpp = require('smpp');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) {
	const k = process.argv[i], v = process.argv[i + 1];
	if (!k.startsWith('--') || v === undefined) {
		console.error('usage: node server.js --records FILE --system-id ID --password PW [--fd N] [--enquire-link-ms MS] [--submit-delay-ms MS]');
		process.exit(2);
	}
	args[k.slice(2)] = v;
}
for (const k of ['records', 'system-id', 'password']) {
	if (args[k] === undefined) {
		console.error('server.js: --' + k + ' is needed');
		process.exit(2);
	}
}

const out = fs.openSync(args.records, 'a');
function record(obj) {
	fs.writeSync(out, JSON.stringify(obj) + '\n');
}

// The library decodes short_message by data_coding into text; the
// records keep the octets, so every PDU keeps the bytes it came in.
const PDU = smpp.PDU;
PDU.fromStream = function (stream, commandLength) {
	const rest = stream.read(commandLength - 4);
	if (!rest) {
		return false;
	}
	const head = Buffer.alloc(4);
	head.writeUInt32BE(commandLength, 0);
	const raw = Buffer.concat([head, rest]);
	const pdu = new PDU(raw);
	Object.defineProperty(pdu, 'raw', {value: raw, enumerable: false});
	return pdu;
};

// readSM reads submit_sm's fields from its bytes (SMPP 3.4 §4.4.1).
function readSM(b) {
	let o = 16;
	const cstr = () => {
		const e = b.indexOf(0, o);
		if (e < 0) {
			throw new Error('unterminated string at ' + o);
		}
		const s = b.toString('latin1', o, e);
		o = e + 1;
		return s;
	};
	const u8 = () => b[o++];
	const r = {};
	r.service_type = cstr();
	r.source_addr_ton = u8();
	r.source_addr_npi = u8();
	r.source_addr = cstr();
	r.dest_addr_ton = u8();
	r.dest_addr_npi = u8();
	r.destination_addr = cstr();
	r.esm_class = u8();
	r.protocol_id = u8();
	r.priority_flag = u8();
	r.schedule_delivery_time = cstr();
	r.validity_period = cstr();
	r.registered_delivery = u8();
	r.replace_if_present_flag = u8();
	r.data_coding = u8();
	r.sm_default_msg_id = u8();
	const n = u8();
	r.short_message = b.toString('hex', o, o + n);
	o += n;
	r.tlvs = [];
	while (o + 4 <= b.length) {
		const tag = b.readUInt16BE(o), len = b.readUInt16BE(o + 2);
		r.tlvs.push({tag: tag, value: b.toString('hex', o + 4, o + 4 + len)});
		o += 4 + len;
	}
	return r;
}

function smscDate(d) {
	const p = (n) => String(n).padStart(2, '0');
	return p(d.getUTCFullYear() % 100) + p(d.getUTCMonth() + 1) + p(d.getUTCDate()) + p(d.getUTCHours()) + p(d.getUTCMinutes());
}

const tag = crypto.randomBytes(3).toString('hex'); // ids stay unique across restarts
let lastID = 0;
const throttled = new Set();

const server = smpp.createServer(function (session) {
	let bound = false;
	let timer = null;
	session.on('error', function (e) {
		record({kind: 'error', error: String(e && e.message || e)});
		session.destroy();
	});
	session.on('close', function () {
		if (timer) {
			clearInterval(timer);
		}
	});
	session.on('bind_transceiver', function (pdu) {
		let status = 0;
		if (pdu.system_id !== args['system-id']) {
			status = smpp.ESME_RINVSYSID;
		} else if (pdu.password !== args.password) {
			status = smpp.ESME_RINVPASWD;
		}
		record({kind: 'bind', system_id: pdu.system_id, system_type: pdu.system_type,
			interface_version: pdu.interface_version, status: status});
		if (status) {
			session.send(pdu.response({command_status: status}));
			session.close();
			return;
		}
		bound = true;
		session.send(pdu.response({system_id: 'lodge-test'}));
		if (args['enquire-link-ms']) {
			timer = setInterval(function () { session.enquire_link(); }, Number(args['enquire-link-ms']));
		}
	});
	session.on('enquire_link', function (pdu) {
		record({kind: 'enquire_link', seq: pdu.sequence_number});
		session.send(pdu.response());
	});
	session.on('enquire_link_resp', function (pdu) {
		record({kind: 'enquire_link_resp', seq: pdu.sequence_number, status: pdu.command_status});
	});
	session.on('deliver_sm_resp', function (pdu) {
		record({kind: 'deliver_sm_resp', seq: pdu.sequence_number, status: pdu.command_status});
	});
	session.on('unbind', function (pdu) {
		record({kind: 'unbind'});
		session.send(pdu.response());
		session.close();
	});
	session.on('unknown', function (pdu) {
		session.send(pdu.response()); // generic_nack, ESME_RINVCMDID
	});
	session.on('submit_sm', function (pdu) {
		const r = readSM(pdu.raw);
		r.kind = 'submit_sm';
		r.seq = pdu.sequence_number;
		r.status = 0;
		let answered = true;
		if (!bound) {
			r.status = smpp.ESME_RINVBNDSTS;
		} else {
			switch (r.destination_addr) {
			case '61400000001':
				r.status = smpp.ESME_RINVDSTADR;
				break;
			case '61400000002':
				if (!throttled.has(r.destination_addr)) {
					throttled.add(r.destination_addr);
					r.status = smpp.ESME_RTHROTTLED;
				}
				break;
			case '61400000003':
				answered = false;
				break;
			case '61400000005':
				r.status = smpp.ESME_RSYSERR;
				break;
			}
		}
		if (answered && r.status === 0) {
			r.message_id = tag + '-' + (++lastID).toString(16);
		}
		record(r);
		if (!answered) {
			return;
		}
		const delay = Number(args['submit-delay-ms'] || 0);
		if (delay > 0) {
			setTimeout(function () { answer(session, pdu, r); }, delay);
		} else {
			answer(session, pdu, r);
		}
	});
});

// answer answers a submit_sm, then sends its receipt when asked.
function answer(session, pdu, r) {
	if (r.status) {
		session.send(pdu.response({command_status: r.status}));
		return;
	}
	session.send(pdu.response({message_id: r.message_id}));
	if (!(r.registered_delivery & 1)) {
		return;
	}
	const undelivered = r.destination_addr === '61400000004';
	const now = smscDate(new Date());
	const text = 'id:' + r.message_id + ' sub:001 dlvrd:' + (undelivered ? '000' : '001') +
		' submit date:' + now + ' done date:' + now + ' stat:' + (undelivered ? 'UNDELIV' : 'DELIVRD') +
		' err:' + (undelivered ? '001' : '000') + ' text:';
	session.deliver_sm({
		source_addr_ton: r.dest_addr_ton, source_addr_npi: r.dest_addr_npi, source_addr: r.destination_addr,
		dest_addr_ton: r.source_addr_ton, dest_addr_npi: r.source_addr_npi, destination_addr: r.source_addr,
		esm_class: 0x04,
		short_message: Buffer.from(text, 'latin1'),
		receipted_message_id: r.message_id,
		message_state: undelivered ? 5 : 2,
	});
}

server.on('error', function (e) {
	console.error('server.js: ' + e.message);
	process.exit(1);
});

function listening() {
	console.log('listening ' + server.address().port);
}
if (args.fd !== undefined) {
	server.listen({fd: Number(args.fd)}, listening);
} else {
	server.listen(0, '127.0.0.1', listening);
}
process.on('SIGTERM', function () { process.exit(0); });
