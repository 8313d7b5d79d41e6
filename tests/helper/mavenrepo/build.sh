#!/bin/sh
# tests/helper/mavenrepo/build.sh OUT - a Maven repository in Maven
# Central's layout for 59-gateway-maven, made from real artifacts: each
# library's classes compiled by the JDK's javac and packed as a jar, its
# pom beside it, a .sha1 and .sha256 beside each file (as
# Central has them) and a maven-metadata.xml per artifact.
#   lab.example:dep01 .. dep10 1.0   ten libraries
#   lab.example:ranged 1.0 and 1.1   asked by a version range (metadata)
#   lab.example:app 1.0              depends on the ten, on ranged [1.0,2.0) and
#                                    on plexus-utils (Maven adds it to a build
#                                    extension that has none)
#   org.codehaus.plexus:plexus-utils 3.4.2  Debian's, from /usr/share/maven-repo
#   lab.example:evil 1.0             its jar changed after its checksums were made
#   lab.example:nosum 1.0            no checksum files at all
# OUT is made whole or not at all (built beside it, renamed).
set -eu
out=$1
work=$(mktemp -d "${out%/}.tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT
repo=$work/repo
mkdir -p "$work/src" "$work/classes" "$repo"

libs="dep01 dep02 dep03 dep04 dep05 dep06 dep07 dep08 dep09 dep10 ranged:1.0 ranged:1.1 app evil nosum"
for l in $libs; do
	a=${l%%:*} v=1.0
	[ "$l" = "${l#*:}" ] || v=${l#*:}
	pkg=$(echo "$a$v" | tr -d .)
	mkdir -p "$work/src/$pkg"
	printf 'package lab.example.%s;\npublic final class Lib {\n\tpublic static final String NAME = "%s %s";\n}\n' \
		"$pkg" "$a" "$v" > "$work/src/$pkg/Lib.java"
done
javac -nowarn -d "$work/classes" "$work"/src/*/Lib.java

pom() { # ARTIFACT VERSION [DEPENDENCIES...]
	printf '<?xml version="1.0" encoding="UTF-8"?>\n<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
	printf '  <modelVersion>4.0.0</modelVersion>\n  <groupId>lab.example</groupId>\n'
	printf '  <artifactId>%s</artifactId>\n  <version>%s</version>\n  <packaging>jar</packaging>\n' "$1" "$2"
	a1=$1
	shift 2
	[ $# = 0 ] && { printf '</project>\n'; return; }
	printf '  <dependencies>\n'
	[ "$a1" = app ] && printf '    <dependency><groupId>org.codehaus.plexus</groupId><artifactId>plexus-utils</artifactId><version>3.4.2</version></dependency>\n'
	for dep in "$@"; do
		printf '    <dependency><groupId>lab.example</groupId><artifactId>%s</artifactId><version>%s</version></dependency>\n' \
			"${dep%%:*}" "${dep#*:}"
	done
	printf '  </dependencies>\n</project>\n'
}

for l in $libs; do
	a=${l%%:*} v=1.0
	[ "$l" = "${l#*:}" ] || v=${l#*:}
	pkg=$(echo "$a$v" | tr -d .)
	d=$repo/lab/example/$a/$v
	mkdir -p "$d"
	echo "$d/$a-$v.jar lab/example/$pkg" >> "$work/jars"
	case $a in
	app) pom app 1.0 dep01:1.0 dep02:1.0 dep03:1.0 dep04:1.0 dep05:1.0 dep06:1.0 dep07:1.0 dep08:1.0 \
		dep09:1.0 dep10:1.0 'ranged:[1.0,2.0)' ;;
	*) pom "$a" "$v" ;;
	esac > "$d/$a-$v.pom"
done
# the jars, as the JDK's jar tool packs them (a manifest first, then the
# classes), written by one python3 rather than fifteen JVMs (25 s here)
python3 - "$work/classes" "$work/jars" <<'PY'
import os, sys, zipfile
classes, jars = sys.argv[1], sys.argv[2]
for line in open(jars):
    path, pkg = line.split()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nCreated-By: sbxrun tests\r\n\r\n")
        for root, _, files in sorted(os.walk(os.path.join(classes, pkg))):
            for f in sorted(files):
                full = os.path.join(root, f)
                z.write(full, os.path.relpath(full, classes))
PY
for l in $libs; do
	a=${l%%:*} v=1.0
	[ "$l" = "${l#*:}" ] || v=${l#*:}
	d=$repo/lab/example/$a/$v
	[ "$a" = nosum ] && continue
	for f in "$d/$a-$v.jar" "$d/$a-$v.pom"; do
		sha1sum "$f" | cut -d' ' -f1 > "$f.sha1"
		sha256sum "$f" | cut -d' ' -f1 > "$f.sha256"
	done
done
# Debian's plexus-utils, as Debian built it
pu=/usr/share/maven-repo/org/codehaus/plexus/plexus-utils/3.4.2
d=$repo/org/codehaus/plexus/plexus-utils/3.4.2
mkdir -p "$d"
cp -L "$pu/plexus-utils-3.4.2.jar" "$pu/plexus-utils-3.4.2.pom" "$d/"
for f in "$d"/*; do
	sha1sum "$f" | cut -d' ' -f1 > "$f.sha1"
	sha256sum "$f" | cut -d' ' -f1 > "$f.sha256"
done
# the tampered jar: one byte more than its checksums say
printf 'x' >> "$repo/lab/example/evil/1.0/evil-1.0.jar"

for a in dep01 dep02 dep03 dep04 dep05 dep06 dep07 dep08 dep09 dep10 ranged app evil nosum; do
	vs=1.0
	[ "$a" = ranged ] && vs="1.0 1.1"
	last=${vs##* }
	{
		printf '<?xml version="1.0" encoding="UTF-8"?>\n<metadata>\n  <groupId>lab.example</groupId>\n'
		printf '  <artifactId>%s</artifactId>\n  <versioning>\n    <latest>%s</latest>\n    <release>%s</release>\n' \
			"$a" "$last" "$last"
		printf '    <versions>\n'
		for v in $vs; do printf '      <version>%s</version>\n' "$v"; done
		printf '    </versions>\n    <lastUpdated>20260101000000</lastUpdated>\n  </versioning>\n</metadata>\n'
	} > "$repo/lab/example/$a/maven-metadata.xml"
	f=$repo/lab/example/$a/maven-metadata.xml
	sha1sum "$f" | cut -d' ' -f1 > "$f.sha1"
done
mv "$repo" "$out"
