#!/bin/bash
# tests/run_file.sh FILE RESULTS - runs the test_* functions of one file and
# appends "pass|fail|skip NAME" lines to RESULTS.
set -u
file=$1 results=$2
here=$(cd "$(dirname "$0")" && pwd)
who=$([ "$(id -u)" = 0 ] && echo root || echo user)
export AS_ROOT=$([ "$who" = root ] && echo 1 || echo 0)
# "# root-only: test_a test_b" in a file: those run in the root pass only
# (not as a skip in the user pass, which CI would count as a failure)
root_only=" $(sed -n 's/^# root-only: //p' "$file" | tr '\n' ' ') "
for t in $(bash -c "source '$here/lib.sh'; source '$file'; declare -F" | awk '{print $3}' | grep '^test_'); do
	[ "$who" = user ] && [[ "$root_only" == *" $t "* ]] && continue
	# SBX_TESTS="test_a test_b": only these (a quick rerun of a few tests)
	[ -n "${SBX_TESTS:-}" ] && [[ " $SBX_TESTS " != *" $t "* ]] && continue
	TESTDIR=$(mktemp -d "${TMPDIR:-/tmp}/sbxt.XXXXXX")
	export TESTDIR
	( cd "$TESTDIR" && set -e && source "$here/lib.sh" && source "$file" && "$t" ) \
		> "$TESTDIR/.log" 2>&1
	rc=$?
	name="$(basename "$file" .sh)/$t ($who)"
	if [ $rc = 0 ]; then
		echo "pass $name" >> "$results"; echo "ok   $name"
	elif [ $rc = 77 ]; then
		echo "skip $name: $(cat "$TESTDIR/.skip" 2>/dev/null)" >> "$results"
		echo "skip $name: $(cat "$TESTDIR/.skip" 2>/dev/null)"
	else
		echo "fail $name" >> "$results"; echo "FAIL $name"; sed 's/^/    /' "$TESTDIR/.log" | tail -25
	fi
	chmod -R u+rwX "$TESTDIR" 2>/dev/null; rm -rf "$TESTDIR"
done
