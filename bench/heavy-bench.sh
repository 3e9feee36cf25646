#!/usr/bin/env bash
# heavy-bench.sh: what large JSON-RPC requests do to lodge's memory and to
# a small client's latency.
#
# It builds ./cmd/lodge, ./bench/loadgen and ./bench/heavyload into a
# temporary directory, starts
#
#   lodge serve -demo -addr 127.0.0.1:0 -data-dir TMP/data $LODGE_SERVE_ARGS
#
# and, at once:
#   - bench/loadgen as a small client: single addresses at HEAVY_RATE
#     requests a second (open-loop) over 4 connections;
#   - after 3 s, bench/heavyload: HEAVY_CONNS connections each sending
#     addr_check calls of HEAVY_ADDRESSES long addresses (six lines of about
#     100 characters), one after another, honouring Retry-After, while it
#     samples lodge's resident memory.
#
# It prints heavyload's JSON (requests by status, their latency, lodge's
# RSS at the start and at its peak), loadgen's JSON (the small client's
# latency meanwhile) and lodge's VmHWM, one per line. Run it from anywhere
# in the repository, with ../shared/data beside it:
#
#   bench/heavy-bench.sh
#   LODGE_SERVE_ARGS='-large-rpc-workers 2' bench/heavy-bench.sh
#
# Environment (defaults in brackets): HEAVY_CONNS [24], HEAVY_ADDRESSES
# [10000], HEAVY_DURATION [20s], HEAVY_RATE [200], LODGE_SERVE_ARGS,
# LODGE_BIN (a lodge binary to measure instead of building ./cmd/lodge:
# another version, for a before and after), BENCH_KEEP=1 to keep the
# temporary directory.
# Requirements: go.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

CONNS=${HEAVY_CONNS:-24}
ADDRESSES=${HEAVY_ADDRESSES:-10000}
DURATION=${HEAVY_DURATION:-20s}
RATE=${HEAVY_RATE:-200}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/lodge-heavy.XXXXXX")
PID=
cleanup() {
	if [ -n "$PID" ]; then
		kill "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
	fi
	if [ "${BENCH_KEEP:-}" = 1 ]; then
		echo "heavy-bench: kept $TMP" >&2
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT

go build -o "$TMP/" ./bench/loadgen ./bench/heavyload
LODGE=${LODGE_BIN:-$TMP/lodge}
[ -n "${LODGE_BIN:-}" ] || go build -o "$LODGE" ./cmd/lodge
# shellcheck disable=SC2086 # LODGE_SERVE_ARGS is word-split on purpose
"$LODGE" serve -demo -addr 127.0.0.1:0 -data-dir "$TMP/data" ${LODGE_SERVE_ARGS:-} >"$TMP/lodge.log" 2>&1 &
PID=$!
until grep -q 'msg=serving' "$TMP/lodge.log"; do
	if ! kill -0 "$PID" 2>/dev/null; then
		cat "$TMP/lodge.log" >&2
		echo "heavy-bench: lodge exited" >&2
		exit 2
	fi
	sleep 0.2
done
addr=$(grep -o 'msg=serving https=[0-9.:]*' "$TMP/lodge.log" | head -n 1 | sed 's/.*https=//')
key=$(grep -o 'Bearer lk_[A-Za-z0-9_-]*' "$TMP/lodge.log" | tail -n 1)
url=https://$addr/apiv2/jsonrpc

"$TMP/loadgen" -url "$url" -auth "$key" -conns 4 -batch 1 -rate "$RATE" -duration "$DURATION" -warmup 5s >"$TMP/small.json" 2>"$TMP/small.err" &
small=$!
sleep 3
"$TMP/heavyload" -url "$url" -auth "$key" -conns "$CONNS" -addresses "$ADDRESSES" -duration "$DURATION" -pid "$PID"
wait "$small" || {
	cat "$TMP/small.err" >&2
	exit 1
}
cat "$TMP/small.json"
grep VmHWM "/proc/$PID/status"
