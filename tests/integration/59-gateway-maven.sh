# tier slow: test_gradle_resolves_through_the_gateway -- a real Gradle 4.4.1 build, two JVMs (30 s here at a load of 14)
# Maven through the package gateway (issue 43): in a `packages` sandbox
# with [packages] maven, ~/.m2/settings.xml mirrors every repository at
# http://packages.sbxrun.internal/maven/ through the proxy; the host side
# reads paths strictly, verifies every jar and pom against upstream's
# .sha256 or .sha1 before caching or serving it (none: refused), makes the
# .sha1 Maven asks for from the verified bytes, and serves
# maven-metadata.xml written again with only the versions the rules let
# through. The upstream is tests/helper/mavenrepo: classes compiled by the
# host's javac, packed as jars, with poms, checksums and metadata in
# Central's layout (plus Debian's own plexus-utils jar and pom), served by a
# python3 server that counts requests; built once per user and kept.
#
# The client is the host's Maven 3.8.7 and OpenJDK 17 (Debian's maven,
# tests/deps.sh), bound read-only into the minimal image: an image with
# maven would cost CI its build. Debian's archive has no
# maven-dependency-plugin in /usr/share/maven-repo (its package brings 58
# more), so the project resolves through Maven's own core instead: a build
# extension (lab.example:app) whose dependencies Maven resolves before any
# plugin runs, transitively, ten libraries, plexus-utils and a version
# range (read from maven-metadata.xml), all with `mvn validate`.

MVN_BINDS="--bind /usr/share/maven:/usr/share/maven --bind /etc/maven:/etc/maven --bind /usr/share/java:/usr/share/java
	--bind /usr/lib/jvm/java-17-openjdk-amd64:/usr/lib/jvm/java-17-openjdk-amd64
	--bind /etc/java-17-openjdk:/etc/java-17-openjdk"

# Builds the repository (once per user and version of the builder) and
# serves it; sets MP (the server's pid), MPORT and a lab profile naming it.
maven_fixture() {
	command -v mvn > /dev/null && command -v javac > /dev/null && [ -d /usr/lib/jvm/java-17-openjdk-amd64 ] &&
		[ -f /usr/share/maven-repo/org/codehaus/plexus/plexus-utils/3.4.2/plexus-utils-3.4.2.pom ] ||
		skip "needs Debian's maven and openjdk-17-jdk (tests/deps.sh)"
	local t0=$SECONDS sum repo
	sum=$(cat "$TOP/tests/helper/mavenrepo/build.sh" | sha256sum | cut -c1-12)
	repo="${TMPDIR:-/tmp}/sbx-mavenrepo-$(id -u)-$sum"
	[ -d "$repo" ] || sh "$TOP/tests/helper/mavenrepo/build.sh" "$repo" > "$TESTDIR/build.log" 2>&1 ||
		fail "cannot build the fixture repository: $(tail -5 "$TESTDIR/build.log")"
	echo "fixture: $((SECONDS - t0))s" >&2
	python3 -u "$TOP/tests/helper/mavenrepo/serve.py" "$repo" > "$TESTDIR/.mp" 2> "$TESTDIR/mp.err" &
	MP=$!
	for _ in $(seq 300); do [ -s "$TESTDIR/.mp" ] && break; sleep 0.1; done
	MPORT=$(head -1 "$TESTDIR/.mp")
	[ -n "$MPORT" ] || fail "the fixture did not start: $(cat "$TESTDIR/mp.err")"
	mkdir -p "$HOME/.config/sbxrun/profiles"
	PROF="$HOME/.config/sbxrun/profiles/mvnlab$$.ini"
	printf 'inherit = packages\n[packages]\nmaven = http://host.sbxrun.internal:%s/\ntimeout = 5s\n' "$MPORT" > "$PROF"
	cp "$PROF" "$PROF.base"
	at_exit "kill $MP 2>/dev/null || true; rm -f '$PROF' '$PROF.base'"
	mkdir -p "$TESTDIR/proj"
	cat > "$TESTDIR/proj/pom.xml" <<-'EOF'
	<project xmlns="http://maven.apache.org/POM/4.0.0">
	  <modelVersion>4.0.0</modelVersion>
	  <groupId>lab.example</groupId>
	  <artifactId>proj</artifactId>
	  <version>1.0</version>
	  <build>
	    <extensions>
	      <extension><groupId>lab.example</groupId><artifactId>app</artifactId><version>1.0</version></extension>
	    </extensions>
	  </build>
	</project>
	EOF
}

