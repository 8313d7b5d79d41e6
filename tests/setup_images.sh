#!/bin/bash
# Imports the test images into the running user's store (run by tests/run.sh
# as each test user; an unchanged tarball imports instantly).
set -eu
"$SBX" image import "$IMAGES/minimal.tar.zst" --name minimal
"$SBX" image import "$IMAGES/tiny.tar" --name tiny
# node (minimal with Debian's npm; tests/images.sh)
[ ! -s "$IMAGES/node.tar.zst" ] || "$SBX" image import "$IMAGES/node.tar.zst" --name node
