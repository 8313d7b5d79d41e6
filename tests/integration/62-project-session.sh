# also-as-root
# `session start --project DIR` (issue 36): a session works on the user's
# checkout under an overlay; its change set is live while the session runs
# (listed and diffed, never applied), kept when it stops; a snapshot keeps
# the project's writes, and a fork and a restore bring them back.

listing() { (cd "$1" && find . -mindepth 1 -printf '%p %y %m %s %T@ %l\n' | sort); }
project() {
	mkdir -p proj
	echo one > proj/a
	echo bee > proj/b
}
# The id of the one change set of proj that `changes ls` lists as live.
live_id() { "$SBX" changes ls | awk -v s="(live: session $1)" 'index($0, s) { print $1 }'; }

test_a_session_on_a_project_is_live_until_it_stops() {
	local n=ps$$
	project
	before=$(listing proj)
	start_session "$n" --image tiny --project proj
	run "$SBX" run --session "$n" -- sh -c 'test "$(pwd)" = /workspace && echo two >> a && rm b && echo new > n'
	assert_status 0
	run "$SBX" run --session "$n" -- cat a
	assert_eq "one
two" "$out" "a second command sees the first's writes"
	assert_eq "$before" "$(listing proj)" "the project while the session runs"
	id=$(live_id "$n")
	[ -n "$id" ] || fail "no live change set listed: $("$SBX" changes ls)"
	run "$SBX" changes show "$id"
	assert_status 0
	assert_eq "changes $id: 1 added, 1 changed, 1 deleted
deleted file      -rw-r--r--            -  b
changed file      -rw-r--r--            8  a
added file        -rw-r--r--            4  n" "$out"
	assert_contains "$err" "$n still writes it"
	run "$SBX" changes diff "$id" a
	assert_eq "diff --git a/a b/a
--- a/a
+++ b/a
@@ -1,1 +1,2 @@
 one
+two" "$out"
	# a live set is never applied, discarded or pruned under the session
	run "$SBX" changes apply "$id"
	assert_bad_input "the session '$n' still writes it; stop it first"
	run "$SBX" changes discard "$id"
	assert_bad_input "still writes it"
	run "$SBX" changes prune --all
	assert_status 0
	run "$SBX" run --session "$n" -- sh -c 'echo three >> a && cat a'
	assert_eq "one
two
three" "$out" "the session after a prune"
	assert_eq "$before" "$(listing proj)" "the project after the refusals"
	# stopping it keeps the set and says so, as a run does
	run "$SBX" session stop "$n"
	assert_status 0
	assert_contains "$err" "sbxrun: changes $id: 1 added, 1 changed, 1 deleted (sbxrun changes show $id)"
	run "$SBX" changes apply "$id"
	assert_status 0
	assert_eq "one
two
three" "$(cat proj/a)"
	[ ! -e proj/b ] && [ "$(cat proj/n)" = new ] || fail "apply: $(ls proj)"
}

test_a_session_that_changed_nothing_keeps_nothing() {
	local n=pe$$
	project
	start_session "$n" --image tiny --project proj
	run "$SBX" run --session "$n" -- cat a
	assert_status 0
	run "$SBX" session stop "$n"
	assert_contains "$err" "sbxrun: changes: none, the project is as it was"
	run "$SBX" changes ls
	assert_not_contains "$out" "$(cd proj && pwd -P)"
}

# The supervisor killed: no one holds the set, and the first command that
# asks for it captures it for good.
test_a_killed_sessions_set_is_captured_when_asked() {
	local n=pk$$
	project
	start_session "$n" --image tiny --project proj
	run "$SBX" run --session "$n" -- sh -c 'echo x > x'
	id=$(live_id "$n")
	[ -n "$id" ] || fail "no live change set"
	# the supervisor (and the sandbox's init, its child) has the starter's command line
	pkill -KILL -u "$(id -u)" -f "session start --image tiny --project proj $n\$" ||
		fail "no supervisor of $n found"
	for _ in $(seq 50); do "$SBX" changes ls | grep -q "live: session $n" || break; sleep 0.2; done
	run "$SBX" changes ls
	assert_contains "$out" "$id"
	assert_not_contains "$out" "live: session $n"
	run "$SBX" changes show "$id"
	assert_eq "changes $id: 1 added, 0 changed, 0 deleted
added file        -rw-r--r--            2  x" "$out"
	"$SBX" session rm -f "$n" >/dev/null 2>&1 || true
}