hits() { curl -sS "http://127.0.0.1:$MPORT/_hits"; }

# mvn validate in a sandbox of the lab profile, the project at /proj
MVN_VALIDATE='export JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 MAVEN_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
	cp -r /proj /tmp/proj && cd /tmp/proj && /usr/share/maven/bin/mvn -B -ntp validate > /tmp/mvn.log 2>&1
	echo "mvn=$?"; grep -E "ERROR|BUILD" /tmp/mvn.log | head -5
	echo "jars: $(find $HOME/.m2/repository -name "*.jar" | sed "s|.*/||" | sort | tr "\n" " ")"'

# Three sandboxes at once resolve the project cold: it succeeds in each and
# every file is fetched from upstream once (the artifact lock shared by
# their gateways); then a fresh sandbox, from the cache alone.
test_maven_resolve_in_three_sandboxes_at_once_then_from_the_cache() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	maven_fixture
	local t0=$SECONDS pids="" h
	for i in 1 2 3; do
		"$SBX" run -p "mvnlab$$" --image minimal $MVN_BINDS --bind "$TESTDIR/proj:/proj" --events "$TESTDIR/ev$i" -- \
			sh -c 'echo "mirror=$(grep -c "<url>http://packages.sbxrun.internal/maven/</url>" $HOME/.m2/settings.xml)"
			'"$MVN_VALIDATE" > "$TESTDIR/out$i" 2>&1 &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p" || true; done
	for i in 1 2 3; do
		out=$(cat "$TESTDIR/out$i")
		assert_contains "$out" "mvn=0" "sandbox $i: $(tail -5 "$TESTDIR/out$i")"
		assert_contains "$out" "BUILD SUCCESS"
		assert_contains "$out" "jars: app-1.0.jar dep01-1.0.jar dep02-1.0.jar dep03-1.0.jar dep04-1.0.jar dep05-1.0.jar dep06-1.0.jar dep07-1.0.jar dep08-1.0.jar dep09-1.0.jar dep10-1.0.jar plexus-utils-3.4.2.jar ranged-1.1.jar"
	done
	assert_contains "$(cat "$TESTDIR/out1")" "mirror=1" "the mirror in ~/.m2/settings.xml"
	echo "three sandboxes at once, cold (12 jars, a version range): $((SECONDS - t0))s" >&2
	h=$(hits)
	# every jar and pom once, and nothing but checksums, files and metadata
	assert_eq 13 "$(printf '%s\n' "$h" | grep -c '\.jar 1$')" "jars fetched once each: $h"
	assert_eq 0 "$(printf '%s\n' "$h" | grep -E '\.(jar|pom) ' | grep -c ' [02-9]$')" "no file twice: $h"
	assert_contains "$h" "/lab/example/ranged/maven-metadata.xml "
	assert_contains "$(cat "$TESTDIR/ev1" "$TESTDIR/ev2" "$TESTDIR/ev3")" '"ecosystem":"maven"'
	# a fresh sandbox and local repository, as [sandbox] user (uid 1000,
	# HOME /home/builder): every file from the cache. Root's HOME and the
	# user's have Maven's settings and Gradle's init script; Cargo's, with
	# [packages] cargo, is the one below / that every user's cargo reads
	t0=$SECONDS
	printf 'cargo = http://host.sbxrun.internal:1/\n' >> "$PROF"
	run "$SBX" run -p "mvnlab$$" --image minimal --user builder $MVN_BINDS --bind "$TESTDIR/proj:/proj" \
		--events "$TESTDIR/ev4" -- sh -c 'echo "uid=$(id -u) home=$HOME"
		for f in $HOME/.m2/settings.xml $HOME/.gradle/init.d/sbxrun.gradle /root/.m2/settings.xml \
			/root/.gradle/init.d/sbxrun.gradle; do
			grep -q "packages.sbxrun.internal/maven/" $f && echo "pointed: $f"
		done
		grep -h -e "<port>" -e "proxyPort" $HOME/.m2/settings.xml $HOME/.gradle/init.d/sbxrun.gradle
		grep -H sparse+ /.cargo/config.toml; echo "protocol=$CARGO_REGISTRIES_CRATES_IO_PROTOCOL"
		'"$MVN_VALIDATE"
	assert_contains "$out" "uid=1000 home=/home/builder"
	assert_contains "$out" "pointed: /home/builder/.m2/settings.xml"
	assert_contains "$out" "pointed: /home/builder/.gradle/init.d/sbxrun.gradle"
	assert_contains "$out" "pointed: /root/.m2/settings.xml"
	assert_contains "$out" "pointed: /root/.gradle/init.d/sbxrun.gradle"
	assert_contains "$out" "      <port>3128</port>"
	assert_contains "$out" "    System.setProperty(p + '.proxyPort', '3128')"
	assert_contains "$out" "/.cargo/config.toml:registry = \"sparse+http://packages.sbxrun.internal/cargo/\""
	assert_contains "$out" "protocol=sparse"
	assert_contains "$out" "mvn=0"
	assert_contains "$out" "jars: app-1.0.jar dep01-1.0.jar"
	assert_eq "$(printf '%s\n' "$h" | grep -E '\.(jar|pom)(\.sha[0-9]*)? ')" "$(hits | grep -E '\.(jar|pom)(\.sha[0-9]*)? ')" \
		"file requests upstream after the warm run"
	assert_not_contains "$(cat "$TESTDIR/ev4")" '"cache":"miss"'
	echo "warm mvn validate: $((SECONDS - t0))s" >&2
}

