#!/bin/sh
# SPDX-License-Identifier: MIT
# The shared library exports exactly the symbols src/libposixtrace.map lists
# (the functions of <trace.h> and <posixtrace.h>), each in its version node,
# and every function the two public headers declare is among them.
# Usage: sh tests/abi/check.sh BUILD_DIR ; ends with "N passed, N failed".
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
LIB="$BUILD/libposixtrace.so"
T=$(mktemp -d "${TMPDIR:-/tmp}/pt-abi.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
check() { if [ "$2" = ok ]; then passed=$((passed + 1)); echo "ok $1"; else failed=$((failed + 1)); echo "FAIL $1"; [ -n "$3" ] && echo "$3" | sed 's/^/    /'; fi; }

# "symbol node" for each symbol, as the map gives it and as the library
# exports it (a symbol added later sits in a later node, which inherits the
# earlier one: binaries built against an older version keep working).
awk '/^[A-Z0-9_.]+ \{$/ {node = $1} /^[[:space:]]*posix[a-z_]*;$/ {s = $1; sub(/;$/, "", s); print s, node}' \
	"$HERE/src/libposixtrace.map" | sort > "$T/mapnodes"
cut -d' ' -f1 "$T/mapnodes" > "$T/map"
sed -n 's/^\([A-Z0-9_.]*\) {$/\1/p' "$HERE/src/libposixtrace.map" | sort > "$T/nodes"
nm -D --defined-only "$LIB" | awk '$2 ~ /^[TWDBRV]$/ {print $3}' > "$T/all"
grep -vxF -f "$T/nodes" "$T/all" | sed 's/@@.*//' | sort > "$T/exported"
if cmp -s "$T/map" "$T/exported"; then check "exports exactly the map's symbols" ok
else check "exports exactly the map's symbols" no "$(diff "$T/map" "$T/exported")"; fi
grep -vxF -f "$T/nodes" "$T/all" | sed 's/@@/ /' | sort > "$T/libnodes"
if cmp -s "$T/mapnodes" "$T/libnodes"; then check "every symbol is in the version node the map gives it" ok
else check "every symbol is in the version node the map gives it" no "$(diff "$T/mapnodes" "$T/libnodes")"; fi
# functions declared (not the header's static inline helpers) and variables
sed -n '/^static/d; s/^[a-z].* \**\(posix[a-z_]*\)(.*/\1/p; s/^extern .* \**\(posix[a-z_]*\);$/\1/p' \
	"$HERE/include/trace.h" "$HERE/include/posixtrace.h" | sort -u > "$T/declared"
if cmp -s "$T/declared" "$T/map"; then check "the map lists every declared function" ok
else check "the map lists every declared function" no "$(diff "$T/declared" "$T/map")"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
