# tier net: test_npm_install_in_a_derived_image -- reaches the npm registry (npm install in the sandbox)
# npm through the package gateway, in an image derived the way a lab would:
# a packages session installs npm from Debian, is exported, and imported as
# an image, whose own npm then names the registry that @npm allows (issues 6
# and 8: also the export/import round trip).

test_npm_install_in_a_derived_image() {
	local n=npm$$
	"$SBX" session start -p packages --disk 4G "$n" >/dev/null || fail "session start"
	run "$SBX" run --session "$n" -- sh -c 'apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null 2>&1; npm --version'
	assert_status 0
	run "$SBX" image export "$n" -o "$TESTDIR/node.tar"
	"$SBX" session stop "$n" >/dev/null
	assert_status 0
	run "$SBX" image import "$TESTDIR/node.tar" --name "node$$"
	assert_status 0
	local reg
	reg=$("$SBX" run --image "node$$" -- npm config get registry)
	run "$SBX" image inspect "node$$"
	assert_contains "$out" "$reg"
	run "$SBX" run -p packages --image "node$$" -- sh -c 'cd /tmp && npm install --no-audit --no-fund is-number >/dev/null 2>&1; node -e "console.log(require(\"/tmp/node_modules/is-number\")(5))"; curl -sS --noproxy "*" https://192.0.2.10/ 2>&1 | head -c 200'
	"$SBX" image rm "node$$" >/dev/null
	assert_contains "$out" "true"
}