# curl as Maven asks: GET http://packages.sbxrun.internal/maven/PATH through the proxy
PROBE='M=http://packages.sbxrun.internal/maven
	for p in $PATHS; do
		printf "%s " "$p"; curl -sS --path-as-is -x "$SBXRUN_PROXY" -o /tmp/body -w "%{http_code}" "$M/$p"
		case $p in *.jar | *.pom) echo ;; *) printf " %s\n" "$(head -c 400 /tmp/body | tr -s "\n " ",")" ;; esac
	done'

test_maven_tampered_missing_checksum_and_bad_paths_refused() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	maven_fixture
	local d=lab/example
	run "$SBX" run -p "mvnlab$$" --image minimal --env PATHS="$d/evil/1.0/evil-1.0.jar $d/nosum/1.0/nosum-1.0.jar
		$d/nosum/1.0/nosum-1.0.pom $d/dep01/1.0/dep01-1.0.jar.sha1 $d/dep01/1.0/dep01-1.0.jar.sha256
		$d/dep01/1.0/dep01-1.0.jar.md5 $d/../etc/1.0/etc-1.0.jar $d/dep01/1.0/dep01-1.0%2ejar $d/dep01/1.0/other-1.0.jar
		$d/dep01/1.0-SNAPSHOT/dep01-1.0-SNAPSHOT.jar $d/dep01/.hidden/dep01-.hidden.jar $d/dep01/maven-metadata.xml
		$d/dep01/maven-metadata.xml.sha1 $d/dep01/1.0/dep01-1.0.jar" -- sh -c "$PROBE"'
		sha1sum /tmp/body; sha256sum /tmp/body'
	assert_status 0
	assert_contains "$out" "$d/evil/1.0/evil-1.0.jar 502"
	assert_contains "$out" "$d/nosum/1.0/nosum-1.0.jar 502"
	assert_contains "$out" "$d/nosum/1.0/nosum-1.0.pom 502"
	assert_contains "$out" "$d/dep01/1.0/dep01-1.0.jar.md5 404"
	assert_contains "$out" "$d/../etc/1.0/etc-1.0.jar 40"
	assert_contains "$out" "$d/dep01/1.0/dep01-1.0%2ejar 404"
	assert_contains "$out" "$d/dep01/1.0/other-1.0.jar 404"
	assert_contains "$out" "$d/dep01/1.0-SNAPSHOT/dep01-1.0-SNAPSHOT.jar 404"
	assert_contains "$out" "$d/dep01/.hidden/dep01-.hidden.jar 404"
	assert_contains "$out" "$d/dep01/maven-metadata.xml 200 <?xml,version=\"1.0\",encoding=\"UTF-8\"?>,<metadata>,<groupId>lab.example</groupId>,<artifactId>dep01</artifactId>,<versioning>,<latest>1.0</latest>,<release>1.0</release>"
	# the checksums served are those of the bytes served
	local jar=$(printf '%s\n' "$out" | grep "^$d/dep01/1.0/dep01-1.0.jar ") sha1 sha256
	assert_eq "$d/dep01/1.0/dep01-1.0.jar 200" "$jar"
	sha1=$(printf '%s\n' "$out" | sed -n 's/^\([0-9a-f]\{40\}\)  \/tmp\/body$/\1/p')
	sha256=$(printf '%s\n' "$out" | sed -n 's/^\([0-9a-f]\{64\}\)  \/tmp\/body$/\1/p')
	assert_contains "$out" "$d/dep01/1.0/dep01-1.0.jar.sha1 200 $sha1"
	assert_contains "$out" "$d/dep01/1.0/dep01-1.0.jar.sha256 200 $sha256"
	assert_contains "$err" "maven lab.example:evil@1.0: integrity mismatch: the index says sha256"
	assert_contains "$err" "(nothing cached)"
	assert_contains "$err" "maven lab.example:nosum 1.0: upstream has no checksum (.sha256 or .sha1)"
	assert_not_contains "$(hits)" "etc"
	assert_not_contains "$(hits)" "other-1.0"
}

