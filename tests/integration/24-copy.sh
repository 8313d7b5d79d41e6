# also-as-root
# run/shell --copy PATH[:DEST] and --out DIR (issue 29): host files into the
# workspace before the command, what it left back onto the host after it,
# where the sandbox is the attacker; and the hint for a host file named but
# not copied in.

# What a tree looks like, to show that a copy never touched its source.
# (the harness's own .log, .out and .err left out)
listing() { (cd "$1" && find . -mindepth 1 ! -name .log ! -name .out ! -name .err -printf '%p %y %m %s %T@ %l\n' | sort); }
# What is in the test's directory but the harness's files.
entries() { ls -A | grep -v -x -e .log -e .out -e .err || true; }

test_readme_example_works_with_copy() {
	echo 'print("hi")' > suspicious.py
	before=$(listing .)
	run "$SBX" run -- python3 suspicious.py
	assert_status 2
	assert_contains "$err" "sbxrun: hint: 'suspicious.py' is on the host, not in the sandbox: bring it in with --copy suspicious.py"
	run "$SBX" run --copy suspicious.py -- python3 suspicious.py
	assert_status 0
	assert_eq hi "$out"
	assert_eq "$before" "$(listing .)" "the source after the copy"
}

test_copy_directory_dest_modes_and_links() {
	mkdir -p src/sub
	echo a > src/a; echo b > src/sub/b
	printf '#!/bin/sh\necho ran\n' > src/run.sh; chmod 755 src/run.sh
	echo s > src/suid; chmod 4755 src/suid
	chmod 750 src/sub
	ln -s /etc/passwd src/abs-link
	ln -s sub/b src/rel-link
	mkfifo src/fifo
	before=$(listing src)
	run "$SBX" run -i tiny --copy src --copy src/a:deep/er/a2 -- sh -c '
		cd /workspace && cat src/a src/sub/b deep/er/a2 && src/run.sh &&
		stat -c "%n %a" src/suid src/sub src/run.sh &&
		readlink src/abs-link && readlink src/rel-link && cat src/rel-link && test ! -e src/fifo && echo no-fifo'
	assert_status 0
	assert_eq "a
b
a
ran
src/suid 755
src/sub 750
src/run.sh 755
/etc/passwd
sub/b
b
no-fifo" "$out"
	assert_contains "$err" "--copy: skipped"
	assert_eq "$before" "$(listing src)" "the source after the copy"
	# shell takes --copy too
	run sh -c "echo 'cat src/sub/b' | '$SBX' shell -i tiny --copy src"
	assert_status 0
	assert_eq b "$out"
}

test_copy_bad_dest_is_refused() {
	echo x > f
	for spec in f:/etc/f f:.. f:../f f:a/../../f f: :f f:a/; do
		run "$SBX" run -i tiny --copy "$spec" -- true
		assert_bad_input "--copy"
		assert_contains "$err" "'$spec'"
	done
	run "$SBX" run -i tiny --copy missing -- true
	assert_bad_input "--copy 'missing'"
}

test_copy_over_quota_is_refused() {
	dd if=/dev/zero of=big bs=1M count=3 2>/dev/null
	run "$SBX" run -i tiny --disk 2M --copy big -- sh -c 'echo ran'
	assert_bad_input "does not fit in the disk quota"
	assert_eq "" "$out" "the command's output"
}

test_out_after_exit_failure_and_timeout() {
	run "$SBX" run -i tiny --out ok -- sh -c 'echo r > /workspace/res; mkdir /workspace/d; echo x > /workspace/d/x'
	assert_status 0
	assert_eq r "$(cat ok/res)"
	assert_eq x "$(cat ok/d/x)"
	run "$SBX" run -i tiny --out failed -- sh -c 'echo partial > /workspace/log; exit 3'
	assert_status 3
	assert_eq partial "$(cat failed/log)"
	mkdir empty
	run "$SBX" run -i tiny --timeout 1s --out empty -- sh -c 'echo before > /workspace/t; sleep 30'
	assert_status 124
	assert_contains "$err" "timeout"
	assert_eq before "$(cat empty/t)"
	assert_eq "empty
failed
ok" "$(entries)" "what --out left on the host"
}

test_out_of_an_attacking_command_is_safe_on_the_host() {
	cp /etc/passwd passwd.before
	run "$SBX" run -i tiny --out out -- sh -c '
		cd /workspace
		busybox dd if=/dev/zero of=sparse bs=1 count=1 seek=1099511627775 2>/dev/null
		ln -s /etc/passwd passwd
		ln -s / root
		busybox mkfifo fifo
		echo s > suid; chmod 6755 suid
		d=tree; i=0; while [ $i -lt 100 ]; do d=$d/d; i=$((i+1)); done; mkdir -p $d; echo leaf > $d/leaf
		touch "$(printf "bad\nname\033[31m")"'
	assert_status 0
	assert_eq 1099511627776 "$(stat -c %s out/sparse)" "the sparse file's size"
	[ "$(stat -c %b out/sparse)" -lt 1024 ] || fail "the sparse file was written out whole"
	[ -L out/passwd ] && [ -L out/root ] || fail "symlinks were not written as symlinks"
	assert_eq /etc/passwd "$(readlink out/passwd)"
	cmp -s /etc/passwd passwd.before || fail "/etc/passwd changed"
	[ ! -e out/fifo ] && [ ! -L out/fifo ] || fail "the FIFO was copied"
	assert_contains "$err" "--out: skipped"
	assert_eq 755 "$(stat -c %a out/suid)" "the setuid file's mode"
	assert_eq leaf "$(cat out/tree/$(printf 'd/%.0s' $(seq 100))leaf)"
	[ -f "out/$(printf 'bad\nname\033[31m')" ] || fail "the name with control characters is missing"
	case "$err" in *$(printf '\033')*) fail "an escape character reached stderr" ;; esac
}

