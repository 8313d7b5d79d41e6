#!/bin/sh
# tools/move-rooms.sh - gives the two subsystems that lived in cmd/ rooms of
# their own (issue 28): the MCP server (src/cmd/mcp_*.c/h but the command's
# thin entry, mcp_cmd.c) goes to src/mcp/, the Kubernetes/OCI-seccomp export
# (kube_yaml.c, cluster.c) to src/cluster/. Both sit between cmd and
# session, side by side. It moves the files with git mv, rewrites the
# includes and the paths named in comments and documents, and teaches the
# Makefile and tools/check-layers.sh the two layers; then builds nothing
# and commits nothing (run `make WERROR=1` and commit). Safe to run again:
# what is moved already is left alone.
set -eu
cd "$(dirname "$0")/.."

mkdir -p src/mcp src/cluster
for f in src/cmd/mcp_*.c src/cmd/mcp_*.h; do
	[ -e "$f" ] || continue
	[ "$f" = src/cmd/mcp_cmd.c ] && continue
	git mv "$f" src/mcp/
done
for f in kube_yaml.c kube_yaml.h cluster.c cluster.h; do
	[ -e "src/cmd/$f" ] && git mv "src/cmd/$f" src/cluster/
done

# includes, and the paths comments and documents name
files=$(git grep -lE 'cmd/(mcp_|kube_yaml|cluster\.)' -- src tests tools bench HACKING.md README.md \
	':!tools/move-rooms.sh' || true)
for f in $files; do
	sed -i -e 's#cmd/mcp_#mcp/mcp_#g' -e 's#mcp/mcp_cmd\.#cmd/mcp_cmd.#g' \
		-e 's#cmd/kube_yaml\.#cluster/kube_yaml.#g' -e 's#cmd/cluster\.#cluster/cluster.#g' "$f"
done

# the Makefile's layers, from the top
sed -i 's/^LAYERS = cmd session sandbox net store base$/LAYERS = cmd mcp cluster session sandbox net store base/' Makefile
sed -i 's/^# src\/ by layer (HACKING.md): cmd -> session -> sandbox -> net, store -> base\.$/# src\/ by layer (HACKING.md): cmd -> mcp, cluster -> session -> sandbox -> net, store -> base./' Makefile

# a build directory made before the new layers existed gets them too
grep -q '^	@mkdir -p \$(@D)$' Makefile ||
	sed -i 's/^\(\$(BUILD)\/%\.o: src\/%\.c \$(HDRS) | \$(BUILD)\)$/\1\n\t@mkdir -p $(@D)/' Makefile

# tools/check-layers.sh: mcp and cluster below cmd, above session
sed -i -e 's/^\tcmd) echo 5 ;; session) echo 4 ;;/\tcmd) echo 6 ;; mcp | cluster) echo 5 ;; session) echo 4 ;;/' \
	-e 's/is not one of cmd session sandbox net store base/is not one of cmd mcp cluster session sandbox net store base/' \
	-e 's/^# headers of its own layer and of layers below it, never above. net and store$/# headers of its own layer and of layers below it, never above. mcp and cluster,/' \
	-e 's/^# sit side by side and do not include each other. Prints each offending$/# and net and store, sit side by side and do not include each other. Prints each offending/' \
	tools/check-layers.sh

grep -q '^LAYERS = cmd mcp cluster ' Makefile || { echo "move-rooms: Makefile's LAYERS not updated" >&2; exit 1; }
grep -q 'mcp | cluster) echo 5' tools/check-layers.sh || { echo "move-rooms: check-layers.sh not updated" >&2; exit 1; }
sh tools/check-layers.sh
echo "move-rooms: done; now make WERROR=1 and commit"
