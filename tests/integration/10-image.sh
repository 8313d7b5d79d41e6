# also-as-root
# serial: the system image store in /var/lib/sbxrun (SBX_JOBS=2: after the user pass)
# root-only: test_system_store_searched_after_user_store test_system_store_serves_an_unprivileged_user
# root-only: test_system_store_copy_follows_a_reimport test_system_store_a_users_flocks_stall_no_root_command
# user-only: test_import_as_root_of_a_one_id_userns_says_why
# tests/integration/10-image.sh - the image store: import of the real minimal
# image, the digest cache, inspect/ls/rm, and crafted hostile tarballs that
# must be refused whole with nothing left behind.

store() { echo "${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/images"; }

# craft CASE OUT OUTSIDE: writes a tarball for one case with python3's tarfile.
craft() {
	python3 - "$1" "$2" "$3" <<'PY'
import io, sys, tarfile
case, out, outside = sys.argv[1:4]
t = tarfile.open(out, "w")
def add(name, data=b"x", mode=0o644, **kw):
    i = tarfile.TarInfo(name)
    for k, v in kw.items():
        setattr(i, k, v)
    i.mode = mode
    if i.type in (tarfile.REGTYPE, tarfile.AREGTYPE):
        i.size = len(data)
        t.addfile(i, io.BytesIO(data))
    else:
        t.addfile(i)
def d(name, mode=0o755):
    add(name, mode=mode, type=tarfile.DIRTYPE)
d("./"); d("./etc"); add("./etc/ok", b"fine\n")
if case == "abs":
    add(outside + "/pwned")
elif case == "dotdot":
    add("./etc/../../pwned")
elif case == "symlink":
    add("./link", type=tarfile.SYMTYPE, linkname=outside)
    add("./link/pwned")
elif case == "symlink-rel":
    add("./etc/up", type=tarfile.SYMTYPE, linkname="../../../../../../../../" + outside)
    add("./etc/up/pwned")
elif case == "symlink-file":
    add("./etc/s", type=tarfile.SYMTYPE, linkname=outside + "/sentinel")
    add("./etc/s", b"overwritten\n")
elif case == "hardlink":
    add("./etc/h", type=tarfile.LNKTYPE, linkname=outside + "/sentinel")
elif case == "hardlink-dotdot":
    add("./etc/h", type=tarfile.LNKTYPE, linkname="../" * 12 + outside.lstrip("/") + "/sentinel")
elif case == "hardlink-via-symlink":
    add("./etc/s", type=tarfile.SYMTYPE, linkname=outside + "/sentinel")
    add("./etc/h", type=tarfile.LNKTYPE, linkname="./etc/s")
elif case == "device":
    d("./dev")
    add("./dev/null", type=tarfile.CHRTYPE, devmajor=1, devminor=3, mode=0o666)
    add("./dev/fifo", type=tarfile.FIFOTYPE)
    add("./etc/after", b"after\n")
elif case == "setuid":
    add("./etc/su", b"#!/bin/sh\n", mode=0o6755)
elif case == "modes":
    d("./locked"); add("./locked/inner", b"in\n", mode=0o400)
    d("./locked/sub"); add("./locked/sub/deep", b"deep\n")
    add("./locked/sub", mode=0o000, type=tarfile.DIRTYPE)
    add("./locked", mode=0o500, type=tarfile.DIRTYPE)
elif case == "truncated":
    pass
t.close()
if case == "truncated":
    data = open(out, "rb").read()
    big = tarfile.TarInfo("./etc/big"); big.size = 100000
    open(out, "wb").write(data[:1024] + big.tobuf() + b"y" * 5000)
PY
}

# The store must look as before: same digest directories, no staging left.
store_snapshot() { ls -a "$(store)" | grep -v '^\.lock$'; ls "$(store)/names"; }