test_a_snapshot_keeps_the_projects_writes_for_a_fork_and_a_restore() {
	local n=pn$$ f=pf$$
	project
	before=$(listing proj)
	start_session "$n" --image tiny --project proj
	run "$SBX" run --session "$n" -- sh -c 'echo snap >> a && rm b && echo layer > /etc/mine'
	assert_status 0
	run "$SBX" session snapshot "$n" "$n-s"
	assert_status 0
	run "$SBX" run --session "$n" -- sh -c 'echo later >> a && echo late > late'
	# the fork: the same project, from the snapshot's writes, not what came after
	start_session "$f" --from "$n-s"
	run "$SBX" run --session "$f" -- sh -c 'cat a /etc/mine; ls'
	assert_eq "one
snap
layer
a" "$out"
	# the source keeps writing: the fork does not see it, nor the source the fork's
	run "$SBX" run --session "$n" -- sh -c 'echo source >> a'
	run "$SBX" run --session "$f" -- sh -c 'echo fork >> a; cat a'
	assert_eq "one
snap
fork" "$out"
	run "$SBX" run --session "$n" -- cat a
	assert_eq "one
snap
later
source" "$out"
	# the restore: back to the snapshot, its later writes gone, one change set
	run "$SBX" session restore "$n" "$n-s"
	assert_status 0
	run "$SBX" run --session "$n" -- sh -c 'cat a; ls'
	assert_eq "one
snap
a" "$out"
	assert_eq "$before" "$(listing proj)" "the project after the fork and the restore"
	run "$SBX" changes ls
	assert_eq 2 "$(printf '%s\n' "$out" | grep -c "$(cd proj && pwd -P)")" "change sets of the source and the fork: $out"
	"$SBX" session stop "$f" >/dev/null 2>&1
	"$SBX" session stop "$n" >/dev/null 2>&1
	run "$SBX" session snapshot-rm "$n-s"
	assert_status 0
	run "$SBX" changes prune --all
	assert_eq "changes prune: 2 change sets removed" "$out"
}

test_refusals() {
	local n=pr$$
	project
	mkdir other
	run "$SBX" session start --image tiny --project nosuch "$n"
	assert_bad_input "--project 'nosuch'"
	run "$SBX" session ls
	assert_not_contains "$out" "$n"
	run "$SBX" changes ls
	assert_not_contains "$out" "nosuch"
	start_session "$n" --image tiny
	run "$SBX" session snapshot "$n" "$n-plain"
	assert_status 0
	run "$SBX" session start --from "$n-plain" --project proj "$n-x"
	assert_bad_input "the snapshot is of a session on no project"
	start_session "$n-p" --image tiny --project proj
	run "$SBX" session snapshot "$n-p" "$n-proj"
	assert_status 0
	run "$SBX" session start --from "$n-proj" --project other "$n-y"
	assert_bad_input "the snapshot is of the project '$(cd proj && pwd -P)'"
	"$SBX" session stop "$n-p" >/dev/null 2>&1
	"$SBX" session stop "$n" >/dev/null 2>&1
	"$SBX" session snapshot-rm "$n-plain" >/dev/null
	"$SBX" session snapshot-rm "$n-proj" >/dev/null
	run "$SBX" run --session "$n" --project proj -- true
	assert_bad_input "--project"
}

