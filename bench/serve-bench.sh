#!/usr/bin/env bash
# serve-bench.sh: lodge's performance check, measured side by side with a
# baseline so that a shared, noisy machine still gives comparable figures.
#
# It builds ./cmd/lodge, ./bench/baseline and ./bench/loadgen into a
# temporary directory, starts
#
#   lodge serve -demo -addr 127.0.0.1:PORT -data-dir TMP/data
#
# and the baseline (a minimal fasthttp server over HTTPS answering one fixed
# JSON-RPC result, see bench/baseline), and drives both with bench/loadgen
# over keep-alive HTTPS connections, sending both the same requests with
# the same Authorization header:
#
#   1. single addresses (-batch 1) at the maximum rate, lodge and baseline
#      taking turns, BENCH_ROUNDS times (lodge first in odd rounds, baseline
#      first in even ones), so that both see the same noise; the figure
#      judged is the median of the rounds' ratios, so that one round upset
#      by a burst of other work on the machine does not decide;
#   2. batches of 100 addresses at the maximum rate, lodge then baseline
#      (the baseline's figure is for reference: it sends a small fixed
#      answer, not 100 verdicts);
#   3. single addresses at half of lodge's mean maximum rate, open-loop
#      (-rate), lodge and baseline taking turns, BENCH_ROUNDS times as in
#      1, for the latency at half load; the figure judged is the median of
#      lodge's p99 over the rounds (one 10 s run's p99 is decided by its
#      worst 0.1 s or so: a single burst of other work on a shared
#      machine, which the baseline's p99 in the same run shows too).
#
# It prints loadgen's figures on stderr as it goes and, on stdout, a JSON
# summary: the ratios lodge/baseline, every run, and PASS or FAIL against
# the targets:
#
#   single addresses:   lodge rps / baseline rps  >= 0.85
#   batches of 100:     lodge addresses/s         >= 300,000
#   half load, single:  lodge p99                 <= 1 ms (median of rounds)
#   and no errors in any lodge run.
#
# With BENCH_MODE=distinct it measures instead what no cache can help:
# batches of 100 addresses drawn from a pool of BENCH_POOL (default
# 1,000,000) distinct addresses that bench/gnafgen generated, lodge having
# imported that release (lodge import gnaf) so that each is matched at
# premise level. It generates and imports them itself (about 30 s for a
# million), or takes BENCH_GNAF_LIST (a gnafgen -list CSV) with
# LODGE_DATA_DIR (a data directory where that release is imported, the
# full-scale one for instance). Lodge and the baseline take turns,
# BENCH_ROUNDS times; the figure judged is the median of lodge's rounds:
#
#   distinct batches of 100:  lodge addresses/s   >= 500,000
#   and no errors in any lodge run.
#
# Exit status: 0 PASS, 1 FAIL, 2 could not run. Servers it started are
# stopped on exit, whatever the cause.
#
# Run it from anywhere in the repository, with ../shared/data beside it
# (loadgen draws its addresses from there, through internal/testref):
#
#   bench/serve-bench.sh > bench-result.json
#
# Environment (defaults in brackets):
#   BENCH_DURATION       measured time of each loadgen run [10s]
#   BENCH_WARMUP         unmeasured load before it [2s]
#   BENCH_CONNS          keep-alive connections for single addresses [64]
#   BENCH_BATCH_CONNS    connections for batches of 100 [16]
#   BENCH_ROUNDS         rounds of the side-by-side single-address runs (maximum rate, half load) [3]
#   BENCH_MODE           "" (the runs above) or distinct [""]
#   BENCH_POOL           distinct addresses loadgen cycles through [10000;
#                        distinct mode 1000000]
#   BENCH_GNAF_LIST      distinct mode: the gnafgen -list CSV to draw from
#                        (with LODGE_DATA_DIR) [generated]
#   BENCH_SEED           seed of those addresses [1]
#   BENCH_READY_TIMEOUT  seconds to wait for /readyz (the first start
#                        builds the index) [600]
#   BENCH_KEEP=1         keep the temporary directory (logs, binaries, data)
#   LODGE_PORT           lodge's port [a free one]
#   LODGE_DATA_DIR       lodge's data directory, to reuse a built index
#                        [a new one in the temporary directory]
#   LODGE_SERVE_ARGS     more arguments for lodge serve, word-split
#   LODGE_URL, LODGE_KEY bench a lodge that is already running at this
#                        JSON-RPC URL with this API key (lk_...) instead of
#                        building and starting one
#
# Assumptions about lodge (true of cmd/lodge and server when this was
# written, while they were still being finished):
#   - "lodge serve" takes -demo, -addr and -data-dir, and builds its index
#     on first start from the reference data it finds (./reference, then
#     ../shared/data, which is why this script runs from the repository
#     root);
#   - with -demo it prints, on stderr or stdout, a line containing
#     "Authorization: Bearer lk_..." with a new API key for a demo account;
#   - GET /readyz answers 200 once it serves, over HTTPS with a self-signed
#     certificate (hence curl -k and loadgen's default -insecure for
#     loopback addresses);
#   - POST /apiv2/jsonrpc answers addr_check with HTTP 200 and a JSON-RPC
#     response; a JSON-RPC error counts as a failed request;
#   - nothing limits the demo key's request rate.
# Requirements: go, curl and jq.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-2s}
CONNS=${BENCH_CONNS:-64}
BATCH_CONNS=${BENCH_BATCH_CONNS:-16}
ROUNDS=${BENCH_ROUNDS:-3}
MODE=${BENCH_MODE:-}
case $MODE in
distinct) POOL=${BENCH_POOL:-1000000} ;;
"") POOL=${BENCH_POOL:-10000} ;;
*)
	printf 'serve-bench: BENCH_MODE %s: want distinct or nothing\n' "$MODE" >&2
	exit 2
	;;