expect_refused() { # case needle
	local outside=$TESTDIR/outside
	mkdir -p "$outside"
	echo original > "$outside/sentinel"
	craft "$1" "$TESTDIR/$1.tar" "$outside"
	local before; before=$(store_snapshot)
	run "$SBX" image import "$TESTDIR/$1.tar" --name "bad-$1"
	assert_bad_input "$2"
	assert_contains "$err" "$TESTDIR/$1.tar" "stderr names the tarball"
	assert_eq "$before" "$(store_snapshot)" "store after refused '$1'"
	assert_eq "original" "$(cat "$outside/sentinel")" "sentinel"
	assert_eq "sentinel" "$(ls "$outside")" "files outside"
	[ ! -e "$TESTDIR/pwned" ] && [ ! -e "/pwned" ] || fail "a file escaped"
}

test_refuses_absolute_path() { expect_refused abs "absolute path"; }
test_refuses_dotdot() { expect_refused dotdot "'..'"; }
test_refuses_write_through_symlink() { expect_refused symlink "symlink"; }
test_refuses_write_through_relative_symlink() { expect_refused symlink-rel "symlink"; }
test_refuses_replacing_symlink() { expect_refused symlink-file "symlink"; }
test_refuses_hardlink_out() { expect_refused hardlink "absolute path"; }
test_refuses_hardlink_dotdot() { expect_refused hardlink-dotdot "'..'"; }
test_refuses_hardlink_to_symlink() { expect_refused hardlink-via-symlink "symlink"; }
test_refuses_truncated_tarball() { expect_refused truncated "etc/big"; }

test_refuses_non_tar() {
	echo "not an archive" > "$TESTDIR/junk.tar"
	run "$SBX" image import "$TESTDIR/junk.tar"
	assert_bad_input "junk.tar"
	run "$SBX" image import "$TESTDIR/missing.tar"
	assert_bad_input "missing.tar"
	run "$SBX" image import "$TESTDIR/junk.tar" --name "no/slash"
	assert_bad_input "no/slash"
}

test_device_nodes_skipped() {
	craft device "$TESTDIR/dev.tar" "$TESTDIR"
	run "$SBX" image import "$TESTDIR/dev.tar" --name devtest
	assert_status 0
	local d; d=$(cut -c1-64 "$(store)/names/devtest")
	[ -f "$(store)/$d/rootfs/etc/after" ] || fail "entry after the device node is missing"
	[ ! -e "$(store)/$d/rootfs/dev/null" ] || fail "device node was created"
	"$SBX" image rm devtest
}

test_setuid_stripped_and_owner() {
	craft setuid "$TESTDIR/su.tar" "$TESTDIR"
	run "$SBX" image import "$TESTDIR/su.tar" --name suidtest
	assert_status 0
	local d; d=$(cut -c1-64 "$(store)/names/suidtest")
	assert_eq 755 "$(stat -c %a "$(store)/$d/rootfs/etc/su")" "mode of a setuid file"
	local want; want=$([ "$AS_ROOT" = 1 ] && echo 2147000000 || id -u)
	assert_eq "$want" "$(stat -c %u "$(store)/$d/rootfs/etc/su")" "owner"
	assert_eq "$want" "$(stat -c %u "$(store)/$d/rootfs")" "owner of rootfs"
	"$SBX" image rm suidtest
}

test_restrictive_modes_extract_and_remove() {
	craft modes "$TESTDIR/modes.tar" "$TESTDIR"
	gzip -k "$TESTDIR/modes.tar"
	run "$SBX" image import "$TESTDIR/modes.tar.gz"
	assert_status 0
	local d; d=$(cut -c1-64 "$(store)/names/modes")
	assert_eq 500 "$(stat -c %a "$(store)/$d/rootfs/locked")" "mode of locked/"
	assert_eq 0 "$(stat -c %a "$(store)/$d/rootfs/locked/sub")" "mode of locked/sub"
	run "$SBX" image rm modes
	assert_status 0
	[ ! -e "$(store)/$d" ] || fail "image directory left after rm"
}

