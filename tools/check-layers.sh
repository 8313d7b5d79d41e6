#!/bin/sh
# tools/check-layers.sh - src/ is layered (HACKING.md): a file may include
# headers of its own layer and of layers below it, never above. undo (change
# sets and snapshots) sits above session and below mcp and cluster. mcp and cluster,
# and net and store, sit side by side and do not include each other; gateway
# sits on net and pkg (and base) and does not include store; term (the pty
# and the output filter) and pkg (what package registries send, read and
# judged, without I/O) sit beside net and store, on base. Prints each offending
# #include line and exits 1; `make check` runs it.
cd "$(dirname "$0")/.." || exit 2
rank() {
	case $1 in
	cmd) echo 8 ;; mcp | cluster) echo 7 ;; undo) echo 6 ;; session) echo 5 ;; sandbox) echo 4 ;; gateway) echo 3 ;; net | store | term | pkg) echo 2 ;; base) echo 1 ;; *) echo 0 ;;
	esac
}
bad=0
for f in src/*/*.c src/*/*.h; do
	from=${f#src/}; from=${from%%/*}
	rf=$(rank "$from")
	[ "$rf" = 0 ] && { echo "$f: layer '$from' is not one of cmd mcp cluster undo session sandbox gateway net store term pkg base"; bad=1; continue; }
	# shellcheck disable=SC2013
	for to in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case $to in
		*/*) layer=${to%%/*} ;;
		*) echo "$f: #include \"$to\": name the layer (\"base/$to\")"; bad=1; continue ;;
		esac
		rt=$(rank "$layer")
		if [ "$rt" = 0 ]; then
			echo "$f: #include \"$to\": no layer '$layer'"; bad=1
		elif [ "$rt" -gt "$rf" ] || { [ "$rt" = "$rf" ] && [ "$layer" != "$from" ]; } ||
			{ [ "$from" = gateway ] && [ "$layer" = store ]; }; then
			echo "$f: #include \"$to\": $from may not depend on $layer"; bad=1
		fi
	done
done
exit $bad