# `image export --snapshot SNAP`: the snapshot's whole file system as an
# image, through a session forked from it (gone after); a project snapshot's
# workspace is the project with its writes.
test_export_a_snapshot() {
	local n=px$$ p=pxp$$
	project
	start_session "$n" --image tiny
	run "$SBX" run --session "$n" -- sh -c 'echo mine > /etc/mine; echo w > /workspace/w; rm /etc/os-release'
	run "$SBX" session snapshot "$n" "$n-s"
	assert_status 0
	run "$SBX" image export --snapshot "$n-s" -o plain.tar
	assert_status 0
	list=$(tar -tf plain.tar)
	assert_contains "$list" "etc/mine"
	assert_contains "$list" "workspace/w"
	assert_not_contains "$list" "etc/os-release" "a file deleted before the snapshot"
	[ "$(tar -xOf plain.tar ./etc/mine 2>/dev/null || tar -xOf plain.tar etc/mine)" = mine ] || fail "etc/mine in the export"
	start_session "$p" --image tiny --project proj
	run "$SBX" run --session "$p" -- sh -c 'echo two >> a; rm b; echo n > n'
	run "$SBX" session snapshot "$p" "$p-s"
	assert_status 0
	run "$SBX" image export --snapshot "$p-s" -o proj.tar
	assert_status 0
	list=$(tar -tf proj.tar)
	assert_contains "$list" "workspace/n"
	assert_not_contains "$list" "workspace/b"
	[ "$(tar -xOf proj.tar ./workspace/a 2>/dev/null || tar -xOf proj.tar workspace/a)" = "one
two" ] || fail "workspace/a in the export: $(tar -xOf proj.tar ./workspace/a 2>&1)"
	run "$SBX" session ls
	assert_not_contains "$out" "export-" "the export's own session is left"
	run "$SBX" changes ls
	assert_eq 2 "$(printf '%s\n' "$out" | wc -l)" "the export's change set is left: $out"
	run "$SBX" image export --snapshot nosuch -o x.tar
	assert_bad_input "no snapshot 'nosuch'"
	[ ! -e x.tar ] || fail "a file was left for a bad snapshot"
	"$SBX" session stop "$n" >/dev/null 2>&1
	"$SBX" session stop "$p" >/dev/null 2>&1
	"$SBX" session snapshot-rm "$n-s" >/dev/null
	"$SBX" session snapshot-rm "$p-s" >/dev/null
	"$SBX" changes prune --all >/dev/null
}

# Issue 40: a live set's file swapped for a FIFO between the walk and the
# read (the session renames one over the other, again and again): `changes
# diff` shows it as special or diffs the file, and never waits on the FIFO.
test_a_live_file_swapped_for_a_fifo_never_hangs_diff() {
	local n=pf$$
	project
	start_session "$n" --image tiny --project proj
	"$SBX" run --session "$n" -- sh -c 'while :; do echo x > t; mv t a; mkfifo p; mv p a; done' >/dev/null 2>&1 &
	local toggler=$! hung=0
	sleep 0.5
	id=$(live_id "$n")
	[ -n "$id" ] || fail "no live change set listed"
	for _ in $(seq 25); do
		timeout 5 "$SBX" changes diff "$id" >out.txt 2>&1 || { hung=1; break; }
	done
	kill "$toggler" 2>/dev/null
	[ $hung = 0 ] || fail "changes diff of a live set did not end in 5 s: $(tail -3 out.txt)"
	grep -qE '^# a: (a special file by now, not read|not applied: a device, FIFO or socket is never applied)$|^\+x$' out.txt ||
		fail "the swapped file: $(cat out.txt)"
}

# A 64 MiB file of newlines (64 M lines) costs changes diff a few MiB, not
# a 16-byte index per line: past 4 MiB a side is streamed as one hunk.
test_diff_memory_is_bounded() {
	mkdir -p proj
	head -c 67108864 /dev/zero | tr '\0' '\n' > proj/big
	"$SBX" run -i tiny --project proj -- rm big 2>err.txt
	id=$(sed -n 's/^sbxrun: changes \([^:]*\):.*/\1/p' err.txt)
	[ -n "$id" ] || fail "no change set: $(cat err.txt)"
	python3 - "$SBX" "$id" <<'PY' > out.txt
import resource, subprocess, sys
p = subprocess.run([sys.argv[1], "changes", "diff", sys.argv[2]], stdout=open("d.txt", "wb"))
print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
	read -r rc kib < out.txt
	assert_eq 0 "$rc" "changes diff's status"
	assert_eq "@@ -1,67108864 +0,0 @@" "$(sed -n 5p d.txt)" "the one hunk"
	assert_eq $((67108864 + 5)) "$(wc -l < d.txt)" "the diff's lines"
	[ "$kib" -lt 65536 ] || fail "changes diff of a 64 MiB file took $kib KiB of memory"
	"$SBX" changes discard "$id" >/dev/null
}
