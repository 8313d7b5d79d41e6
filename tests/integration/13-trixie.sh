# also-as-root
# root-only: test_trixie_minimal_image
# tier slow: test_trixie_minimal_image -- builds a Debian 13 image with mmdebstrap (2.5 minutes here)
# tests/integration/13-trixie.sh - Debian 13 (trixie) as an image (issue 35):
# `image build minimal --suite trixie` builds it beside bookworm's minimal;
# its apt sources become @apt, its pip's index @pypi; apt installs through
# the package gateway from Debian's archive (the distribution's, which make
# check may reach); and Debian 13's AppArmor 4.1 compiles the profile the
# .deb ships whole (tests/apparmor.sh can only compile part of it with
# Debian 12's AppArmor 3). As root: mmdebstrap's root mode (a user without
# a subuid range builds in fakechroot mode, minutes slower).

test_trixie_minimal_image() {
	export XDG_DATA_HOME="$TESTDIR/data" XDG_CACHE_HOME="$TESTDIR/cache"
	local t0=$SECONDS
	run "$SBX" image build minimal --suite trixie
	assert_status 0
	echo "image build minimal --suite trixie: $((SECONDS - t0)) s" >&2
	run "$SBX" image ls
	assert_contains "$out" "minimal-trixie"
	run "$SBX" image inspect minimal-trixie
	assert_status 0
	assert_contains "$out" "recipe minimal (trixie)"
	assert_contains "$out" "pypi" "the pip index found at import (@pypi)"
	run "$SBX" run --image minimal-trixie -- sh -c '. /etc/os-release; echo "$VERSION_CODENAME"'
	assert_eq trixie "$out" "$err"
	# @apt from the image's own sources; a package (64-bit time_t names:
	# libcurl4t64 is curl's) through the gateway; AppArmor 4.1 compiles the profile
	# the profile as make install-apparmor writes it for the .deb
	mkdir -p "$TESTDIR/aa/etc/apparmor.d"
	sed 's|/usr/local/bin/sbxrun|/usr/bin/sbxrun|' "$TOP/contrib/apparmor-sbxrun" > "$TESTDIR/aa/etc/apparmor.d/sbxrun"
	# shellcheck disable=SC2016 # the sandbox's shell expands it
	run "$SBX" run --image minimal-trixie -p packages -- sh -c '
		cat > /tmp/sbxrun.aa
		dpkg-query -W -f="\${Package}\n" libcurl4t64
		apt-get -o Acquire::Languages=none update >/tmp/log 2>&1 &&
		apt-get install -y --no-install-recommends apparmor sl >>/tmp/log 2>&1 || cat /tmp/log
		ls /usr/games/sl; apparmor_parser --version | head -1
		apparmor_parser -Q -K -M /etc/apparmor.d/abi/4.0 /tmp/sbxrun.aa && echo compiled' < "$TESTDIR/aa/etc/apparmor.d/sbxrun"
	assert_status 0
	assert_contains "$out" "libcurl4t64"
	assert_contains "$out" "/usr/games/sl"
	assert_contains "$out" "AppArmor parser version 4."
	assert_contains "$out" "compiled"
	echo "apt through the gateway in trixie: $((SECONDS - t0)) s since the build began" >&2
}