# deny, min_age, not_after, a malicious feed, offline and mode = report:
# pinned files and metadata alike.
test_maven_rules_deny_min_age_not_after_malicious_offline() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	maven_fixture
	local d=lab/example
	local paths="$d/dep01/maven-metadata.xml $d/dep01/1.0/dep01-1.0.jar $d/dep01/1.0/dep01-1.0.pom $d/dep02/1.0/dep02-1.0.jar
		$d/ranged/maven-metadata.xml $d/ranged/1.1/ranged-1.1.jar $d/ranged/1.0/ranged-1.0.jar"
	printf 'deny = maven:lab.example:dep01\n' >> "$PROF"
	run "$SBX" run -p "mvnlab$$" --image minimal --env PATHS="$paths" -- sh -c "$PROBE"
	assert_contains "$out" "$d/dep01/maven-metadata.xml 403"
	assert_contains "$out" "$d/dep01/1.0/dep01-1.0.jar 403"
	assert_contains "$out" "$d/dep02/1.0/dep02-1.0.jar 200"
	assert_contains "$err" "maven 'lab.example:dep01' is denied by [packages] deny = maven:lab.example:dep01"
	assert_not_contains "$(hits)" "dep01"
	# min_age: every version is first seen now, so none is served, pinned or listed
	cp "$PROF.base" "$PROF"
	printf 'min_age = 1d\n' >> "$PROF"
	run "$SBX" run -p "mvnlab$$" --image minimal --env PATHS="$paths" -- sh -c "$PROBE"
	assert_contains "$out" "$d/dep02/1.0/dep02-1.0.jar 403"
	assert_contains "$out" "$d/ranged/maven-metadata.xml 200 <?xml,version=\"1.0\",encoding=\"UTF-8\"?>,<metadata>,<groupId>lab.example</groupId>,<artifactId>ranged</artifactId>,<versioning>,<versions>,</versions>"
	assert_contains "$err" "maven lab.example:dep02 1.0: first seen by the gateway"
	assert_contains "$err" "maven 'lab.example:ranged': 2 versions younger than [packages] min_age (24 hours) hidden"
	# not_after: the same, by the date first seen
	cp "$PROF.base" "$PROF"
	printf 'not_after = 2020-01-01\n' >> "$PROF"
	run "$SBX" run -p "mvnlab$$" --image minimal --env PATHS="$paths" -- sh -c "$PROBE"
	assert_contains "$out" "$d/ranged/1.0/ranged-1.0.jar 403"
	assert_contains "$out" "<versions>,</versions>"
	assert_contains "$err" "not_after"
	# a malicious-package feed (OSV) naming ranged 1.1: gone from the metadata
	# (latest and release rewritten), refused when pinned; Maven's range
	# then resolves to 1.0
	cp "$PROF.base" "$PROF"
	printf '{"id":"MAL-2026-7","affected":[{"package":{"ecosystem":"Maven","name":"lab.example:ranged"},"versions":["1.1"]}]}' \
		> "$TESTDIR/mal.json"
	printf 'malicious = %s\n' "$TESTDIR/mal.json" >> "$PROF"
	local before
	before=$(hits | grep 'ranged-1.1.jar ')  # served before the feed, by the deny step's probe
	run "$SBX" run -p "mvnlab$$" --image minimal $MVN_BINDS --bind "$TESTDIR/proj:/proj" --env PATHS="$paths" -- sh -c \
		"$PROBE; $MVN_VALIDATE"
	assert_contains "$out" "$d/ranged/maven-metadata.xml 200 <?xml,version=\"1.0\",encoding=\"UTF-8\"?>,<metadata>,<groupId>lab.example</groupId>,<artifactId>ranged</artifactId>,<versioning>,<latest>1.0</latest>,<release>1.0</release>,<versions>,<version>1.0</version>,</versions>"
	assert_contains "$out" "$d/ranged/1.1/ranged-1.1.jar 403"
	assert_contains "$out" "mvn=0"
	assert_contains "$out" "plexus-utils-3.4.2.jar ranged-1.0.jar"
	assert_not_contains "$(printf '%s\n' "$out" | grep '^jars:')" "ranged-1.1.jar"
	assert_contains "$err" "MAL-2026-7"
	assert_eq "$before" "$(hits | grep 'ranged-1.1.jar ')" "ranged 1.1's jar asked upstream under the feed"
	# mode = report: the deny is told and the file served
	cp "$PROF.base" "$PROF"
	printf 'deny = maven:lab.example:dep03\nmode = report\n' >> "$PROF"
	run "$SBX" run -p "mvnlab$$" --image minimal --env PATHS="$d/dep03/1.0/dep03-1.0.jar" -- sh -c "$PROBE"
	assert_contains "$out" "$d/dep03/1.0/dep03-1.0.jar 200"
	assert_contains "$err" "deny = maven:lab.example:dep03"
	# offline: what the cache holds (dep02, ranged 1.0), nothing else (a
	# classifier never asked for)
	cp "$PROF.base" "$PROF"
	printf 'offline = yes\n' >> "$PROF"
	kill "$MP"
	run "$SBX" run -p "mvnlab$$" --image minimal --env PATHS="$paths $d/dep04/1.0/dep04-1.0-sources.jar" -- sh -c "$PROBE"
	assert_contains "$out" "$d/dep02/1.0/dep02-1.0.jar 200"
	assert_contains "$out" "$d/ranged/1.0/ranged-1.0.jar 200"
	assert_contains "$out" "$d/dep04/1.0/dep04-1.0-sources.jar 503"
	assert_contains "$err" "offline: maven 'lab.example:dep04@1.0' is not in the cache"
}