esac
GNAF_LIST=${BENCH_GNAF_LIST:-}
SEED=${BENCH_SEED:-1}
READY_TIMEOUT=${BENCH_READY_TIMEOUT:-600}
LODGE_URL=${LODGE_URL:-}
LODGE_KEY=${LODGE_KEY:-}

log() { printf 'serve-bench: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 2
}

for tool in go curl jq; do
	command -v "$tool" >/dev/null || die "$tool is needed"
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/lodge-bench.XXXXXX")
BIN=$TMP/bin
PIDS=()

cleanup() {
	local pid
	for pid in ${PIDS[@]+"${PIDS[@]}"}; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in ${PIDS[@]+"${PIDS[@]}"}; do
		wait "$pid" 2>/dev/null || true
	done
	if [ "${BENCH_KEEP:-}" = 1 ]; then
		log "kept $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# free_port prints a loopback TCP port nothing listens on now.
free_port() {
	local p
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	die "no free port found"
}

# wait_ready URL PID LOG waits for URL to answer 200 while PID lives.
wait_ready() {
	local url=$1 pid=$2 logfile=$3 deadline=$((SECONDS + READY_TIMEOUT))
	until [ "$(curl -ks -o /dev/null -w '%{http_code}' --max-time 2 "$url")" = 200 ]; do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 30 "$logfile" >&2
			die "server exited before $url was ready (log above)"
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			tail -n 30 "$logfile" >&2
			die "$url not ready after ${READY_TIMEOUT}s (log above)"
		fi
		sleep 0.2
	done
}

log "building into $BIN"
go build -o "$BIN/" ./bench/baseline ./bench/loadgen || die "build failed"

LIST_ARGS=()
if [ -z "$LODGE_URL" ]; then
	go build -o "$BIN/lodge" ./cmd/lodge || die "lodge does not build"
	port=${LODGE_PORT:-$(free_port)}
	data=${LODGE_DATA_DIR:-$TMP/data}
	if [ "$MODE" = distinct ] && [ -z "$GNAF_LIST" ]; then
		go build -o "$BIN/" ./bench/gnafgen || die "gnafgen does not build"
		log "generating $POOL distinct addresses (bench/gnafgen) and importing them into $data"
		"$BIN/gnafgen" -out "$TMP/gnaf" -addresses "$POOL" -format zip -list "$TMP/gnaf/list.csv" -progress 0 ||
			die "gnafgen failed"
		"$BIN/lodge" import gnaf -data-dir "$data" -quiet "$TMP"/gnaf/*.zip >"$TMP/import.log" 2>&1 ||
			die "lodge import gnaf failed: $(tail -n 5 "$TMP/import.log")"
		GNAF_LIST=$TMP/gnaf/list.csv
	fi
	log "starting lodge serve -demo -addr 127.0.0.1:$port -data-dir $data (log $TMP/lodge.log)"
	# shellcheck disable=SC2086 # LODGE_SERVE_ARGS is word-split on purpose
	"$BIN/lodge" serve -demo -addr "127.0.0.1:$port" -data-dir "$data" ${LODGE_SERVE_ARGS:-} >"$TMP/lodge.log" 2>&1 &
	PIDS+=($!)
	wait_ready "https://127.0.0.1:$port/readyz" "${PIDS[-1]}" "$TMP/lodge.log"
	LODGE_URL=https://127.0.0.1:$port/apiv2/jsonrpc
	LODGE_KEY=$(grep -o 'Authorization: Bearer lk_[A-Za-z0-9_-]*' "$TMP/lodge.log" | tail -n 1 | sed 's/^Authorization: Bearer //') || true
	[ -n "$LODGE_KEY" ] || die "no 'Authorization: Bearer lk_...' line in lodge's output ($TMP/lodge.log)"
else
	[ -n "$LODGE_KEY" ] || die "LODGE_URL needs LODGE_KEY"
	log "using the lodge at $LODGE_URL"
fi
AUTH="Bearer $LODGE_KEY"
if [ "$MODE" = distinct ]; then
	[ -n "$GNAF_LIST" ] || die "distinct mode with LODGE_URL needs BENCH_GNAF_LIST"
	LIST_ARGS=(-list "$GNAF_LIST")
fi

log "starting the baseline (log $TMP/baseline.log)"
"$BIN/baseline" -addr 127.0.0.1:0 >"$TMP/baseline.out" 2>"$TMP/baseline.log" &
PIDS+=($!)
for _ in $(seq 100); do
	grep -q '^listening ' "$TMP/baseline.out" 2>/dev/null && break
	kill -0 "${PIDS[-1]}" 2>/dev/null || die "baseline exited: $(cat "$TMP/baseline.log")"
	sleep 0.1
done
base_addr=$(awk '/^listening /{print $2; exit}' "$TMP/baseline.out")
[ -n "$base_addr" ] || die "baseline did not say where it listens"
BASE_URL=https://$base_addr/apiv2/jsonrpc
wait_ready "https://$base_addr/readyz" "${PIDS[-1]}" "$TMP/baseline.log"

RUNS=$TMP/runs.jsonl
: >"$RUNS"

# bench TARGET PHASE LOADGEN-ARGS... runs loadgen against TARGET (lodge or
# baseline) and appends its figures, tagged with TARGET, PHASE and $round,
# to $RUNS.
bench() {
	local target=$1 phase=$2 url out
	shift 2
	case $target in
	lodge) url=$LODGE_URL ;;
	baseline) url=$BASE_URL ;;
	esac
	out=$("$BIN/loadgen" -url "$url" -auth "$AUTH" -duration "$DURATION" -warmup "$WARMUP" \
		-pool "$POOL" -seed "$SEED" ${LIST_ARGS[@]+"${LIST_ARGS[@]}"} "$@") || die "loadgen failed against $target ($phase)"
	jq -c --arg target "$target" --arg phase "$phase" --argjson round "$round" \
		'{target: $target, phase: $phase, round: $round} + .' <<<"$out" >>"$RUNS"
}

if [ "$MODE" = distinct ]; then
	for round in $(seq "$ROUNDS"); do
		if [ $((round % 2)) = 1 ]; then order="lodge baseline"; else order="baseline lodge"; fi
		for target in $order; do
			log "round $round/$ROUNDS: $target, batches of 100 from $POOL distinct addresses, $BATCH_CONNS connections"
			bench "$target" distinct100 -batch 100 -conns "$BATCH_CONNS"
		done
	done
	summary=$(jq -s --arg duration "$DURATION" --arg warmup "$WARMUP" --argjson rounds "$ROUNDS" \
		--argjson batch_conns "$BATCH_CONNS" --argjson pool "$POOL" --arg list "$GNAF_LIST" '
		def runs(t): map(select(.target == t and .phase == "distinct100"));
		def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
			else (.[length / 2 - 1] + .[length / 2]) / 2 end;
		(runs("lodge") | map(.addresses_per_s) | median) as $l |
		(map(select(.target == "lodge") | .errors) | add) as $errs |
		{
			distinct100: {lodge_addresses_per_s: $l, lodge_rounds: (runs("lodge") | map(.addresses_per_s)),
				baseline_addresses_per_s: (runs("baseline") | map(.addresses_per_s) | median),
				target: ">= 500000 addresses/s (median of the rounds)", pass: ($l != null and $l >= 500000)},
			lodge_errors: $errs,
			settings: {mode: "distinct", duration: $duration, warmup: $warmup, rounds: $rounds,
				batch_conns: $batch_conns, pool: $pool, list: $list},
			runs: .
		} | .result = (if .distinct100.pass and .lodge_errors == 0 then "PASS" else "FAIL" end)
	' "$RUNS")
	printf '%s\n' "$summary"
	result=$(jq -r .result <<<"$summary")
	log "$result"
	[ "$result" = PASS ]
	exit
fi

for round in $(seq "$ROUNDS"); do
	if [ $((round % 2)) = 1 ]; then order="lodge baseline"; else order="baseline lodge"; fi
	for target in $order; do
		log "round $round/$ROUNDS: $target, single addresses, maximum rate, $CONNS connections"
		bench "$target" single -batch 1 -conns "$CONNS"
	done
done

round=1
for target in lodge baseline; do
	log "$target: batches of 100, maximum rate, $BATCH_CONNS connections"
	bench "$target" batch100 -batch 100 -conns "$BATCH_CONNS"
done

half=$(jq -s '[.[] | select(.target == "lodge" and .phase == "single") | .rps] | add / length / 2 | floor' "$RUNS")
[ "$half" -gt 0 ] || die "lodge's maximum single-address rate is 0"
for round in $(seq "$ROUNDS"); do
	if [ $((round % 2)) = 1 ]; then order="lodge baseline"; else order="baseline lodge"; fi
	for target in $order; do
		log "round $round/$ROUNDS: $target, single addresses at $half requests/s (half of lodge's maximum), $CONNS connections"
		bench "$target" half_load -batch 1 -conns "$CONNS" -rate "$half"
	done
done
round=1

summary=$(jq -s \
	--arg duration "$DURATION" --arg warmup "$WARMUP" --argjson rounds "$ROUNDS" \
	--argjson conns "$CONNS" --argjson batch_conns "$BATCH_CONNS" --argjson pool "$POOL" '
	def runs(t; p): map(select(.target == t and .phase == p));
	def mean(f): if length == 0 then null else (map(f) | add / length) end;
	def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
		else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	def ratio(a; b): if a == null or b == null or b == 0 then null else (a / b * 1000 | round / 1000) end;
	. as $all |
	(runs("lodge"; "single") | mean(.rps)) as $ls |
	(runs("baseline"; "single") | mean(.rps)) as $bs |
	[range(1; $rounds + 1) as $r | ratio($all | runs("lodge"; "single") | map(select(.round == $r)) | mean(.rps);
		$all | runs("baseline"; "single") | map(select(.round == $r)) | mean(.rps))] as $rr |
	($rr | median) as $sr |
	(runs("lodge"; "batch100") | mean(.addresses_per_s)) as $lb |
	(runs("baseline"; "batch100") | mean(.addresses_per_s)) as $bb |
	(runs("lodge"; "half_load") | map(.p99_ms) | median) as $lp |
	(runs("baseline"; "half_load") | map(.p99_ms) | median) as $bp |
	(map(select(.target == "lodge") | .errors) | add) as $errs |
	{
		single: {lodge_rps: $ls, baseline_rps: $bs, round_ratios: $rr, ratio: $sr,
			target: ">= 0.85 of the baseline (median of the rounds)", pass: ($sr != null and $sr >= 0.85)},
		batch100: {lodge_addresses_per_s: $lb, baseline_addresses_per_s: $bb, ratio: ratio($lb; $bb),
			target: ">= 300000 addresses/s", pass: ($lb != null and $lb >= 300000)},
		half_load: {rate: (runs("lodge"; "half_load") | mean(.rate)), lodge_p99_ms: $lp, baseline_p99_ms: $bp,
			lodge_rounds_p99_ms: (runs("lodge"; "half_load") | map(.p99_ms)),
			baseline_rounds_p99_ms: (runs("baseline"; "half_load") | map(.p99_ms)),
			ratio: ratio($lp; $bp), target: "lodge p99 <= 1 ms (median of the rounds)", pass: ($lp != null and $lp <= 1)},
		lodge_errors: $errs,
		settings: {duration: $duration, warmup: $warmup, rounds: $rounds, conns: $conns,
			batch_conns: $batch_conns, pool: $pool},
		runs: .
	} | .result = (if .single.pass and .batch100.pass and .half_load.pass and .lodge_errors == 0 then "PASS" else "FAIL" end)
' "$RUNS")
printf '%s\n' "$summary"
result=$(jq -r .result <<<"$summary")
log "$result"
[ "$result" = PASS ]
