#!/bin/sh
# SPDX-License-Identifier: MIT
# The library's files keep to the layers docs/DESIGN.md lists ("Layers"):
# every file of src/ is in one, a file includes only headers of its own
# layer or lower ones, the includes make no circle, and each object file
# uses only functions and variables defined by objects of its own layer or
# lower ones (nm), so that a hand-written declaration cannot hide an import.
# Usage: sh tests/layers/check.sh BUILD_DIR ; ends with "N passed, N failed".
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/pt-layers.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
check() { if [ "$2" = ok ]; then passed=$((passed + 1)); echo "ok $1"; else failed=$((failed + 1)); echo "FAIL $1"; [ -n "$3" ] && echo "$3" | sed 's/^/    /'; fi; }

# "module level" from the list between the markers: "N name: module ..."
sed -n '/^<!-- layers -->$/,/^<!-- \/layers -->$/p' "$HERE/docs/DESIGN.md" |
	awk -F: '/^[0-9]+ / {split($1, a, " "); n = split($2, m, " "); for (i = 1; i <= n; i++) print m[i], a[1]}' |
	sort > "$T/levels"
[ -s "$T/levels" ] || { echo "FAIL no layer list in docs/DESIGN.md"; echo "0 passed, 1 failed"; exit 1; }

# every module of src/ is in a layer, once
for f in "$HERE"/src/*.[ch] "$HERE"/src/log/*.[ch]; do basename "$f" | sed 's/\.[ch]$//'; done | sort -u > "$T/modules"
cut -d' ' -f1 "$T/levels" > "$T/listed"
if cmp -s "$T/modules" "$T/listed"; then check "every file of src/ is in one layer" ok
else check "every file of src/ is in one layer" no "$(diff "$T/modules" "$T/listed")"; fi

# "from to" for each #include "x.h" of src/ between two modules
for f in "$HERE"/src/*.[ch] "$HERE"/src/log/*.[ch]; do
	from=$(basename "$f" | sed 's/\.[ch]$//')
	sed -n 's/^#include "\(\.\.\/\|log\/\)\{0,1\}\([a-z0-9_]*\)\.h".*/\2/p' "$f" | while read -r to; do
		[ "$to" != "$from" ] && echo "$from $to"
	done
done | sort -u > "$T/edges"
awk 'NR == FNR {lv[$1] = $2; next} (lv[$2] + 0) > (lv[$1] + 0) {print $1 " (layer " lv[$1] ") includes " $2 " (layer " lv[$2] ")"}' \
	"$T/levels" "$T/edges" > "$T/up"
if [ ! -s "$T/up" ]; then check "no include runs up a layer" ok
else check "no include runs up a layer" no "$(cat "$T/up")"; fi
if tsort "$T/edges" > /dev/null 2> "$T/loop"; then check "the includes make no circle" ok
else check "the includes make no circle" no "$(cat "$T/loop")"; fi

# objects: "module symbol" defined, and used
if ls "$BUILD"/obj/*.o "$BUILD"/obj/log/*.o > /dev/null 2>&1; then
	for o in "$BUILD"/obj/*.o "$BUILD"/obj/log/*.o; do
		m=$(basename "$o" .o)
		nm --defined-only "$o" | awk -v m="$m" '$2 ~ /^[TDBRV]$/ {print $3, m}'
	done | sort > "$T/defs"
	for o in "$BUILD"/obj/*.o "$BUILD"/obj/log/*.o; do
		m=$(basename "$o" .o)
		nm -u "$o" | awk -v m="$m" '{print $2, m}'
	done | sort > "$T/uses"
	join "$T/uses" "$T/defs" |
		awk -v L="$T/levels" 'BEGIN {while ((getline l < L) > 0) {split(l, a, " "); lv[a[1]] = a[2]}}
		     lv[$3] + 0 > lv[$2] + 0 {print $2 " (layer " lv[$2] ") uses " $1 " of " $3 " (layer " lv[$3] ")"}' > "$T/symup"
	if [ ! -s "$T/symup" ]; then check "no object uses a symbol of a higher layer" ok
	else check "no object uses a symbol of a higher layer" no "$(cat "$T/symup")"; fi
else
	check "the objects were built ($BUILD/obj)" no
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
