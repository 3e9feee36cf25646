#!/usr/bin/env bash
# fuzz.sh: runs every fuzz target of the repository, one after the other,
# for FUZZTIME each, and tells per target how many inputs it tried and
# whether it found a failure.
#
#   bench/fuzz.sh                  # 60 s a target
#   FUZZTIME=5s bench/fuzz.sh      # shorter (any go test -fuzztime value, 1000x too)
#   bench/fuzz.sh ./upload/...     # only the targets of these packages
#
# Targets are discovered, not listed here: `go test -list '^Fuzz'` over the
# packages (./... by default), so a new target is fuzzed without editing
# this script. A package that does not build is a failure (its targets
# could not be run). Each target runs alone (`go test -run '^$' -fuzz
# '^NAME$'`), with go test's default parallelism (GOMAXPROCS workers), so
# run it on a quiet machine for comparable figures.
#
# Output, on stdout: one line per target as it ends, then a summary:
#
#   PACKAGE                      TARGET           EXECS     RESULT
#   .../internal/jsonstr         FuzzAppend       461467    ok
#   .../upload/metadata          FuzzParseXML     1272076   FAIL (testdata/fuzz/FuzzParseXML/5d2c…)
#
# EXECS is the count go test reports last ("fuzz: elapsed: …, execs: N",
# every 3 s); "-" when it reported none (a seed failed, the build failed, or
# a failure was found in the first seconds). A failing
# target's last output lines go to stderr. go test writes the input that
# failed to the package's testdata/fuzz/TARGET/: the RESULT names it;
# commit it only as the regression case of a fix.
#
# Exit status: 0 when every target ran without failure, 1 otherwise.
#
# Environment: FUZZTIME (default 60s); FUZZTIMEOUT, go test's -timeout
# for one target (default 30m: a target that hangs, minimising for
# instance, is stopped and counted as failed).
set -u
cd "$(dirname "$0")/.."

fuzztime=${FUZZTIME:-60s}
timeout=${FUZZTIMEOUT:-30m}
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# go test -list prints each package's matching names, then a line
# "ok <package> <time>" (or "FAIL <package> [build failed]").
go test -list '^Fuzz' "${pkgs[@]}" >"$logs/list" 2>"$logs/list.err"
targets=() broken=()
names=()
while read -r first second _; do
	case "$first" in
	Fuzz*) names+=("$first") ;;
	ok)
		for n in "${names[@]+"${names[@]}"}"; do targets+=("$second $n"); done
		names=()
		;;
	FAIL)
		[ -n "$second" ] && broken+=("$second")
		names=()
		;;
	*) names=() ;;
	esac
done <"$logs/list"

failed=0
results=()
printf '%-48s %-22s %10s  %s\n' PACKAGE TARGET EXECS RESULT
for pkg in "${broken[@]+"${broken[@]}"}"; do
	line=$(printf '%-48s %-22s %10s  %s' "$pkg" "-" "-" "FAIL (does not build: its targets were not run)")
	echo "$line"
	results+=("$line")
	failed=1
done
if [ ${#targets[@]} -eq 0 ] && [ ${#broken[@]} -eq 0 ]; then
	echo "no fuzz targets found in ${pkgs[*]}" >&2
	cat "$logs/list.err" >&2
	exit 1
fi

for t in "${targets[@]+"${targets[@]}"}"; do
	pkg=${t% *} name=${t#* }
	log="$logs/$name.log"
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -timeout "$timeout" "$pkg" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/.*fuzz: elapsed: .*, execs: \([0-9][0-9]*\) .*/\1/p' "$log" | tail -n 1)
	[ -n "$execs" ] || execs=-
	if [ $rc -eq 0 ]; then
		result=ok
	else
		failed=1
		input=$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | tail -n 1)
		result="FAIL${input:+ ($input)}"
		{
			echo "--- $pkg $name (exit $rc), last lines:"
			tail -n 25 "$log"
		} >&2
	fi
	line=$(printf '%-48s %-22s %10s  %s' "$pkg" "$name" "$execs" "$result")
	echo "$line"
	results+=("$line")
done

nfail=$(printf '%s\n' "${results[@]}" | grep -c '  FAIL')
echo
echo "$((${#targets[@]})) targets fuzzed for $fuzztime each, ${#broken[@]} packages that do not build; $nfail failed"
exit $failed
