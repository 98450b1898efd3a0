#!/bin/sh
# SPDX-License-Identifier: MIT
# The code keeps to the map of docs/DESIGN.md ("Layers and files"): every
# file of src/, src/log/ and tools/ is in one row of the table and every row
# names files that are there; a file includes only headers of its own layer
# or lower ones, and the includes make no circle (a header's inline call
# into another file of tools/ counts as an include); each object uses only
# functions and variables defined by objects of its own layer or lower ones
# (nm), so that a hand-written declaration cannot hide an include.  The log
# (src/log/) is one layer that includes of the rest of src/ only lower
# layers, and the rest reaches it through log/log.h alone; tools/ includes
# nothing of src/.  Each name of the table's last column is defined in one
# of its row's files, each "NAME (file.c)", "NAME in file.c", "file.c's
# NAME" (and the like, below) of the comments and docs in the file it names
# (NAME with an underscore, or written NAME()), and no function or variable
# defined by an object of src/ or tools/ is used by that object alone (it
# would be static).
# Usage: sh tests/layers/check.sh BUILD_DIR [--dot]
# ends with "N passed, N failed"; with --dot, prints the include graph in
# Graphviz's dot language instead (one box per folder, arrows downwards).
BUILD=${1:-build}
DOT=${2:-}
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/pt-layers.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
check() { if [ "$2" = ok ]; then passed=$((passed + 1)); echo "ok $1"; else failed=$((failed + 1)); echo "FAIL $1"; [ -n "$3" ] && echo "$3" | sed 's/^/    /'; fi; }
FOLDERS="src src/log tools"

# The table's rows, "| LAYER name | `file`, `file` | role | `fn`, `fn` |":
# "file layer row" in files, "row name" in named.
sed -n '/^<!-- layers -->$/,/^<!-- \/layers -->$/p' "$HERE/docs/DESIGN.md" |
	awk -F'|' -v F="$T/files" -v N="$T/named" '/^\| *[0-9]+ / {
		row++; split($2, l, " ")
		s = $3; while (match(s, /`[^`]*`/)) { print substr(s, RSTART + 1, RLENGTH - 2), l[1], row > F; s = substr(s, RSTART + RLENGTH) }
		s = $5; while (match(s, /`[^`]*`/)) { print row, substr(s, RSTART + 1, RLENGTH - 2) > N; s = substr(s, RSTART + RLENGTH) }
	}'
[ -s "$T/files" ] || { echo "FAIL no layer table in docs/DESIGN.md"; echo "0 passed, 1 failed"; exit 1; }
touch "$T/named"
# A module is a file without .c or .h, named by its path (src/log/logread).
sed 's/\.[ch] / /' "$T/files" | cut -d' ' -f1,2 | sort -u > "$T/levels"

