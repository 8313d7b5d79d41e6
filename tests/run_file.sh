#!/bin/bash
# tests/run_file.sh FILE RESULTS - runs the test_* functions of one file and
# appends "STATUS TIER NAME[: why]" lines to RESULTS (tests/summary.sh reads
# them): STATUS is pass, fail, skip (the test said why) or tier (the test is
# in a tier this run leaves out, which is not a failure anywhere).
# Tiers: a test is in "integration" unless a line of its file names it:
#   # tier net: test_a test_b -- why it needs that tier
# SBX_TIER (default "integration") is the tier this run runs: make check runs
# integration, make check-net runs net (tests/README.md).
set -u
file=$1 results=$2
here=$(cd "$(dirname "$0")" && pwd)
who=$([ "$(id -u)" = 0 ] && echo root || echo user)
export AS_ROOT=$([ "$who" = root ] && echo 1 || echo 0)
run_tier=${SBX_TIER:-integration}
# "# root-only: test_a test_b" in a file: those run in the root pass only
# (not as a skip in the user pass, which CI would count as a failure)
root_only=" $(sed -n 's/^# root-only: //p' "$file" | tr '\n' ' ') "
# "# user-only: test_a test_b": those run in the user pass only (what root
# would run again is the same code on the same path: CI's time is budgeted)
user_only=" $(sed -n 's/^# user-only: //p' "$file" | tr '\n' ' ') "
tier_of() { # test: prints "TIER why" (integration has no why)
	local line
	line=$(grep -E "^# tier [a-z]+: (.* )?$1( .*)?$" "$file" | head -1)
	[ -n "$line" ] || { echo integration; return; }
	line=${line#\# tier }
	echo "${line%%:*} ${line#* -- }"
}
for t in $(bash -c "source '$here/lib.sh'; source '$file'; declare -F" | awk '{print $3}' | grep '^test_'); do
	[ "$who" = user ] && [[ "$root_only" == *" $t "* ]] && continue
	[ "$who" = root ] && [[ "$user_only" == *" $t "* ]] && continue
	# SBX_TESTS="test_a test_b": only these (a quick rerun of a few tests)
	[ -n "${SBX_TESTS:-}" ] && [[ " $SBX_TESTS " != *" $t "* ]] && continue
	name="$(basename "$file" .sh)/$t ($who)"
	read -r tier why <<<"$(tier_of "$t")"
	if [ "$tier" != "$run_tier" ]; then
		# another tier's test: named with its reason where it is left out
		[ "$tier" = integration ] && continue
		echo "tier $tier $name: tier $tier: $why; run make check-$tier" >> "$results"
		echo "skip $name: tier $tier: $why; run make check-$tier"
		continue
	fi
	TESTDIR=$(mktemp -d "${TMPDIR:-/tmp}/sbxt.XXXXXX")
	export TESTDIR
	t0=$(date +%s)
	( cd "$TESTDIR" && set -e && source "$here/lib.sh" && source "$file" && "$t" ) \
		> "$TESTDIR/.log" 2>&1
	rc=$?
	secs=$(($(date +%s) - t0))
	if [ $rc = 0 ]; then
		echo "pass $tier $name" >> "$results"; echo "ok   $name (${secs} s)"
	elif [ $rc = 77 ]; then
		echo "skip $tier $name: $(cat "$TESTDIR/.skip" 2>/dev/null)" >> "$results"
		echo "skip $name: $(cat "$TESTDIR/.skip" 2>/dev/null)"
	else
		# the summary names why too (its tail is what a CI log keeps):
		# the test's last line, on one line, cut at 400 bytes
		why=$(tail -n 3 "$TESTDIR/.log" | tr '\n' ' ' | sed 's/  */ /g' | head -c 400)
		echo "fail $tier $name: ${why:-(no output)}" >> "$results"; echo "FAIL $name (${secs} s)"; sed 's/^/    /' "$TESTDIR/.log" | tail -25
	fi
	chmod -R u+rwX "$TESTDIR" 2>/dev/null; rm -rf "$TESTDIR"
done
