# Cargo through the package gateway (issue 43): in a `packages` sandbox of
# a profile naming `[packages] cargo = URL`, cargo reads /.cargo/config.toml
# (crates.io replaced by sparse+http://packages.sbxrun.internal/cargo/,
# written by sbxrun into the sandbox's layer) and
# CARGO_REGISTRIES_CRATES_IO_PROTOCOL=sparse; the host side checks index
# paths and names, serves index files with the lines the rules refuse taken
# out, and checks every .crate against its line's cksum before caching or
# serving it. The upstream is tests/helper/cargoreg.py, whose crates the
# host's cargo packages (cached per user). The cargo inside is the host's
# (Debian 12's cargo-web 1.96: Debian 12's own cargo 0.66 has no sparse
# protocol) with the rustc it asks `rustc -vV` of, bound file by file into
# the minimal image below /opt/rust (their libraries as ldd names them).

# The binds that put the host's cargo and rustc at /opt/rust; sets RUSTBIND.
rust_binds() {
	[ -x /usr/bin/cargo ] && [ -x /usr/bin/rustc ] && /usr/bin/cargo --version 2>/dev/null | grep -q '^cargo 1\.' ||
		skip "needs Debian's cargo-web and rustc-web (tests/deps.sh)"
	RUSTBIND="--bind /usr/bin/cargo:/opt/rust/bin/cargo --bind /usr/bin/rustc:/opt/rust/bin/rustc"
	RUSTBIND="$RUSTBIND --bind /usr/lib/rustlib:/opt/rust/lib/rustlib"
	local lib
	for lib in $( (ldd /usr/bin/cargo; ldd /usr/bin/rustc) | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
		grep -Ev '/(libc|libm|libdl|librt|libpthread|libresolv)\.so' | sort -u); do
		RUSTBIND="$RUSTBIND --bind $lib:/opt/rust/lib/${lib##*/}"
	done
}

# Starts the fixture (its crates built once per user); sets CR (its pid),
# CPORT (the index's), DPORT (the downloads'), and a lab profile naming
# both, and the app of ten dependencies.
cargo_fixture() {
	rust_binds
	local t0=$SECONDS
	"${PYTHON:-python3}" "$TOP/tests/helper/cargoreg.py" "${TMPDIR:-/tmp}/sbx-cargoreg-$(id -u)" \
		> "$TESTDIR/.cr" 2> "$TESTDIR/cr.err" &
	CR=$!
	for _ in $(seq 300); do [ -s "$TESTDIR/.cr" ] && break; sleep 0.1; done
	read -r CPORT DPORT < "$TESTDIR/.cr"
	[ -n "$DPORT" ] || fail "the fixture did not start: $(cat "$TESTDIR/cr.err")"
	echo "fixture: $((SECONDS - t0))s" >&2
	mkdir -p "$HOME/.config/sbxrun/profiles"
	PROF="$HOME/.config/sbxrun/profiles/cargolab$$.ini"
	printf 'inherit = packages\n[packages]\ncargo = http://host.sbxrun.internal:%s/index/ http://host.sbxrun.internal:%s/\ntimeout = 5s\n' \
		"$CPORT" "$DPORT" > "$PROF"
	at_exit "kill $CR 2>/dev/null || true; rm -f '$PROF'"
	mkdir -p "$TESTDIR/app/src"
	printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n' > "$TESTDIR/app/Cargo.toml"
	for d in abc Caps_Crate dep05 dep06 dep07 dep08 dep09 dep10 yank young; do
		printf '%s = "1"\n' "$d" >> "$TESTDIR/app/Cargo.toml"
	done
	echo 'fn main() {}' > "$TESTDIR/app/src/main.rs"
}

hits() { curl -sS "http://127.0.0.1:$CPORT/_hits"; }  # both ports' requests

# cargo generate-lockfile and fetch in a sandbox of the lab profile, the
# project at /app (a Cargo.lock there is kept: a pin)
CARGO_ENV='export PATH=/opt/rust/bin:$PATH LD_LIBRARY_PATH=/opt/rust/lib CARGO_HOME=/tmp/cargo-home'
CARGO_FETCH="$CARGO_ENV"'
	cp -r /app /tmp/app && cd /tmp/app && { [ -e Cargo.lock ] || cargo generate-lockfile -q 2>&1; } &&
	cargo fetch 2>&1; echo "fetch=$?"'

