# bench/lib.sh - sourced by bench/run.sh and bench/ab.sh when they run as
# root: the benchmarks measure as an unprivileged user, as issue 16 asks.
# bench_user_images DIR: makes SBX_BENCH_USER (sbxbench) when missing, builds
# the test images into DIR (tests/images.sh) and imports tiny and minimal
# into that user's store; sets BENCH_USER and BENCH_HOME.
bench_user_images() {
	BENCH_USER=${SBX_BENCH_USER:-sbxbench}
	id "$BENCH_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$BENCH_USER"
	BENCH_HOME=$(getent passwd "$BENCH_USER" | cut -d: -f6)
	bash "$top/tests/images.sh" "$1" >/dev/null
	chmod -R a+rX "$1"
	local name
	for name in tiny minimal; do
		runuser -u "$BENCH_USER" -- env -i HOME="$BENCH_HOME" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
			"$SBX" image import "$1/$name.tar$([ $name = minimal ] && echo .zst)" --name "$name" >/dev/null
	done
}
