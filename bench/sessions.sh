#!/bin/bash
# bench/sessions.sh OUT ROOTFS [USER] - issue 16's idle-session goals with
# BENCH_SESSIONS (100) sessions of the image tiny:
#   host-side memory per idle session (supervisor + init, PSS from
#   /proc/PID/smaps_rollup) below 4 MiB;
#   exec latency into one session with the others alive no worse than with
#   it alone: two hyperfine runs (one session alive, then all), each
#   alternating `run --session` with bwrap, so that the ratio to bwrap
#   cancels what other load on the machine does between the two runs.
# Run as root with USER, sbxrun runs as USER and root reads the PSS (the
# sandbox's init is non-dumpable, so its owner cannot read its smaps);
# run as a user, the init's PSS is reported as not readable.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
out=$1 R=$2 user=${3:-}
N=${BENCH_SESSIONS:-100}
ROUNDS=${BENCH_ROUNDS:-6} RUNS=${BENCH_RUNS:-40}
tmp=$(mktemp -d)
chmod 0777 "$tmp" # the user writes its hyperfine results here
as_user() {
	if [ -n "$user" ]; then nice -n "${BENCH_NICE:-0}" runuser -u "$user" -- env -i HOME="$(getent passwd "$user" | cut -d: -f6)" \
		PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 "$@"; else "$@"; fi
}
names=()
for i in $(seq 1 "$N"); do names+=("bench-idle-$$-$i"); done
cleanup() {
	for s in "${names[@]}"; do as_user "$SBX" session stop "$s" >/dev/null 2>&1 & done
	wait
	rm -rf "$tmp"
}
trap cleanup EXIT

latency() { # JSON
	local args=() k
	for k in $(seq 1 "$ROUNDS"); do
		args+=(-n "run --session (one of the sessions) #$k" "$SBX run --session ${names[0]} -- /bin/true"
		       -n "bwrap #$k" "bwrap --unshare-all --die-with-parent --ro-bind $R / --proc /proc --dev /dev --tmpfs /tmp /bin/true")
	done
	as_user hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$1" "${args[@]}" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
}
median_ratio() { # JSON -> "session-median bwrap-median ratio"
	python3 - "$1" <<'EOF'
import json, re, statistics, sys
t = {}
for r in json.load(open(sys.argv[1]))["results"]:
    t.setdefault(re.sub(r" #\d+$", "", r["command"]), []).extend(r["times"])
s = statistics.median(t["run --session (one of the sessions)"]) * 1000
b = statistics.median(t["bwrap"]) * 1000
print("%.2f %.2f %.3f" % (s, b, s / b))
EOF
}
state() { as_user sh -c 'echo "${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/sbxrun}"'; }
pss_kib() { # PID... -> their PSS in KiB, or "-" when one is not readable
	local p t=0 v
	for p in "$@"; do
		v=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null)
		[ -n "$v" ] || { echo -; return; }
		t=$((t + v))
	done
	echo "$t"
}
# the sandbox's init and its children: the next command's init, made ahead
family() { echo "$1" $(cat "/proc/$1/task/$1/children" 2>/dev/null); }

as_user "$SBX" session start --image tiny "${names[0]}" >/dev/null
latency "$tmp/one.json"
read -r s1 b1 r1 < <(median_ratio "$tmp/one.json")
t0=$(date +%s.%N)
for s in "${names[@]:1}"; do as_user "$SBX" session start --image tiny "$s" >/dev/null; done
t1=$(date +%s.%N)
sleep 2 # let them settle: idle means idle
dir=$(state)
[ -n "$dir" ] || dir=/tmp/sbxrun-$(as_user id -u)
sup_total=0 init_total=0 max=0 unread=0 all_pids=""
for s in "${names[@]}"; do
	read -r sp ip < <(python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print(o["pid"], o["init_pid"])' \
		"$dir/sessions/$s/info.json")
	all_pids="$all_pids $sp $(family "$ip")"
	a=$(pss_kib "$sp") b=$(pss_kib $(family "$ip"))
	if [ "$a" = - ] || [ "$b" = - ]; then unread=$((unread + 1)); continue; fi
	sup_total=$((sup_total + a)) init_total=$((init_total + b))
	[ $((a + b)) -gt "$max" ] && max=$((a + b))
done
cpu_ticks() { # PID... -> utime + stime, in clock ticks
	local p t=0
	for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0))); done
	echo "$t"
}
c0=$(cpu_ticks $all_pids)
sleep 5
c1=$(cpu_ticks $all_pids)
cpu=$(( (c1 - c0) * 1000 / $(getconf CLK_TCK) ))
latency "$tmp/all.json"
read -r s100 b100 r100 < <(median_ratio "$tmp/all.json")

{
	echo
	echo "## $N idle sessions (issue 16)"
	echo
	echo "Started $N sessions of the image tiny in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s (after the first); CPU time all their host-side processes used in 5 s of idling: ${cpu} ms."
	echo
	ok=$(( N - unread ))
	if [ "$ok" -gt 0 ]; then
		per=$(( (sup_total + init_total) / ok ))
		echo "| host-side memory per idle session (PSS, /proc/PID/smaps_rollup) | KiB |"
		echo "|:---|---:|"
		echo "| supervisor, mean over $ok sessions | $((sup_total / ok)) |"
		echo "| sandbox init and the next command's init (made ahead), mean | $((init_total / ok)) |"
		echo "| supervisor + init, mean | $per |"
		echo "| supervisor + init, largest | $max |"
		echo
		if [ "$per" -lt 4096 ] && [ "$max" -lt 4096 ]; then v=met; else v=missed; fi
		echo "- goal: below 4 MiB (4096 KiB) per session: mean $per KiB, largest $max KiB, **$v**"
	else
		echo "- goal: below 4 MiB per session: **not measured**: the init's smaps_rollup is readable by root only (it is non-dumpable); run \`make bench\` as root"
	fi
	echo
	echo "| exec latency, \`run --session -- /bin/true\` | session median [ms] | bwrap median [ms] | ratio to bwrap |"
	echo "|:---|---:|---:|---:|"
	echo "| that session alone | $s1 | $b1 | $r1 |"
	echo "| with the other $((N - 1)) alive | $s100 | $b100 | $r100 |"
	echo
	v=$(python3 -c "import sys; print('met' if float(sys.argv[2]) <= float(sys.argv[1]) * 1.10 else 'missed')" "$r1" "$r100")
	echo "- goal: with $((N - 1)) others alive no worse than alone (ratio to bwrap in the same run, 10% allowed for noise): $r100 against $r1, **$v**"
} >> "$out"