test_cargo_fetch_through_the_gateway() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	cargo_fixture
	local t0=$SECONDS
	run "$SBX" run -p "cargolab$$" --image minimal $RUSTBIND --bind "$TESTDIR/app:/app" --events "$TESTDIR/ev1" -- sh -c '
		echo "protocol=$CARGO_REGISTRIES_CRATES_IO_PROTOCOL"; cat /.cargo/config.toml
		'"$CARGO_FETCH"'
		grep -A1 "^name = \"\(yank\|young\|a\)\"" /tmp/app/Cargo.lock | tr "\n" " "; echo
		ls /tmp/cargo-home/registry/cache/*/ | LC_ALL=C sort | tr "\n" " "; echo'
	assert_status 0
	assert_contains "$out" "protocol=sparse"
	assert_contains "$out" 'registry = "sparse+http://packages.sbxrun.internal/cargo/"'
	assert_contains "$out" "fetch=0"
	# yank 1.1.0 is yanked: cargo resolves "1" to 1.0.0
	assert_contains "$out" 'name = "yank" version = "1.0.0"'
	assert_contains "$out" 'name = "young" version = "1.1.0"'
	assert_contains "$out" "Caps_Crate-1.0.0.crate a-1.0.0.crate ab-1.0.0.crate abc-1.0.0.crate dep05-1.0.0.crate"
	assert_contains "$out" "dep10-1.0.0.crate yank-1.0.0.crate young-1.1.0.crate"
	echo "cold cargo fetch (12 crates): $((SECONDS - t0))s" >&2
	local h
	h=$(hits)
	assert_eq 12 "$(printf '%s\n' "$h" | grep -c '\.crate 1$')" "crates fetched once each: $h"
	assert_contains "$(cat "$TESTDIR/ev1")" '"ecosystem":"cargo"'
	# a fresh sandbox and cargo home: every crate from the gateway's cache
	t0=$SECONDS
	run "$SBX" run -p "cargolab$$" --image minimal $RUSTBIND --bind "$TESTDIR/app:/app" --events "$TESTDIR/ev2" -- sh -c "$CARGO_FETCH"
	assert_contains "$out" "fetch=0"
	assert_eq "$(printf '%s\n' "$h" | grep '\.crate ')" "$(hits | grep '\.crate ')" "crate requests upstream after the warm fetch"
	assert_not_contains "$(cat "$TESTDIR/ev2")" '"cache":"miss"'
	echo "warm cargo fetch: $((SECONDS - t0))s" >&2
}

# What cargo asks, by curl: the sparse paths, the tampered crate, bad paths.
CPROBE='C=http://packages.sbxrun.internal/cargo
	for p in "$@"; do
		printf "%s " "$p"; curl -sS -x "$SBXRUN_PROXY" -o /tmp/body -w "%{http_code}" "$C/$p"
		printf " %s\n" "$(head -c 500 /tmp/body | tr "\n" "|")"
	done'

test_cargo_tampered_crate_and_bad_paths_refused() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	cargo_fixture
	run "$SBX" run -p "cargolab$$" --image minimal --events "$TESTDIR/ev" -- sh -c "$CPROBE" probe \
		config.json ev/il/evil dl/evil/1.0.0/download 1/a 1/A 3/a/ab 2/ab/../../x "ca/ps/caps_crate" \
		dl/Caps_Crate/1.0.0/download dl/a/1.0.0%2e/download dl/a/9.9.9/download dl/a/1.0.0/download/x \
		2/zz api/v1/crates/new ya/nk/yank dl/yank/1.1.0/download
	assert_status 0
	# yanked: left in the index as upstream marked it, its crate served (a pin)
	assert_contains "$out" '"vers":"1.1.0","deps":[],"cksum"'
	assert_contains "$out" '"yanked":true'
	assert_contains "$out" "dl/yank/1.1.0/download 200"
	assert_contains "$out" 'config.json 200 {"dl":"http://packages.sbxrun.internal/cargo/dl"}'
	assert_not_contains "$out" '"api"'
	assert_contains "$out" 'ev/il/evil 200 {"name":"evil","vers":"1.0.0"'
	assert_contains "$out" "dl/evil/1.0.0/download 502"
	assert_contains "$err" "integrity mismatch"
	assert_contains "$out" '1/a 200 {"name":"a"'
	assert_contains "$out" "1/A 404"
	assert_contains "$out" "3/a/ab 404"
	assert_contains "$out" "2/ab/../../x 404"
	assert_contains "$out" 'ca/ps/caps_crate 200 {"name":"Caps_Crate"'
	assert_contains "$out" "dl/Caps_Crate/1.0.0/download 200"
	assert_contains "$out" "dl/a/1.0.0%2e/download 404"
	assert_contains "$out" "dl/a/9.9.9/download 404"
	assert_contains "$out" "dl/a/1.0.0/download/x 404"
	assert_contains "$out" "2/zz 404"
	assert_contains "$out" "api/v1/crates/new 404"
	assert_not_contains "$(hits)" "evil-1.0.0.crate 2"
	local cached
	cached=$(ls "$XDG_CACHE_HOME/sbxrun/packages/sha256" 2>/dev/null | grep -cx '[0-9a-f]\{64\}')
	assert_eq 2 "$cached" "Caps_Crate's and yank 1.1.0's crates alone in the cache"
	# a profile that names the index alone: the download host is not let through
	printf 'inherit = packages\n[packages]\ncargo = http://host.sbxrun.internal:%s/index/\n' "$CPORT" > "$PROF"
	run "$SBX" run -p "cargolab$$" --image minimal -- sh -c "$CPROBE" probe dl/dep09/1.0.0/download
	assert_contains "$out" "dl/dep09/1.0.0/download 403"
	assert_contains "$out" "host 'host.sbxrun.internal' port $DPORT is not in profile"
	assert_not_contains "$(hits)" "dep09-1.0.0.crate"
}

# deny, min_age (a line without pubtime included), not_after, a malicious
# feed, mode = report and offline; a Cargo.lock pin asks for the .crate
# directly and is refused the same.
test_cargo_rules_deny_min_age_not_after_malicious_offline() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	cargo_fixture
	cp "$PROF" "$PROF.base"
	local probe="1/a yo/un/young dl/young/1.1.0/download dl/young/1.0.0/download no/da/nodate dl/nodate/1.0.0/download"
	# crates.io's names: one crate whatever the case, '-' and '_' alike
	printf 'deny = cargo:caps-crate\n' >> "$PROF"
	# under a rule the download host is the gateway's alone: no .crate around it
	run "$SBX" run -p "cargolab$$" --image minimal -- sh -c "$CPROBE"'
		curl -sS -x "$SBXRUN_PROXY" -o /dev/null -w "direct %{http_code}\n" \
			http://host.sbxrun.internal:'"$DPORT"'/crates/Caps_Crate/Caps_Crate-1.0.0.crate' probe ca/ps/caps_crate \
		dl/Caps_Crate/1.0.0/download 1/a
	assert_contains "$out" "direct 403"
	assert_contains "$out" "ca/ps/caps_crate 403"
	assert_contains "$out" "dl/Caps_Crate/1.0.0/download 403"
	assert_contains "$out" "1/a 200"
	assert_contains "$err" "cargo 'caps_crate' is denied by [packages] deny = cargo:caps-crate"
	assert_not_contains "$(hits)" "caps"
	# a lockfile made without rules, then min_age: the young pin and the
	# undated crate are refused, the rest still fetched
	cp "$PROF.base" "$PROF"
	mkdir "$TESTDIR/lock"
	run "$SBX" run -p "cargolab$$" --image minimal $RUSTBIND --bind "$TESTDIR/app:/app" --bind "$TESTDIR/lock:/lock:rw" \
		-- sh -c "$CARGO_FETCH"'; cp Cargo.lock /lock/'
	assert_contains "$out" "fetch=0"
	cp "$TESTDIR/lock/Cargo.lock" "$TESTDIR/app/"
	printf 'min_age = 1d\n' >> "$PROF"
	run "$SBX" run -p "cargolab$$" --image minimal $RUSTBIND --bind "$TESTDIR/app:/app" -- sh -c "$CARGO_FETCH; $CPROBE" probe $probe
	assert_contains "$out" "fetch=101"
	assert_contains "$out" '1/a 200 {"name":"a"'
	assert_contains "$out" 'yo/un/young 200 {"name":"young","vers":"1.0.0"'
	assert_not_contains "$out" '"vers":"1.1.0"'
	assert_contains "$out" "dl/young/1.1.0/download 403"
	assert_contains "$out" "dl/young/1.0.0/download 200"
	assert_contains "$out" "no/da/nodate 200 "$'\n'
	assert_contains "$out" "dl/nodate/1.0.0/download 403"
	assert_contains "$err" "cargo young 1.1.0: published 60 minutes ago, [packages] min_age is 24 hours"
	assert_contains "$err" "cargo nodate 1.0.0: its publication date is unknown, and [packages] min_age is 24 hours (the index line has no pubtime)"
	assert_contains "$err" "cargo 'young': 1 version younger than [packages] min_age (24 hours) hidden: 1.1.0"
	# min_age in report mode: served, and told
	printf 'mode = report\n' >> "$PROF"
	run "$SBX" run -p "cargolab$$" --image minimal -- sh -c "$CPROBE" probe dl/young/1.1.0/download dl/nodate/1.0.0/download
	assert_contains "$out" "dl/young/1.1.0/download 200"
	assert_contains "$out" "dl/nodate/1.0.0/download 200"
	assert_contains "$err" "min_age"
	# not_after: as the registry was 50 days ago (a line without pubtime hidden too)
	cp "$PROF.base" "$PROF"
	printf 'not_after = %s\n' "$(date -u -d '50 days ago' +%Y-%m-%d)" >> "$PROF"
	run "$SBX" run -p "cargolab$$" --image minimal -- sh -c "$CPROBE" probe $probe
	assert_contains "$out" "dl/young/1.1.0/download 403"
	assert_contains "$out" "dl/young/1.0.0/download 200"
	assert_contains "$out" "dl/nodate/1.0.0/download 403"
	assert_contains "$err" "after [packages] not_after"
	# a malicious-package feed (OSV, ecosystem crates.io) naming one version
	cp "$PROF.base" "$PROF"
	printf '{"id":"MAL-2026-77","affected":[{"package":{"ecosystem":"crates.io","name":"young"},"versions":["1.0.0"]}]}' \
		> "$TESTDIR/mal.json"
	printf 'malicious = %s\n' "$TESTDIR/mal.json" >> "$PROF"
	run "$SBX" run -p "cargolab$$" --image minimal -- sh -c "$CPROBE" probe yo/un/young dl/young/1.0.0/download dl/young/1.1.0/download
	assert_contains "$out" 'yo/un/young 200 {"name":"young","vers":"1.1.0"'
	assert_contains "$out" "dl/young/1.0.0/download 403"
	assert_contains "$out" "dl/young/1.1.0/download 200"
	assert_contains "$err" "MAL-2026-77"
	# offline: what the cache holds, nothing else (the fixture stopped)
	cp "$PROF.base" "$PROF"
	printf 'offline = yes\n' >> "$PROF"
	kill "$CR"
	run "$SBX" run -p "cargolab$$" --image minimal -- sh -c "$CPROBE" probe 1/a dl/a/1.0.0/download dl/evil/1.0.0/download ev/il/evil 3/z/zzz
	assert_contains "$out" '1/a 200 {"name":"a"'
	assert_contains "$out" "dl/a/1.0.0/download 200"
	assert_contains "$out" "dl/evil/1.0.0/download 503"
	assert_contains "$out" "3/z/zzz 503"
	assert_contains "$err" "offline: cargo 'evil@1.0.0' is not in the cache"
}

# Ten sandboxes at once fetch the same crates: each from upstream once
# (the artifact lock shared by their gateways).
test_cargo_ten_sandboxes_fetch_each_crate_once() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	cargo_fixture
	local t0=$SECONDS pids="" n=10
	for i in $(seq $n); do
		"$SBX" run -p "cargolab$$" --image minimal $RUSTBIND --bind "$TESTDIR/app:/app" -- sh -c "$CARGO_FETCH" \
			> "$TESTDIR/out$i" 2>&1 &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p" || true; done
	for i in $(seq $n); do
		assert_contains "$(cat "$TESTDIR/out$i")" "fetch=0" "sandbox $i: $(tail -5 "$TESTDIR/out$i")"
	done
	local h
	h=$(hits)
	assert_eq 12 "$(printf '%s\n' "$h" | grep -c '\.crate 1$')" "each crate once: $h"
	assert_eq 0 "$(printf '%s\n' "$h" | grep -c '\.crate [02-9]')" "no crate twice: $h"
	echo "$n sandboxes at once: $((SECONDS - t0))s" >&2
}
