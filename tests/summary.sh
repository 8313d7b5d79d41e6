#!/bin/bash
# tests/summary.sh RESULTS - the end of every test run (make check, the VM's
# guest-check): counts the "pass|fail|skip NAME" lines of RESULTS, lists the
# skipped and failed ones, prints "N passed, N failed, N skipped" and exits 1
# when one failed. With CI=true a skip counts as a failure.
results=$1
pass=$(grep -c '^pass' "$results"); failn=$(grep -c '^fail' "$results"); skipn=$(grep -c '^skip' "$results")
if [ "$skipn" -gt 0 ]; then
	echo "== skipped"; grep '^skip' "$results" | sed 's/^skip /  /'
	if [ "${CI:-}" = true ]; then echo "(CI=true: a skip counts as a failure)"; failn=$((failn + skipn)); fi
fi
if [ "$failn" -gt 0 ]; then echo "== failed"; grep '^fail' "$results" | sed 's/^fail /  /'; fi
echo "$pass passed, $failn failed, $skipn skipped"
[ "$failn" = 0 ]
