#!/usr/bin/env bash
# check-bench.sh: "lodge check" on distinct addresses at full scale, and
# optionally another lodge binary side by side with it.
#
# It needs a data directory where a bench/gnafgen release is imported and
# that release's -list CSV; without CHECK_DATA_DIR and CHECK_LIST it makes
# them in CHECK_WORK (kept for the next run):
#
#   gnafgen -out WORK -format zip -list WORK/list.csv   (15.6 M addresses)
#   lodge import gnaf -data-dir WORK/data WORK/*.zip
#
# From the list it draws CHECK_ROWS (default 1,000,000) rows at random
# (shuf, fixed seed) and writes them as a one-column CSV, each address
# "JO CITIZEN, " and its single-line form, so that every row is distinct
# and matched at premise level. Then, CHECK_ROUNDS times, it runs
#
#   lodge check -data-dir DATA [ARGS] -o WORK/out.csv INPUT
#
# with progress on (stderr, discarded), for each set of ARGS in
# CHECK_ARGS (separated by ";", default: none, then -workers 1 -cache -1),
# and for each binary: ./cmd/lodge built from this tree, and LODGE_BASE_BIN
# if given (a lodge built from another commit). Binaries take turns within
# a round so that both see the same noise. It prints one JSON line per run
# and a summary: the median rows/s of each binary and ARGS.
#
#   bench/check-bench.sh
#   LODGE_BASE_BIN=/tmp/lodge-old CHECK_WORK=/tmp/full bench/check-bench.sh
#
# Environment (defaults in brackets): CHECK_WORK [/tmp/lodge-check-bench],
# CHECK_DATA_DIR, CHECK_LIST, CHECK_ROWS [1000000], CHECK_ROUNDS [3],
# CHECK_ARGS [";-workers 1 -cache -1"], LODGE_BASE_BIN.
# Requirements: go, shuf, jq.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

WORK=${CHECK_WORK:-/tmp/lodge-check-bench}
DATA=${CHECK_DATA_DIR:-}
LIST=${CHECK_LIST:-}
ROWS=${CHECK_ROWS:-1000000}
ROUNDS=${CHECK_ROUNDS:-3}
ARGSETS=${CHECK_ARGS-";-workers 1 -cache -1"}

log() { printf 'check-bench: %s\n' "$*" >&2; }
mkdir -p "$WORK"
go build -o "$WORK/lodge-new" ./cmd/lodge
if [ -z "$DATA" ] || [ -z "$LIST" ]; then
	DATA=$WORK/data
	LIST=$WORK/list.csv
	if [ ! -s "$LIST" ]; then
		log "generating the full-scale release into $WORK"
		go build -o "$WORK/" ./bench/gnafgen
		"$WORK/gnafgen" -out "$WORK" -format zip -list "$LIST.tmp" -progress 0
		mv "$LIST.tmp" "$LIST"
		rm -rf "$DATA"
	fi
	if [ ! -d "$DATA" ]; then
		log "importing it into $DATA"
		"$WORK/lodge-new" import gnaf -data-dir "$DATA" -quiet "$WORK"/*.zip >&2
	fi
fi
INPUT=$WORK/input-$ROWS.csv
if [ ! -s "$INPUT" ] || [ "$LIST" -nt "$INPUT" ]; then
	log "drawing $ROWS rows of $LIST into $INPUT"
	{
		echo address
		# ADDRESS is the second field, always quoted (it holds commas)
		tail -n +2 "$LIST" | shuf -n "$ROWS" --random-source=<(yes) |
			sed -E 's/^[^,]*,"([^"]*)".*$/"JO CITIZEN, \1"/'
	} >"$INPUT.tmp"
	mv "$INPUT.tmp" "$INPUT"
fi

bins=("new=$WORK/lodge-new")
[ -z "${LODGE_BASE_BIN:-}" ] || bins+=("base=$LODGE_BASE_BIN")
RUNS=$WORK/runs.jsonl
: >"$RUNS"
IFS=';' read -r -a argsets <<<"$ARGSETS"
for round in $(seq "$ROUNDS"); do
	for args in "${argsets[@]}"; do
		order=("${bins[@]}")
		if [ $((round % 2)) = 0 ] && [ ${#bins[@]} = 2 ]; then order=("${bins[1]}" "${bins[0]}"); fi
		for b in "${order[@]}"; do
			name=${b%%=*} bin=${b#*=}
			# shellcheck disable=SC2086 # args are word-split on purpose
			line=$("$bin" check -data-dir "$DATA" $args -o "$WORK/out.csv" "$INPUT" 2>&1 | grep '^checked ') ||
				{ log "$name $args failed"; exit 1; }
			rate=$(sed -E 's/.*\(([0-9]+) rows\/s\).*/\1/' <<<"$line")
			jq -nc --arg bin "$name" --arg args "$args" --argjson round "$round" --argjson rate "$rate" \
				--arg load "$(cut -d' ' -f1 /proc/loadavg)" '{bin: $bin, args: $args, round: $round, rows_per_s: $rate, load: $load}' |
				tee -a "$RUNS"
		done
	done
done
rm -f "$WORK/out.csv"
jq -sc 'def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
	group_by([.bin, .args]) | map({bin: .[0].bin, args: .[0].args, median_rows_per_s: (map(.rows_per_s) | median),
		rounds: map(.rows_per_s)})' "$RUNS"