test_filters_xz_zstd() {
	craft setuid "$TESTDIR/f.tar" "$TESTDIR"
	xz -k "$TESTDIR/f.tar"
	zstd -q "$TESTDIR/f.tar" -o "$TESTDIR/f.tar.zst"
	run "$SBX" image import "$TESTDIR/f.tar.xz" --name fxz
	assert_status 0
	run "$SBX" image import "$TESTDIR/f.tar.zst" --name fzst
	assert_status 0
	"$SBX" image rm fxz
	"$SBX" image rm fzst
}

test_minimal_inspect_shows_image_sources() {
	run "$SBX" image inspect minimal
	assert_status 0
	assert_contains "$out" "sha256:$(sha256sum "$IMAGES/minimal.tar.zst" | cut -c1-64)"
	assert_contains "$out" "PATH=/opt/venv/bin"
	# The hosts come from the image's own apt sources; read them here the same way.
	local src hosts
	src=$(tar --zstd -xOf "$IMAGES/minimal.tar.zst" ./etc/apt/sources.list 2>/dev/null || true)
	src="$src$(tar --zstd -xOf "$IMAGES/minimal.tar.zst" --wildcards './etc/apt/sources.list.d/*' 2>/dev/null || true)"
	assert_contains "$src" "bookworm" "the image's apt sources"
	hosts=$(printf '%s\n' "$src" | grep -oE '[a-z]+://[^/ :]+' | sed 's|.*://||' | sort -u)
	[ -n "$hosts" ] || fail "no hosts in the image's apt sources"
	for h in $hosts; do assert_contains "$out" "$h" "inspect"; done
}

test_second_import_is_instant() {
	run "$SBX" -v image import "$IMAGES/minimal.tar.zst" --name minimal
	assert_status 0
	assert_contains "$err" "digest cache hit"
	assert_contains "$err" "already in the store"
	local t0 t1
	t0=$(date +%s%N)
	"$SBX" image import "$IMAGES/minimal.tar.zst" --name minimal-again
	t1=$(date +%s%N)
	[ $(((t1 - t0) / 1000000)) -lt 1000 ] || fail "second import took $(((t1 - t0) / 1000000)) ms"
	"$SBX" image rm minimal-again
	run "$SBX" image inspect minimal
	assert_status 0
}

test_ls_and_rm() {
	craft setuid "$TESTDIR/solo.tar" "$TESTDIR"
	echo "unique $TESTDIR" > "$TESTDIR/unique"
	tar -rf "$TESTDIR/solo.tar" -C "$TESTDIR" unique
	"$SBX" image import "$TESTDIR/solo.tar" -q
	run "$SBX" image ls
	assert_status 0
	assert_contains "$out" "minimal"
	assert_contains "$out" "solo"
	local d; d=$(cut -c1-64 "$(store)/names/solo")
	assert_contains "$out" "${d:0:12}"
	# A sandbox holds a shared lock on the image's .lock while it runs.
	bash -c 'exec 9<>"$1/.lock"; flock -s 9; exec sleep 10' _ "$(store)/$d" &
	local holder=$!
	sleep 0.3
	run "$SBX" image rm solo
	assert_bad_input "in use"
	kill "$holder"; wait "$holder" 2>/dev/null || true
	run "$SBX" image rm solo
	assert_status 0
	[ ! -e "$(store)/$d" ] || fail "image directory left after rm"
	run "$SBX" image ls
	assert_not_contains "$out" "solo"
	run "$SBX" image rm solo
	assert_bad_input "no image 'solo'"
	run "$SBX" image inspect nosuch
	assert_bad_input "no image 'nosuch'"
}

