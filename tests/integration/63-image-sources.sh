# also-as-root
# @go, @cargo, @maven: what an image's own go, cargo and Maven name as their
# sources, read once at import (store/discover.c, store/imgsrc.c), shown by
# image inspect, and the gateway's upstreams where a profile says
# go = @go, cargo = @cargo, maven = @maven. The image is tiny (busybox)
# with the host's real go binary (its GOROOT holding only bin/, which is
# all `go env` needs), Maven's home and the jar that carries its super POM
# from the host's Debian maven, and a cargo home whose config.toml replaces
# crates-io. An image may name no host on the host's loopback (hostaddr.c),
# so the fixtures of 55/58/59 cannot be its sources: what the gateway does
# with an image's upstream is shown by the rules (a denied package is
# refused before any fetch) and by the tunnel that is withheld; the fetch
# itself is 55/58/59's. No registry's name is written here: what the host's
# own go and Maven carry is read from them at test time.

GOBIN=/usr/lib/go-1.19/bin/go
MMB=/usr/share/maven/lib/maven-model-builder-3.x.jar

# Builds and imports the image once per test user (its digest then makes
# a second import instant); sets IMG.
src_image() {
	[ -x "$GOBIN" ] && [ -r "$MMB" ] && [ -d /usr/share/maven ] && command -v python3 > /dev/null ||
		skip "needs golang-go and maven (tests/deps.sh)"
	local t0=$SECONDS r=$TESTDIR/img
	mkdir -p "$r"
	tar -C "$r" -xf "$IMAGES/tiny.tar"
	mkdir -p "$r/usr/lib/go-1.19/bin" "$r/lib/x86_64-linux-gnu" "$r/lib64" \
		"$r/usr/share/java" "$r/usr/local/cargo/bin" "$r/root"
	cp "$GOBIN" "$r/usr/lib/go-1.19/bin/go"
	ln -s ../lib/go-1.19/bin/go "$r/usr/bin/go"
	cp /lib/x86_64-linux-gnu/libc.so.6 "$r/lib/x86_64-linux-gnu/"
	cp /lib64/ld-linux-x86-64.so.2 "$r/lib64/"
	for a in sed head readlink dirname wget tr; do [ -e "$r/bin/$a" ] || ln -s busybox "$r/bin/$a"; done
	cp -a /usr/share/maven "$r/usr/share/maven"
	cp -L "$MMB" "$r/usr/share/java/$(basename "$(readlink -f "$MMB")")"
	ln -s ../share/maven/bin/mvn "$r/usr/bin/mvn"
	cp /bin/busybox "$r/usr/local/cargo/bin/cargo"   # only there: cargo is never run
	printf '# a lab mirror\n[source.crates-io]\nreplace-with = "lab"\n\n[source."lab"]\nregistry = "sparse+https://crates.mirror.example/index/" # x\n' \
		> "$r/usr/local/cargo/config.toml"
	tar --numeric-owner --owner=0 --group=0 -C "$r" -cf "$TESTDIR/src.tar" .
	IMG=srcs
	run "$SBX" image import "$TESTDIR/src.tar" --name "$IMG"
	assert_status 0
	echo "image build and import: $((SECONDS - t0))s" >&2
}

