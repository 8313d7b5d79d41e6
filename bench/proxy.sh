#!/bin/sh
# proxy.sh - benchmark of the egress proxy on loopback (not a timed test):
# throughput against direct and the time added per connection.
set -eu
cd "$(dirname "$0")/.."
make -s all >/dev/null
objs=$(find build -name '*.o' ! -path build/cmd/main.o ! -path 'build/tests/*' | sort)
# shellcheck disable=SC2046,SC2086
cc -O2 -std=gnu11 -iquote src $(pkg-config --cflags json-c libarchive libcurl libcrypto libsystemd) -o build/proxy_bench bench/proxy_bench.c \
	$objs $(pkg-config --libs libseccomp libcap-ng libarchive libcurl inih libcrypto json-c) -lpthread -ldl
exec build/proxy_bench