test_reimport_under_same_name_replaces() {
	craft setuid "$TESTDIR/v1.tar" "$TESTDIR"
	cp "$TESTDIR/v1.tar" "$TESTDIR/v2.tar"
	echo "v2 $TESTDIR" > "$TESTDIR/unique"
	tar -rf "$TESTDIR/v2.tar" -C "$TESTDIR" unique
	"$SBX" -q image import "$TESTDIR/v1.tar" --name replaced
	local d1; d1=$(cut -c1-64 "$(store)/names/replaced")
	"$SBX" -q image import "$TESTDIR/v2.tar" --name replaced
	local d2; d2=$(cut -c1-64 "$(store)/names/replaced")
	assert_ne "$d1" "$d2" "digest after re-import"
	# The old image, named by nothing now, is gone at the next store change.
	"$SBX" -q image import "$TESTDIR/v2.tar" --name replaced
	[ ! -e "$(store)/$d1" ] || grep -q "$d1" "$(store)"/names/* || fail "unnamed image $d1 was kept"
	"$SBX" image rm replaced
}

# image ls copes without a system store (only root can fill one: below).
test_image_ls_copes_without_a_system_store() {
	run "$SBX" image ls
	assert_status 0
}

# A lab fills the system store as root (image import --system puts it in
# /var/lib/sbxrun/images); it is searched after the user's and read-only.
test_system_store_searched_after_user_store() {
	run "$SBX" image ls
	assert_status 0
	[ ! -e /var/lib/sbxrun ] || skip "/var/lib/sbxrun exists already; not touching a real system store"
	at_exit 'rm -rf /var/lib/sbxrun'
	craft setuid "$TESTDIR/sys.tar" "$TESTDIR"
	echo "system $TESTDIR" > "$TESTDIR/unique"
	tar -rf "$TESTDIR/sys.tar" -C "$TESTDIR" unique
	"$SBX" -q image import --system "$TESTDIR/sys.tar" --name labimg
	run "$SBX" image ls
	assert_contains "$out" "labimg"
	assert_contains "$(printf '%s\n' "$out" | grep labimg)" "system"
	run "$SBX" image inspect labimg
	assert_status 0
	assert_contains "$out" "system"
	run "$SBX" image rm labimg
	assert_bad_input "system store"
	assert_eq 755 "$(stat -c %a /var/lib/sbxrun/images/"$(cut -c1-64 /var/lib/sbxrun/images/names/labimg)")" \
		"mode of a finished image directory"
}

# The test user, in a store of their own under $TESTDIR/u (not the one
# the suite filled: that one holds minimal's digest already).
as_user() {
	runuser -u "$SBX_TEST_USER" -- env -i HOME="$TESTDIR/u" XDG_DATA_HOME="$TESTDIR/u/data" \
		XDG_CACHE_HOME="$TESTDIR/u/cache" PATH="$PATH" LANG=C.UTF-8 \
		sh -c 'cd "$HOME" && exec "$@"' _ "$@"
}

user_setup() {
	[ -n "${SBX_TEST_USER:-}" ] && id "$SBX_TEST_USER" >/dev/null 2>&1 || skip "no test user"
	[ ! -e /var/lib/sbxrun ] || skip "/var/lib/sbxrun exists already; not touching a real system store"
	chmod 0711 "$TESTDIR"
	mkdir "$TESTDIR/u"
	chown "$SBX_TEST_USER" "$TESTDIR/u"
}

# Issue 35: a system image's files are the uid root's sandboxes map to,
# which a user's namespace cannot map (overlayfs refused every copy-up and
# new file: apt's write to /etc/apt/apt.conf.d failed). A user runs a copy
# of their own, unpacked once from the archive the system store keeps.
test_system_store_serves_an_unprivileged_user() {
	user_setup
	at_exit 'rm -rf /var/lib/sbxrun'
	run "$SBX" image import --system "$IMAGES/minimal.tar.zst" --name labsys
	assert_status 0
	# root's all the way down but the rootfs root's sandboxes map, closed
	local d s=/var/lib/sbxrun/images
	d=$(cut -c1-64 "$s/names/labsys")
	assert_eq "" "$(find /var/lib/sbxrun -path "$s/$d/rootfs" -prune -o ! -user root -print)" "not root's"
	assert_eq "" "$(find /var/lib/sbxrun -path "$s/$d/rootfs" -prune -o ! -type l -perm /022 -print)" \
		"writable by others"
	assert_eq 700 "$(stat -c %a "$s/$d/rootfs")" "mode of the rootfs"
	run as_user "$SBX" image ls
	assert_status 0
	assert_contains "$(printf '%s\n' "$out" | grep labsys)" "system"
	run as_user "$SBX" image inspect labsys
	assert_status 0
	# the user's sandbox: writes anywhere land in its own layer; apt works
	run as_user "$SBX" run --image labsys -p packages -- sh -c '
		echo e > /etc/mine && echo u > /usr/mine && echo >> /etc/passwd && cat /etc/mine /usr/mine &&
		apt-get -o Acquire::Languages=none update >/tmp/log 2>&1 &&
		apt-get install -y --no-install-recommends sl >>/tmp/log 2>&1 || cat /tmp/log; ls /usr/games/sl'
	assert_status 0
	assert_contains "$err" "unpacking a copy of your own"
	assert_eq "e
u
/usr/games/sl" "$out"
	[ -f "$TESTDIR/u/data/sbxrun/images/$d/system-copy" ] || fail "no copy in the user's store"
	assert_eq "$(id -u "$SBX_TEST_USER")" "$(stat -c %u "$TESTDIR/u/data/sbxrun/images/$d/rootfs/etc")" \
		"owner of the copy"
	[ ! -e "$s/$d/rootfs/etc/mine" ] || fail "the system image was written"
	# the second run takes the copy as it is
	run as_user "$SBX" run --image labsys -- cat /etc/hostname
	assert_status 0
	assert_not_contains "$err" "unpacking"
	# the user can change nothing of the system store
	run as_user "$SBX" image rm labsys
	assert_bad_input "system store"
	run as_user "$SBX" image import --system "$IMAGES/tiny.tar" --name labsys
	assert_bad_input "only root"
	run as_user sh -c "echo x > $s/names/labsys || echo x > $s/$d/archive || touch $s/$d/new || touch $s/new"
	assert_ne 0 "$status" "a write into the system store"
	assert_eq "$d" "$(cut -c1-64 "$s/names/labsys")" "the system store's name"
}

# Root imports another image under the name: the user's next use makes a new
# copy and the old one goes; a system store that others may write is not used.
test_system_store_copy_follows_a_reimport() {
	user_setup
	at_exit 'rm -rf /var/lib/sbxrun'
	craft setuid "$TESTDIR/v1.tar" "$TESTDIR"
	cp "$TESTDIR/v1.tar" "$TESTDIR/v2.tar"
	echo "v2 $TESTDIR" > "$TESTDIR/unique"
	tar -rf "$TESTDIR/v2.tar" -C "$TESTDIR" unique
	"$SBX" -q image import --system "$TESTDIR/v1.tar" --name labgc
	local d1 d2 u=$TESTDIR/u/data/sbxrun/images
	d1=$(cut -c1-64 /var/lib/sbxrun/images/names/labgc)
	run as_user "$SBX" image export labgc -o "$TESTDIR/u/e1.tar"
	assert_status 0
	[ -d "$u/$d1" ] || fail "no copy of v1"
	"$SBX" -q image import --system "$TESTDIR/v2.tar" --name labgc
	d2=$(cut -c1-64 /var/lib/sbxrun/images/names/labgc)
	run as_user "$SBX" image export labgc -o "$TESTDIR/u/e2.tar"
	assert_status 0
	assert_contains "$(tar -tf "$TESTDIR/u/e2.tar")" "unique"
	[ -d "$u/$d2" ] || fail "no copy of v2"
	[ ! -e "$u/$d1" ] || fail "the copy of v1 was kept"
	chmod o+w "/var/lib/sbxrun/images/$d2"
	rm -rf "${u:?}/$d2"
	run as_user "$SBX" image export labgc -o "$TESTDIR/u/e3.tar"
	assert_bad_input "not root's alone"
}

# Issue 40, item 7: a user who flock()s what of the system store they can
# open (every directory, every file) stalled root's run from its image for
# ever, silently (its use-lock was the directory's flock). Root's locks are
# lock files of its own (0600) now: the user's flocks are never waited on.
# The store's lock held by another of root's own commands is waited on,
# named, until it is let go.
test_system_store_a_users_flocks_stall_no_root_command() {
	user_setup
	"$SBX" -q image import --system "$IMAGES/tiny.tar" --name lablock
	as_user python3 -c '
import fcntl, os, sys, time
held = 0
for root, dirs, files in os.walk(sys.argv[1]):
    dirs[:] = [x for x in dirs if x != "rootfs"]
    for p in [root] + [os.path.join(root, f) for f in files]:
        try:
            fd = os.open(p, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held += 1
        except OSError:
            pass
print("held", held, flush=True)
time.sleep(300)' /var/lib/sbxrun > "$TESTDIR/held" &
	local holder=$!
	at_exit "kill $holder 2>/dev/null || true; rm -rf /var/lib/sbxrun"
	for _ in $(seq 100); do [ -s "$TESTDIR/held" ] && break; sleep 0.1; done
	assert_contains "$(cat "$TESTDIR/held")" "held" "the user's flocks"
	[ "$(cut -d' ' -f2 "$TESTDIR/held")" -ge 3 ] || fail "the user locked too little: $(cat "$TESTDIR/held")"
	run timeout 30 "$SBX" run --image lablock -- true
	assert_status 0 "root's run while the user holds the image's directory"
	assert_not_contains "$err" "waiting for the lock"
	run timeout 30 "$SBX" image import --system "$IMAGES/tiny.tar" --name lablock2
	assert_status 0 "root's import while the user holds the store's directories"
	# the user held every lock there was to take: root's are not among them
	assert_eq "" "$(find /var/lib/sbxrun -path '*/rootfs' -prune -o \( -name .lock -o -name lock \) ! -perm 0600 -print)" \
		"lock files others may open"
	# root's own holder of the store's lock: waited on, and said
	flock /var/lib/sbxrun/images/.lock sleep 3 &
	local own=$!
	sleep 0.3
	run timeout 30 "$SBX" image import --system "$IMAGES/tiny.tar" --name lablock3
	assert_status 0 "root's import after the store's lock was let go"
	assert_contains "$err" "sbxrun: waiting for the lock on '/var/lib/sbxrun/images/.lock' (held by another sbxrun process"
	wait "$own"
}

# Root of a user namespace that maps no id but its own (unshare -r): no
# uid is left for root's images (2147000000 on a host, the highest id
# mapped in a rootless container, 46-containers), so the import is refused
# in one line with the reason and a hint, and leaves no staging directory.
# User only: as root, unshare -r maps root alone too (the same path).
test_import_as_root_of_a_one_id_userns_says_why() {
	mkdir "$TESTDIR/h"
	run env HOME="$TESTDIR/h" XDG_DATA_HOME= unshare -r "$SBX" image import "$IMAGES/tiny.tar" --name t1
	assert_status 125
	assert_contains "$err" "sbxrun: error: import '$IMAGES/tiny.tar': prepare '"
	assert_contains "$err" "hint: as root sbxrun gives its images and sandboxes uid 2147000000, which this user namespace does not map"
	[ "$(printf '%s\n' "$err" | grep -c .)" = 2 ] || fail "not one error and one hint: $err"
	[ -z "$(find "$TESTDIR/h" -name '.staging-*')" ] || fail "a staging directory left: $(find "$TESTDIR/h" -name '.staging-*')"
}