# What the host's own go and Maven say, the test's expectations.
expected() {
	EGOPROXY=$(env -i HOME="$TESTDIR" PATH=/usr/bin:/bin "$GOBIN" env GOPROXY | tr '|' , | cut -d, -f1)
	local name
	name=$(env -i HOME="$TESTDIR" PATH=/usr/bin:/bin "$GOBIN" env GOSUMDB)
	EGOSUMDB="$(grep -aoE "${name//./[.]}[+][0-9a-f]{8}[+][A-Za-z0-9+/]{44}" "$GOBIN" | head -1) https://$name"
	EMAVEN=$(python3 -c 'import sys, zipfile, re
x = zipfile.ZipFile(sys.argv[1]).read("org/apache/maven/model/pom-4.0.0.xml").decode()
print(re.search(r"<repository>.*?<url>\s*(\S+?)\s*</url>", x, re.S).group(1))' "$MMB")
}

test_image_sources_read_at_import() {
	src_image
	expected
	run "$SBX" image inspect "$IMG"
	assert_status 0
	assert_contains "$out" "go proxy:     $EGOPROXY"$'\n'
	assert_contains "$out" "go sumdb:     $EGOSUMDB"$'\n'
	assert_contains "$out" "cargo index:  https://crates.mirror.example/index/"$'\n'
	assert_contains "$out" "maven repo:   $EMAVEN"
	assert_contains "$EGOSUMDB" "+"
	# a user's settings.xml mirror of central is what Maven uses: it wins
	# over the super POM; an image naming the host's loopback is refused
	local r=$TESTDIR/img
	mkdir -p "$r/root/.m2" "$r/root/.config/go"
	printf '<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0"><mirrors><mirror><id>a</id><mirrorOf>*,!central</mirrorOf><url>https://not.this.example/</url></mirror>\n<mirror><id>lab</id><mirrorOf>external:*</mirrorOf><url>https://maven.mirror.example/m2/</url></mirror></mirrors></settings>\n' \
		> "$r/root/.m2/settings.xml"
	printf 'GOPROXY=https://go.mirror.example/mod|https://second.example/\nGOSUMDB=sum.mirror.example https://127.0.0.1:9/\n' \
		> "$r/root/.config/go/env"
	tar --numeric-owner --owner=0 --group=0 -C "$r" -cf "$TESTDIR/src2.tar" .
	run "$SBX" image import "$TESTDIR/src2.tar" --name "$IMG-2"
	assert_status 0
	assert_contains "$err" "package source left out (an image may not grant it): go sum.mirror.example https://127.0.0.1:9/: loopback"
	run "$SBX" image inspect "$IMG-2"
	assert_contains "$out" "go proxy:     https://go.mirror.example/mod"$'\n'
	assert_contains "$out" "go sumdb:     (not recorded)"
	assert_contains "$out" "maven repo:   https://maven.mirror.example/m2/"
}

# go = @go, cargo = @cargo, maven = @maven: the gateway serves them from
# the image's sources, and under package rules the tunnel to those hosts
# is withheld as it is for @npm.
test_profile_says_the_images_own() {
	src_image
	expected
	mkdir -p "$HOME/.config/sbxrun/profiles"
	local prof="$HOME/.config/sbxrun/profiles/srclab$$.ini"
	printf 'inherit = packages\n[packages]\ngo = @go\ncargo = @cargo\nmaven = @maven\ndeny = maven:org.example:denied\ntimeout = 3s\n' > "$prof"
	at_exit "rm -f '$prof'"
	run "$SBX" run -p "srclab$$" --image "$IMG" -- sh -c '
		echo "proxy=$GOPROXY sumdb=$GOSUMDB"; cat /.cargo/config.toml; grep -c packages.sbxrun.internal/maven ~/.m2/settings.xml
		http_proxy=$SBXRUN_PROXY wget -q -O /dev/null http://packages.sbxrun.internal/maven/org/example/denied/1.0/denied-1.0.pom 2>&1 | head -2
		http_proxy=$SBXRUN_PROXY wget -q -O /dev/null http://crates.mirror.example/index/config.json 2>&1 | head -2; echo end'
	assert_contains "$out" "proxy=http://packages.sbxrun.internal/go sumdb=${EGOSUMDB%% *} http://packages.sbxrun.internal/go/sumdb/"
	assert_contains "$out" 'registry = "sparse+http://packages.sbxrun.internal/cargo/"'
	assert_contains "$out" "403 Forbidden"
	assert_contains "$err" "maven 'org.example:denied' is denied by [packages] deny = maven:org.example:denied"
	assert_contains "$err" "crates.mirror.example"
	assert_contains "$out" "end"
	# without the rules, the image without Maven: no /maven/ at all
	printf 'inherit = packages\n[packages]\nmaven = @maven\n' > "$prof"
	run "$SBX" run -p "srclab$$" --image tiny -- sh -c 'echo "[${GOPROXY-}]"; ls ~/.m2 2>&1 | head -1'
	assert_status 0
	assert_contains "$out" "[]"
	assert_not_contains "$out" "settings.xml"
	# bad values: one line naming the file and key, 125
	printf 'inherit = packages\n[packages]\ngo = @npm\n' > "$prof"
	run "$SBX" run -p "srclab$$" --image tiny -- true
	assert_status 125
	assert_contains "$err" "srclab$$.ini:3: [packages] go: '@npm': the image's own is @go"
	printf 'inherit = packages\n[network]\nallow = @gradle\n' > "$prof"
	run "$SBX" run -p "srclab$$" --image tiny -- true
	assert_status 125
	assert_contains "$err" "unknown host set '@gradle' (known: @apt, @pypi, @npm, @go, @cargo, @maven)"
}