test_out_too_deep_or_over_the_cap_leaves_nothing() {
	run "$SBX" run -i tiny --out deep -- sh -c 'd=/workspace/t; i=0; while [ $i -lt 300 ]; do d=$d/d; i=$((i+1)); done; mkdir -p $d'
	assert_bad_input "deeper than"
	# hard links: each name is written out in full, past what the quota holds
	run "$SBX" run -i tiny --disk 4M --out cap -- sh -c 'cd /workspace && busybox dd if=/dev/urandom of=f bs=1M count=3 2>/dev/null && ln f g'
	assert_bad_input "stopped at the cap of 4M"
	assert_eq "" "$(entries)" "what --out left on the host"
}

test_interrupted_out_leaves_nothing() {
	local pid st sig try
	for sig in INT TERM; do
		# a copy may finish before the signal lands: then it is whole. Two
		# thousand files keep the copy out busy for a while (a tenth of a
		# second), so the signal meets it mid-way.
		for try in 1 2 3; do
			env --default-signal=INT "$SBX" run -i tiny --disk 128M --out out -- sh -c '
				cd /workspace && for i in $(seq 2000); do echo "$i" > "f$i"; done' &
			pid=$!
			# interrupt it once the copy out has begun (builtins only: a
			# poll that forks could sleep through the whole copy)
			while ! compgen -G '.out.sbxrun-*' >/dev/null; do
				{ [ -e out ] || ! kill -0 "$pid" 2>/dev/null; } && break
			done
			kill -"$sig" "$pid"
			st=0; wait "$pid" || st=$?
			if [ "$st" -gt 128 ]; then
				assert_eq "" "$(entries)" "left behind after SIG$sig"
				break
			fi
			assert_status_was_whole "$st"
			rm -rf out
			[ "$try" != 3 ] || fail "--out was never interrupted by SIG$sig (status $st)"
		done
	done
}

# A copy out that ended before the signal: complete, no temporary left.
assert_status_was_whole() {
	assert_eq 0 "$1" "status of a copy out the signal came too late for"
	assert_eq 2000 "$(ls out | wc -l)" "files in the copy"
	assert_eq out "$(entries)" "what --out left on the host"
}

test_out_into_a_non_empty_dir_is_refused() {
	mkdir out; echo mine > out/keep
	run "$SBX" run -i tiny --out out -- sh -c 'echo ran'
	assert_bad_input "--out 'out': exists and is not empty"
	assert_eq "" "$out" "the command's output"
	assert_eq keep "$(ls -A out)"
	touch file
	run "$SBX" run -i tiny --out file -- true
	assert_bad_input "--out 'file': exists and is not a directory"
	run "$SBX" run -i tiny --out no/such -- true
	assert_bad_input "--out 'no/such': its parent directory does not exist"
}

test_hint_only_for_what_is_not_inside() {
	echo data > x.txt
	run "$SBX" run -i tiny -- cat x.txt
	assert_status 1
	assert_contains "$err" "sbxrun: hint: 'x.txt' is on the host, not in the sandbox: bring it in with --copy x.txt"
	mkdir -p sub; echo s > sub/y.txt
	run "$SBX" run -i tiny -- cat ./sub/y.txt
	assert_contains "$err" "--copy ./sub/y.txt:sub/y.txt"
	run "$SBX" run -i tiny --copy x.txt -- sh -c 'cat "$1"; exit 1' sh x.txt
	assert_status 1
	assert_eq data "$out"
	assert_not_contains "$err" "hint"
	run "$SBX" run -q -i tiny -- cat x.txt
	assert_status 1
	assert_not_contains "$err" "hint"
	run "$SBX" run -i tiny -- cat /etc/hostname-nowhere x.txt-nowhere
	assert_not_contains "$err" "hint"
}

test_session_copy_and_out() {
	local n=cp$$
	"$SBX" session start --image tiny "$n" >/dev/null || fail "session start"
	at_exit "'$SBX' session stop '$n' >/dev/null 2>&1 || true"
	mkdir src; echo a > src/a
	run "$SBX" run --session "$n" --copy src:in/src -- sh -c 'cat /workspace/in/src/a; echo made > /workspace/m'
	assert_status 0
	assert_eq a "$out"
	run "$SBX" run --session "$n" --out out -- sh -c 'echo more > /workspace/m2; exit 5'
	assert_status 5
	assert_eq "a made more" "$(cat out/in/src/a out/m out/m2 | tr '\n' ' ' | sed 's/ $//')"
	run "$SBX" run --session "$n" --copy "src:/abs" -- true
	assert_bad_input "--copy"
}
