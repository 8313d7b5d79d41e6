#!/bin/bash
# tests/summary.sh RESULTS - the end of every test run (make check, make
# check-net, the VM's guest-check): reads the "STATUS TIER NAME[: why]" lines
# of RESULTS (tests/run_file.sh), prints per tier what passed, failed and was
# skipped, lists the skipped (with why) and the failed, and ends with
# "N passed, N failed, N skipped", exiting 1 when one failed. The unit tests
# count one each (a binary); their assertions, from "assertions BINARY P F"
# lines, are reported apart. With CI=true a skip counts as a failure, except
# a test left to another tier ("tier" lines: make check-net runs those).
results=$1
count() { grep -c "^$1 " "$results"; }
pass=$(count pass); failn=$(count fail); skipn=$(count skip); tiern=$(count tier)
echo "== by tier"
for tier in $(awk '$1 ~ /^(pass|fail|skip|tier)$/ { print $2 }' "$results" | awk '!seen[$0]++'); do
	p=$(grep -c "^pass $tier " "$results"); f=$(grep -c "^fail $tier " "$results")
	s=$(grep -c "^skip $tier " "$results"); o=$(grep -c "^tier $tier " "$results")
	line=$(printf '  %-12s %4d passed, %d failed, %d skipped' "$tier" "$p" "$f" "$((s + o))")
	[ "$o" -gt 0 ] && line="$line ($o left to make check-$tier)"
	if [ "$tier" = unit ]; then
		line="$line; assertions: $(awk '$1 == "assertions" { p += $3; f += $4 } END { printf "%d passed, %d failed", p, f }' "$results")"
	fi
	echo "$line"
done
if [ $((skipn + tiern)) -gt 0 ]; then
	echo "== skipped"; grep -E '^(skip|tier) ' "$results" | cut -d' ' -f3- | sed 's/^/  /'
	if [ "${CI:-}" = true ] && [ "$skipn" -gt 0 ]; then
		echo "(CI=true: a skip counts as a failure; a test left to its tier does not)"; failn=$((failn + skipn))
	fi
fi
# the slowest files of this run, for whoever must keep CI within its hour
if grep -q '^time ' "$results"; then
	echo "== slowest files (seconds, file, user)"
	grep '^time ' "$results" | sort -k2,2nr | head -12 | awk '{ printf "  %5d  %s (%s)\n", $2, $3, $4 }'
fi
failed='^fail '; [ "${CI:-}" = true ] && failed='^(fail|skip) '
if [ "$failn" -gt 0 ]; then echo "== failed"; grep -E "$failed" "$results" | cut -d' ' -f3- | sed 's/^/  /'; fi
echo "$pass passed, $failn failed, $((skipn + tiern)) skipped"
[ "$failn" = 0 ]
