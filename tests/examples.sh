#!/bin/bash
# tests/examples.sh - every shell example of README.md, docs/*.md and the man
# page's EXAMPLES section is a test (docs/testing.md, "Examples are tests").
#   examples.sh list FILE...   one line per example command:
#                              "run FILE:LINE<TAB>EXPECT<TAB>COMMAND", or
#                              "skip FILE:LINE<TAB>REASON" for an illustrative block;
#                              a fence without a language is an error (exit 1)
#   examples.sh run FILE...    runs them in a scratch directory per file, with
#                              `sbxrun` on PATH ($SBX); names FILE:LINE of each
#                              one that fails; exit 1 if any did
# In Markdown, ```sh (or shell, bash) blocks run and ```console blocks are
# shown, not run; `<!-- illustrative: REASON -->` on the line before a fence
# keeps an sh block from running. In the man page, .EX/.EE blocks of
# EXAMPLES run unless `.\" illustrative: REASON` stands before .EX. A command
# ending in `# fails` must fail, one ending in `# fails: TEXT` must also print
# TEXT. EXPECT is "-" (succeeds) or "!" and that TEXT.
set -u

list_md() { # file
	awk -v f="$1" '
	function flush() { if (cmd != "") print "run " f ":" at "\t" expect(cmd) "\t" cmd; cmd = "" }
	function expect(c) { return match(c, /# fails(: .*)?$/) ? "!" substr(c, RSTART + 9) : "-" }
	/^```/ && !infence {
		lang = substr($0, 4); sub(/[ \t].*/, "", lang); infence = 1; run = 0
		if (lang == "") { print "error " f ":" NR ": a fence without a language (```sh to run it, ```console to show it)"; bad = 1 }
		else if (lang ~ /^(sh|shell|bash)$/) {
			if (prev ~ /^<!-- illustrative: /) { r = prev; sub(/^<!-- illustrative: /, "", r); sub(/ *-->.*/, "", r); print "skip " f ":" NR "\t" r }
			else run = 1
		} else if (lang == "console") print "skip " f ":" NR "\tconsole"
		next
	}
	/^```/ && infence { flush(); infence = 0; prev = ""; next }
	infence && run {
		line = $0
		if (cmd == "" && (line ~ /^[ \t]*(#|$)/)) next
		if (cmd == "") at = NR
		# a command goes on after a trailing \ (joined) or | && || (a new line)
		if (sub(/\\$/, "", line)) { cmd = cmd line; next }
		cmd = cmd line
		if (line ~ /(\||&&)[ \t]*$/) cmd = cmd "\001"   # a newline, kept on one record
		else flush()
		next
	}
	!infence && $0 !~ /^[ \t]*$/ { prev = $0 }
	END { exit bad }' "$1"
}

list_man() { # file
	awk -v f="$1" '
	/^\.SH / { inex = ($0 ~ /^\.SH EXAMPLES/); next }
	!inex { next }
	/^\.\\" illustrative: / { r = $0; sub(/^\.\\" illustrative: /, "", r); ill = r; next }
	/^\.EX/ { inblock = 1; if (ill != "") print "skip " f ":" NR "\t" ill; skipping = (ill != ""); ill = ""; next }
	/^\.EE/ { inblock = 0; next }
	inblock && !skipping {
		line = $0
		gsub(/\\-/, "-", line); gsub(/\\\(aq/, "\047", line); gsub(/\\&/, "", line); gsub(/\\e/, "\\", line)
		if (line ~ /^[ \t]*(#|$)/) next
		print "run " f ":" NR "\t" (match(line, /# fails(: .*)?$/) ? "!" substr(line, RSTART + 9) : "-") "\t" line
	}' "$1"
}

list() {
	local f rc=0
	for f in "$@"; do
		case $f in
		*.md) list_md "$f" || rc=1 ;;
		*.1) list_man "$f" || rc=1 ;;
		*) echo "error $f: not Markdown or a man page"; rc=1 ;;
		esac
	done
	return $rc
}

# One command: 0 when it did what the example says (exit 0, or for
# "# fails: TEXT" a failure that printed TEXT).
run_one() { # where expect cmd
	local where=$1 expect=$2 cmd=$3 rc out
	out=$(timeout 300 bash -c "$cmd" < /dev/null 2>&1)
	rc=$?
	if [ "$expect" = - ] && [ $rc = 0 ]; then return 0; fi
	if [ "$expect" != - ] && [ $rc != 0 ] && [[ "$out" == *"${expect#!}"* ]]; then return 0; fi
	if [ "$expect" != - ]; then
		local text=${expect#!}
		echo "$where: example should fail${text:+ with '$text'} (exit $rc): $cmd"
	else
		echo "$where: example failed (exit $rc): $cmd"
	fi
	printf '%s\n' "$out" | tail -8 | sed 's/^/    | /'
	return 1
}

sessions() { sbxrun session ls 2>/dev/null | awk 'NR > 1 { print $1 }'; }

# The examples of one file, in order, in one scratch directory (a later one
# may use what an earlier one made); the sessions they left are stopped.
run_file() { # file
	local records rec kind where expect cmd before n dir=$work/$1
	records=$(list "$1") || { printf '%s\n' "$records" | grep '^error'; failed=$((failed + 1)); return; }
	mkdir -p "$dir"
	before=$(sessions)
	while IFS= read -r rec; do
		[ -n "$rec" ] || continue
		kind=${rec%% *} rec=${rec#* }
		where=${rec%%$'\t'*}
		if [ "$kind" = skip ]; then skipped=$((skipped + 1)); continue; fi
		rec=${rec#*$'\t'} expect=${rec%%$'\t'*} cmd=${rec#*$'\t'}
		cmd=${cmd//$'\001'/$'\n'}
		ran=$((ran + 1))
		(cd "$dir" && run_one "$where" "$expect" "$cmd") || { failed=$((failed + 1)); where_failed+=" $where"; }
	done <<< "$records"
	for n in $(sessions); do
		grep -qx "$n" <<< "$before" || sbxrun session stop "$n" > /dev/null 2>&1
	done
}

run_all() {
	local bin work f failed=0 ran=0 skipped=0 where_failed=""
	bin=$(mktemp -d "${TMPDIR:-/tmp}/sbx-examples.XXXXXX")
	ln -s "${SBX:?SBX names the binary}" "$bin/sbxrun"
	PATH="$bin:$PATH" work=$bin/work
	for f in "$@"; do run_file "$f"; done
	chmod -R u+rwX "$bin" 2>/dev/null; rm -rf "$bin"
	echo "examples: $ran run, $failed failed, $skipped illustrative blocks not run"
	# the places again, last, where a log's tail shows them
	[ -z "$where_failed" ] || echo "examples that failed:$where_failed"
	[ $failed = 0 ]
}

case ${1:-} in
list) shift; list "$@" ;;
run) shift; run_all "$@" ;;
*) echo "usage: tests/examples.sh list|run FILE..." >&2; exit 2 ;;
esac