present() { for d in $FOLDERS; do for f in "$HERE/$d"/*; do [ -f "$f" ] && echo "${f#"$HERE"/}"; done; done; }
sources() { for d in $FOLDERS; do for f in "$HERE/$d"/*.[ch]; do [ -f "$f" ] && echo "${f#"$HERE"/}"; done; done; }

if [ -z "$DOT" ]; then
	present | sort > "$T/present"
	cut -d' ' -f1 "$T/files" | sort > "$T/listed"
	{ sort -u "$T/listed" | comm -23 "$T/present" - | sed 's/$/: in the folder, in no row/'
	  sort -u "$T/listed" | comm -13 "$T/present" - | sed 's/$/: in a row, not in the folder/'
	  uniq -d "$T/listed" | sed 's/$/: in more than one row/'; } > "$T/unlisted"
	if [ ! -s "$T/unlisted" ]; then check "every file of src/, src/log/ and tools/ is in one row of the table" ok
	else check "every file of src/, src/log/ and tools/ is in one row of the table" no "$(cat "$T/unlisted")"; fi
	cut -d' ' -f1 "$T/levels" | uniq -d > "$T/twice"
	if [ ! -s "$T/twice" ]; then check "a .c and its .h are in one layer" ok
	else check "a .c and its .h are in one layer" no "$(cat "$T/twice")"; fi
fi

# "from to" for each #include "x.h" between two modules, read relative to
# the including file's folder.
sources | while read -r rel; do
	from=${rel%.[ch]}
	dir=$(dirname "$rel")
	sed -n 's/^#include "\([a-z0-9_./]*\)\.h".*/\1/p' "$HERE/$rel" | while read -r to; do
		to=$(echo "$dir/$to" | sed 's|[a-z0-9_]*/\.\./||g')
		[ "$to" != "$from" ] && echo "$from $to"
	done
done | sort -u > "$T/edges"

# tools/: a call from a header's inline function to a function another
# file's object defines is an arrow too (the header then needs that file).
if ls "$BUILD"/tool-obj/*.o > /dev/null 2>&1; then
	for o in "$BUILD"/tool-obj/*.o; do
		nm --defined-only "$o" | awk -v m="tools/$(basename "$o" .o)" '$2 == "T" {print $3, m}'
	done | sort > "$T/tdefs"
	for h in "$HERE"/tools/*.h; do
		awk -v m="tools/$(basename "$h" .h)" '/^static inline/ {inl = 1} inl {
			s = $0; while (match(s, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
				w = substr(s, RSTART, RLENGTH); sub(/[ \t]*\($/, "", w); print w, m
				s = substr(s, RSTART + RLENGTH) } } /^}/ {inl = 0}' "$h"
	done | sort -u > "$T/tcalls"
	join "$T/tcalls" "$T/tdefs" | awk '$2 != $3 {print $2, $3}' >> "$T/edges"
	sort -u "$T/edges" -o "$T/edges"
	tools_built=ok
else
	tools_built=no
fi

if [ -n "$DOT" ]; then
	# One box per folder, a node per module labelled with its layer; every
	# arrow runs from a higher layer to a lower one, so dot draws it down.
	grep -v '\.' "$T/levels" | sort -k2,2n -k1,1 |
	awk 'NR == FNR {lv[$1] = $2; o[++k] = $1; next} {e[++n] = $0}
	END {
		print "digraph layers {"
		print "\tnode [shape=box, fontsize=10];"
		print "\tsubgraph cluster_src {\n\t\tlabel=\"src/\";"
		for (i = 1; i <= k; i++) if ((m = o[i]) ~ /^src\/[^\/]*$/) printf "\t\t\"%s\" [label=\"%s\\n%s\"];\n", m, substr(m, 5), lv[m]
		print "\t\tsubgraph cluster_src_log {\n\t\t\tlabel=\"src/log/ (the log: one room, one door, log.h)\";"
		for (i = 1; i <= k; i++) if ((m = o[i]) ~ /^src\/log\//) printf "\t\t\t\"%s\" [label=\"%s\\n%s\"];\n", m, substr(m, 9), lv[m]
		print "\t\t}\n\t}"
		print "\tsubgraph cluster_tools {\n\t\tlabel=\"tools/ (the command)\";"
		for (i = 1; i <= k; i++) if ((m = o[i]) ~ /^tools\//) printf "\t\t\"%s\" [label=\"%s\\n%s\"];\n", m, substr(m, 7), lv[m]
		print "\t}"
		for (i = 1; i <= n; i++) { split(e[i], a, " "); if ((a[1] in lv) && (a[2] in lv)) printf "\t\"%s\" -> \"%s\";\n", a[1], a[2] }
		print "}"
	}' - "$T/edges"
	exit 0
fi
check "the command's objects were built ($BUILD/tool-obj)" "$tools_built"

awk 'NR == FNR {lv[$1] = $2; next} !($2 in lv) {next} (lv[$2] + 0) > (lv[$1] + 0) {print $1 " (layer " lv[$1] ") includes " $2 " (layer " lv[$2] ")"}' \
	"$T/levels" "$T/edges" > "$T/up"
if [ ! -s "$T/up" ]; then check "no include runs up a layer" ok
else check "no include runs up a layer" no "$(cat "$T/up")"; fi
if tsort "$T/edges" > /dev/null 2> "$T/loop"; then check "the includes make no circle (src/, src/log/, tools/)" ok
else check "the includes make no circle (src/, src/log/, tools/)" no "$(cat "$T/loop")"; fi

# src/log/ is one room: its files in one layer, what it includes of the
# rest of src/ in lower layers only, and the rest of src/ reaching it
# through its public header, log/log.h, alone.
grep '^src/log/' "$T/levels" | cut -d' ' -f2 | sort -u > "$T/loglv"
if [ "$(wc -l < "$T/loglv")" -eq 1 ]; then check "the files of src/log/ are in one layer ($(cat "$T/loglv"))" ok
else check "the files of src/log/ are in one layer" no "layers: $(tr '\n' ' ' < "$T/loglv")"; fi
awk -v L="$(head -n 1 "$T/loglv")" 'NR == FNR {lv[$1] = $2; next}
	$1 ~ /^src\/log\// && $2 !~ /^src\/log\// && lv[$2] + 0 >= L + 0 {print $1 " includes " $2 " (layer " lv[$2] "), not below the log (layer " L ")"}' \
	"$T/levels" "$T/edges" > "$T/logout"
if [ ! -s "$T/logout" ]; then
	check "src/log/ includes of src/ only what lies below it ($(awk '$1 ~ /^src\/log\// && $2 !~ /^src\/log\// {print $2}' "$T/edges" | sort -u | tr '\n' ' '| sed 's/ $//'))" ok
else check "src/log/ includes of src/ only what lies below it" no "$(cat "$T/logout")"; fi
awk '$1 ~ /^src\// && $1 !~ /^src\/log\// && $2 ~ /^src\/log\// && $2 != "src/log/log" {print $1 " includes " $2}' "$T/edges" > "$T/login"
if [ ! -s "$T/login" ]; then check "the rest of src/ reaches src/log/ through src/log/log.h only" ok
else check "the rest of src/ reaches src/log/ through src/log/log.h only" no "$(cat "$T/login")"; fi
awk '$1 ~ /^tools\// && $2 !~ /^tools\// {print $1 " includes " $2}' "$T/edges" > "$T/toolsrc"
if [ ! -s "$T/toolsrc" ]; then check "tools/ includes nothing of src/ (a client of the public API)" ok
else check "tools/ includes nothing of src/ (a client of the public API)" no "$(cat "$T/toolsrc")"; fi

# objects: "symbol module" defined, and used
objects() { for o in "$BUILD"/obj/*.o "$BUILD"/obj/log/*.o "$BUILD"/tool-obj/*.o; do [ -f "$o" ] && echo "$o"; done; }
module_of() { case $1 in "$BUILD"/tool-obj/*) m=tools/${1#"$BUILD"/tool-obj/} ;; *) m=src/${1#"$BUILD"/obj/} ;; esac; echo "${m%.o}"; }
if ls "$BUILD"/obj/*.o "$BUILD"/obj/log/*.o > /dev/null 2>&1; then
	objects | while read -r o; do
		nm --defined-only "$o" | awk -v m="$(module_of "$o")" '$2 ~ /^[TDBRV]$/ {print $3, m}'
	done | sort > "$T/defs"
	objects | while read -r o; do
		nm -u "$o" | awk -v m="$(module_of "$o")" '{print $2, m}'
	done | sort > "$T/uses"
	join "$T/uses" "$T/defs" |
		awk -v L="$T/levels" 'BEGIN {while ((getline l < L) > 0) {split(l, a, " "); lv[a[1]] = a[2]}}
		     lv[$3] + 0 > lv[$2] + 0 {print $2 " (layer " lv[$2] ") uses " $1 " of " $3 " (layer " lv[$3] ")"}' > "$T/symup"
	if [ ! -s "$T/symup" ]; then check "no object uses a symbol of a higher layer" ok
	else check "no object uses a symbol of a higher layer" no "$(cat "$T/symup")"; fi

	# A function another object never uses is static, unless the public
	# headers declare it or a test, benchmark or example calls it (names
	# that begin with __ are the compiler's: __odr_asan.*).
	join -v 1 "$T/defs" "$T/uses" | grep -v '^main \|^__' | while read -r sym m; do
		grep -qrw --exclude-dir=layers -- "$sym" "$HERE/include" "$HERE/tests" "$HERE/bench" "$HERE/examples" 2> /dev/null ||
			echo "$sym: defined by $m.c and used by it alone (make it static)"
	done > "$T/alone"
	if [ ! -s "$T/alone" ]; then check "no function or variable of src/ or tools/ is used by its own file alone" ok
	else check "no function or variable of src/ or tools/ is used by its own file alone" no "$(cat "$T/alone")"; fi
else
	check "the objects were built ($BUILD/obj)" no
fi

# "NAME FILE" for what FILE defines: functions (a name followed by "(" on
# a line at column 0), macros, struct, union and enum tags, typedefs,
# enumerators, variables and members.
defined_names() {
	awk '
	/^[A-Za-z_]/ && !/^(return|case|goto|else|typedef)[^A-Za-z0-9_]/ {
		s = $0; gsub(/__attribute__[ \t]*\(\([^)]*(\([^)]*\)[^)]*)*\)\)/, "", s)
		while (match(s, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
			n = substr(s, RSTART, RLENGTH); sub(/[ \t]*\($/, "", n); s = substr(s, RSTART + RLENGTH)
			if (n !~ /^(if|while|for|switch|sizeof|return|_Alignas|_Static_assert|alignas|_Atomic)$/) { print n, FILENAME; break }
		}
	}
	/^[ \t]*#[ \t]*define[ \t]+[A-Za-z_]/ { s = $0; sub(/^[ \t]*#[ \t]*define[ \t]+/, "", s); sub(/[^A-Za-z0-9_].*/, "", s); print s, FILENAME }
	/(struct|union|enum)[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*\{/ { s = $0; sub(/^.*(struct|union|enum)[ \t]+/, "", s); sub(/[^A-Za-z0-9_].*/, "", s); print s, FILENAME }
	/^}[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*;/ { s = $0; sub(/^}[ \t]*/, "", s); sub(/[^A-Za-z0-9_].*/, "", s); print s, FILENAME }
	/\(\*[ \t]*[A-Za-z_][A-Za-z0-9_]*\)[ \t]*\(/ { s = $0; sub(/^[^(]*\(\*[ \t]*/, "", s); sub(/[^A-Za-z0-9_].*/, "", s); print s, FILENAME }
	/^[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*(=[^;]*)?,?[ \t]*(\/[*\/].*)?$/ { s = $0; sub(/^[ \t]*/, "", s); sub(/[^A-Za-z0-9_].*/, "", s); print s, FILENAME }
	/^[ \t]*((static|const|extern|volatile|_Atomic|_Thread_local|unsigned|signed|struct|union|enum|register)[ \t]+)*[A-Za-z_][A-Za-z0-9_]*[ \t*]+[*]*[A-Za-z_][A-Za-z0-9_]*[ \t]*(\[[^]]*\])*[ \t]*(=|;|,|:)/ && !/^[ \t]*(return|case|goto|else|sizeof)[^A-Za-z0-9_]/ {
		s = $0; sub(/^[ \t]*((static|const|extern|volatile|_Atomic|_Thread_local|unsigned|signed|struct|union|enum|register)[ \t]+)*[A-Za-z_][A-Za-z0-9_]*[ \t*]+/, "", s)
		while (match(s, /^[*]*[A-Za-z_][A-Za-z0-9_]*/)) {
			n = substr(s, RSTART, RLENGTH); sub(/^[*]*/, "", n); print n, FILENAME
			s = substr(s, RLENGTH + 1); sub(/^[ \t]*(\[[^]]*\])*[ \t]*(:[ \t]*[0-9]+[ \t]*)?/, "", s)
			if (s ~ /^=/) sub(/^=[^,;]*/, "", s)
			if (s !~ /^,/) break
			sub(/^,[ \t]*/, "", s)
		}
	}' "$@"
}

# The table's last column: each name defined in one of its row's files.
# shellcheck disable=SC2046 # paths of the tree: no blank in them
(cd "$HERE" && defined_names $(cut -d' ' -f1 "$T/files" | grep '\.[ch]$' | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done)) |
	sort -u > "$T/rowdefs"
awk -v D="$T/rowdefs" -v F="$T/files" 'BEGIN {
		while ((getline l < D) > 0) { split(l, a, " "); def[a[2]] = def[a[2]] " " a[1] " " }
		while ((getline l < F) > 0) { split(l, a, " "); files[a[3]] = files[a[3]] " " a[1] }
	}
	{
		row = $1; name = $2; n = split(files[row], f, " "); ok = 0
		for (i = 1; i <= n && !ok; i++)
			if (name ~ /\*$/) { p = substr(name, 1, length(name) - 1); ok = index(def[f[i]], " " p) > 0 }
			else ok = index(def[f[i]], " " name " ") > 0
		if (!ok) print name ": not defined in" files[row]
	}' "$T/named" > "$T/misnamed"
if [ ! -s "$T/misnamed" ]; then check "each function the table names is defined in its row's files ($(wc -l < "$T/named") names)" ok
else check "each function the table names is defined in its row's files" no "$(cat "$T/misnamed")"; fi

# The references to code in the comments and in the docs: "NAME (file.c)",
# "NAME() (file.c)", "NAME in file.c", "(NAME, file.c)", the names listed
# before them ("A and B (file.c)"), "file.c's NAME" and "file.c:NAME", where
# NAME has an underscore or is written NAME() (with ", file.c)": a
# lowercase letter too, not a system macro): "FILE LINE NAME TARGET".
# A comment, or a paragraph of a doc (its backquotes gone), is one text.
REFS='
	function line_at(pos,   i) { for (i = nseg; i > 1 && segoff[i] > pos; i--); return segline[i] }
	function named(name) { return name ~ /_|\(\)$/ }
	function flush(   s, t, off, m, name, target, before, names, k, i, at) {
		s = text; text = ""; off = 0
		for (t = s; match(t, /[a-z0-9_]+(\/[a-z0-9_]+)*\.[ch](\x27s |:)[A-Za-z_][A-Za-z0-9_]*(\(\))?/); t = substr(t, RSTART + RLENGTH)) {
			m = substr(t, RSTART, RLENGTH); target = m; sub(/(\x27s |:).*/, "", target); name = m; sub(/^[^:\x27]*(\x27s |:)/, "", name)
			at = line_at(off + RSTART + RLENGTH - 1); off += RSTART + RLENGTH - 1
			if (named(name)) { sub(/\(\)$/, "", name); print file, at, name, target }
		}
		off = 0
		while (match(s, /[A-Za-z_][A-Za-z0-9_]*(\(\))?( \(| in |, )[a-z0-9_]+(\/[a-z0-9_]+)*\.[ch][^A-Za-z0-9_]/)) {
			m = substr(s, RSTART, RLENGTH - 1); before = substr(s, 1, RSTART - 1)
			at = line_at(off + RSTART + RLENGTH - 2); off += RSTART + RLENGTH - 2
			s = substr(s, RSTART + RLENGTH - 1)
			if (m ~ /( \(|, )[a-z0-9_\/]+\.[ch]$/ && substr(s, 1, 1) != ")") continue
			if (m ~ / in [a-z0-9_\/]+\.[ch]$/ && substr(s, 1, 1) ~ /[:\x27]/) continue
			target = m; sub(/.*( \(| in |, )/, "", target)
			name = m; sub(/( \(| in |, ).*/, "", name)
			if (m ~ /, [a-z0-9_\/]+\.[ch]$/ && name !~ /[a-z]/) continue
			names = name
			while (match(before, /[A-Za-z_][A-Za-z0-9_]*(\(\))?(, | and |, and | or )$/)) {
				k = substr(before, RSTART, RLENGTH); sub(/(, | and |, and | or )$/, "", k)
				if (!named(k)) break
				names = k " " names; before = substr(before, 1, RSTART - 1)
			}
			k = split(names, a, " ")
			for (i = 1; i <= k; i++)
				if (named(a[i])) { sub(/\(\)$/, "", a[i]); print file, at, a[i], target }
		}
	}
	# text: the comment or paragraph, its lines joined; segline[i]: the line
	# of its i-th piece, which begins at offset segoff[i].
	function add(piece) { segoff[++nseg] = length(text) + 2; segline[nseg] = FNR; text = text " " piece }
	FNR == 1 { incomment = 0; text = ""; nseg = 0; if (!doc) file = FILENAME }
	doc { if ($0 ~ /^[ \t]*$/) { flush(); nseg = 0 } else add($0); next }
	{
		rest = $0
		while (rest != "") {
			if (incomment) {
				i = index(rest, "*/"); part = i ? substr(rest, 1, i - 1) : rest
				sub(/^[ \t]*\*+[ \t]?/, "", part); add(part)
				if (i) { incomment = 0; flush(); rest = substr(rest, i + 2) } else rest = ""
			} else {
				i = index(rest, "/*"); j = index(rest, "//")
				if (j && (!i || j < i)) { text = ""; nseg = 0; add(substr(rest, j + 2)); flush(); rest = "" }
				else if (i) { incomment = 1; text = ""; nseg = 0; rest = substr(rest, i + 2) }
				else rest = ""
			}
		}
	}
	END { if (doc) flush() }'
DOCS="docs/DESIGN.md docs/SECURITY.md docs/LOG-FORMAT.md docs/CONFORMANCE.md"
{ (cd "$HERE" && sources | xargs awk "$REFS")
  for d in $DOCS; do tr -d '`' < "$HERE/$d" | awk -v doc=1 -v file="$d" "$REFS"; done; } > "$T/refs"
# the file named: beside the comment's, then from the top, src/, src/log/, tools/, include/
while read -r file line name target; do
	path=
	for d in "$(dirname "$file")" . src src/log tools include; do
		[ -f "$HERE/$d/$target" ] && { path=$(echo "$d/$target" | sed 's|^\./||'); break; }
	done
	echo "$file $line $name $target ${path:--}"
done < "$T/refs" > "$T/resolved"
awk '$5 != "-" {print $5}' "$T/resolved" | sort -u > "$T/targets"
# shellcheck disable=SC2046
(cd "$HERE" && [ -s "$T/targets" ] && defined_names $(cat "$T/targets")) | sort -u > "$T/refdefs"
awk -v D="$T/refdefs" 'BEGIN { while ((getline l < D) > 0) def[l] = 1 }
	$5 == "-" { print $1 ":" $2 ": " $3 " (" $4 "): no such file"; next }
	!(($3 " " $5) in def) { print $1 ":" $2 ": " $3 " (" $4 "): not defined in " $5 }' "$T/resolved" > "$T/badrefs"
if [ ! -s "$T/badrefs" ]; then check "every NAME (file.c) of the comments and docs names a file that defines it ($(wc -l < "$T/refs") references)" ok
else while read -r bad; do check "a reference to code: $bad" no; done < "$T/badrefs"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
