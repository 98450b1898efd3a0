#!/bin/sh
# SPDX-License-Identifier: MIT
# The library's files keep to the layers docs/DESIGN.md lists ("Layers"):
# every file of src/ and src/log/ is in one, a file includes only headers of
# its own layer or lower ones, the includes make no circle, and each object
# file uses only functions and variables defined by objects of its own layer
# or lower ones (nm), so that a hand-written declaration cannot hide an
# import.  The log (src/log/) is one layer that includes of the rest of src/
# only lower layers, and the rest reaches it through log/log.h alone.  The
# command's files (tools/) make no circle either.
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

# A module is a file of src/ without .c or .h, named by its path under src/
# (log/logread); an include is read relative to the including file's folder.
modules() { for f in "$HERE"/src/*.[ch] "$HERE"/src/log/*.[ch]; do echo "${f#"$HERE"/src/}"; done; }

# every module of src/ and src/log/ is in a layer, once
modules | sed 's/\.[ch]$//' | sort -u > "$T/modules"
cut -d' ' -f1 "$T/levels" > "$T/listed"
if cmp -s "$T/modules" "$T/listed"; then check "every file of src/ and src/log/ is in one layer" ok
else check "every file of src/ and src/log/ is in one layer" no "$(diff "$T/modules" "$T/listed")"; fi

# "from to" for each #include "x.h" of src/ between two modules
modules | while read -r rel; do
	from=${rel%.[ch]}
	dir=$(dirname "$rel")
	sed -n 's/^#include "\([a-z0-9_./]*\)\.h".*/\1/p' "$HERE/src/$rel" | while read -r to; do
		to=$(echo "$dir/$to" | sed 's|^\./||; s|[a-z0-9_]*/\.\./||g')
		[ "$to" != "$from" ] && echo "$from $to"
	done
done | sort -u > "$T/edges"
awk 'NR == FNR {lv[$1] = $2; next} (lv[$2] + 0) > (lv[$1] + 0) {print $1 " (layer " lv[$1] ") includes " $2 " (layer " lv[$2] ")"}' \
	"$T/levels" "$T/edges" > "$T/up"
if [ ! -s "$T/up" ]; then check "no include runs up a layer" ok
else check "no include runs up a layer" no "$(cat "$T/up")"; fi
if tsort "$T/edges" > /dev/null 2> "$T/loop"; then check "the includes make no circle" ok
else check "the includes make no circle" no "$(cat "$T/loop")"; fi

# src/log/ is one room: its files in one layer, what it includes of the
# rest of src/ in lower layers only, and the rest of src/ reaching it
# through its public header, log/log.h, alone.
grep '^log/' "$T/levels" | cut -d' ' -f2 | sort -u > "$T/loglv"
if [ "$(wc -l < "$T/loglv")" -eq 1 ]; then check "the files of src/log/ are in one layer ($(cat "$T/loglv"))" ok
else check "the files of src/log/ are in one layer" no "layers: $(tr '\n' ' ' < "$T/loglv")"; fi
awk -v L="$(head -n 1 "$T/loglv")" 'NR == FNR {lv[$1] = $2; next}
	$1 ~ /^log\// && $2 !~ /^log\// && lv[$2] + 0 >= L + 0 {print $1 " includes " $2 " (layer " lv[$2] "), not below the log (layer " L ")"}' \
	"$T/levels" "$T/edges" > "$T/logout"
if [ ! -s "$T/logout" ]; then
	check "src/log/ includes of src/ only what lies below it ($(awk '$1 ~ /^log\// && $2 !~ /^log\// {print $2}' "$T/edges" | sort -u | tr '\n' ' '| sed 's/ $//'))" ok
else check "src/log/ includes of src/ only what lies below it" no "$(cat "$T/logout")"; fi
awk '$1 !~ /^log\// && $2 ~ /^log\// && $2 != "log/log" {print $1 " includes " $2}' "$T/edges" > "$T/login"
if [ ! -s "$T/login" ]; then check "the rest of src/ reaches src/log/ through log/log.h only" ok
else check "the rest of src/ reaches src/log/ through log/log.h only" no "$(cat "$T/login")"; fi

# objects: "module symbol" defined, and used
if ls "$BUILD"/obj/*.o "$BUILD"/obj/log/*.o > /dev/null 2>&1; then
	for o in "$BUILD"/obj/*.o "$BUILD"/obj/log/*.o; do
		m=${o#"$BUILD"/obj/}; m=${m%.o}
		nm --defined-only "$o" | awk -v m="$m" '$2 ~ /^[TDBRV]$/ {print $3, m}'
	done | sort > "$T/defs"
	for o in "$BUILD"/obj/*.o "$BUILD"/obj/log/*.o; do
		m=${o#"$BUILD"/obj/}; m=${m%.o}
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

# tools/ (the command): its files make no circle.  An include is an arrow,
# and so is a call from a header's inline function to a function another
# file's object defines (the header then needs that file).
for f in "$HERE"/tools/*.[ch]; do basename "$f" | sed 's/\.[ch]$//'; done | sort -u > "$T/tmodules"
for f in "$HERE"/tools/*.[ch]; do
	from=$(basename "$f" | sed 's/\.[ch]$//')
	sed -n 's/^#include "\([a-z0-9_]*\)\.h".*/\1/p' "$f" | while read -r to; do
		[ "$to" != "$from" ] && grep -qx "$to" "$T/tmodules" && echo "$from $to"
	done
done > "$T/tedges"
if ls "$BUILD"/tool-obj/*.o > /dev/null 2>&1; then
	for o in "$BUILD"/tool-obj/*.o; do
		nm --defined-only "$o" | awk -v m="$(basename "$o" .o)" '$2 == "T" {print $3, m}'
	done | sort > "$T/tdefs"
	for h in "$HERE"/tools/*.h; do
		awk -v m="$(basename "$h" .h)" '/^static inline/ {inl = 1} inl {
			s = $0; while (match(s, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
				w = substr(s, RSTART, RLENGTH); sub(/[ \t]*\($/, "", w); print w, m
				s = substr(s, RSTART + RLENGTH) } } /^}/ {inl = 0}' "$h"
	done | sort -u > "$T/tcalls"
	join "$T/tcalls" "$T/tdefs" | awk '$2 != $3 {print $2, $3}' >> "$T/tedges"
	check "the command's objects were built ($BUILD/tool-obj)" ok
else
	check "the command's objects were built ($BUILD/tool-obj)" no
fi
sort -u "$T/tedges" -o "$T/tedges"
if tsort "$T/tedges" > /dev/null 2> "$T/tloop"; then check "the files of tools/ make no circle (includes, inline calls)" ok
else check "the files of tools/ make no circle (includes, inline calls)" no "$(cat "$T/tloop")"; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