# Gradle (Debian's 4.4.1, the host's, bound in as Maven is) through the
# init script sbxrun writes below ~/.gradle/init.d: a build whose
# repositories name JCenter (its buildscript's), Maven Central, another
# https host with a jar URL of its own and mavenLocal resolves
# lab.example:app (the ten, the range from its metadata, plexus-utils)
# from the gateway, every remote repository pointed at it and the plugin
# management too; the local one stays. In the slow tier: the two JVMs of a
# Gradle 4.4 start are 30 s at a load of 14 (the files themselves are
# checked in make check, by the first test).
GRADLE_BINDS="--bind /usr/share/gradle:/usr/share/gradle --bind /etc/ssl/certs/java:/etc/ssl/certs/java"
test_gradle_resolves_through_the_gateway() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	[ -x /usr/share/gradle/bin/gradle ] && [ -f /etc/ssl/certs/java/cacerts ] ||
		skip "needs Debian's gradle (tests/deps.sh)"
	maven_fixture
	mkdir -p "$TESTDIR/gproj"
	cat > "$TESTDIR/gproj/settings.gradle" <<-'EOF2'
	rootProject.name = 'gproj'
	gradle.settingsEvaluated { s -> s.pluginManagement.repositories.each { println "plugin repo: ${it.url}" } }
	EOF2
	cat > "$TESTDIR/gproj/build.gradle" <<-'EOF2'
	buildscript { repositories { jcenter() } }
	configurations { deps }
	repositories {
	    mavenCentral()
	    maven { url 'https://repo.example.org/m2'; artifactUrls 'https://jars.example.org/' }
	    mavenLocal()
	}
	dependencies { deps 'lab.example:app:1.0' }
	task resolve {
	    doLast {
	        (buildscript.repositories + repositories).each {
	            println "repo: ${it.name} ${it.url} ${it instanceof MavenArtifactRepository ? it.artifactUrls : ''}"
	        }
	        println 'jars: ' + configurations.deps.files.collect { it.name }.sort().join(' ')
	    }
	}
	EOF2
	local t0=$SECONDS
	run "$SBX" run -p "mvnlab$$" --image minimal $MVN_BINDS $GRADLE_BINDS --bind "$TESTDIR/gproj:/gproj" \
		--events "$TESTDIR/ev" -- sh -c 'export JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
		export GRADLE_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
		cp -r /gproj /tmp/gproj && cd /tmp/gproj &&
		/usr/share/gradle/bin/gradle --no-daemon -q resolve > /tmp/gradle.log 2>&1
		echo "gradle=$?"; grep -v -e "^WARNING" /tmp/gradle.log | head -40'
	echo "gradle resolve, cold: $((SECONDS - t0))s" >&2
	assert_status 0
	assert_contains "$out" "gradle=0"
	assert_contains "$out" "jars: app-1.0.jar dep01-1.0.jar dep02-1.0.jar dep03-1.0.jar dep04-1.0.jar dep05-1.0.jar dep06-1.0.jar dep07-1.0.jar dep08-1.0.jar dep09-1.0.jar dep10-1.0.jar plexus-utils-3.4.2.jar ranged-1.1.jar"
	assert_contains "$out" "plugin repo: http://packages.sbxrun.internal/maven/"
	assert_contains "$out" "repo: BintrayJCenter http://packages.sbxrun.internal/maven/ []"
	assert_contains "$out" "repo: MavenRepo http://packages.sbxrun.internal/maven/ []"
	assert_contains "$out" "repo: maven http://packages.sbxrun.internal/maven/ []"
	assert_contains "$out" "repo: MavenLocal file:/root/.m2/repository"
	assert_contains "$(hits)" "/lab/example/app/1.0/app-1.0.jar 1"
	assert_contains "$(hits)" "/lab/example/ranged/maven-metadata.xml"
	assert_not_contains "$(hits)" "example.org"
	assert_contains "$(cat "$TESTDIR/ev")" '"ecosystem":"maven"'
}
