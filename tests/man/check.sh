#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks the manual pages under docs/man:
# - every function declared in include/trace.h and include/posixtrace.h has a
#   page or a .so link page in docs/man/man3, whose NAME section names it and
#   whose SYNOPSIS declares it;
# - every .so link page is that one line, and its target exists;
# - every page formats without a warning (groff -man -ww), fits 80 columns,
#   has the sections its kind of page needs, and cites no source-tree file
#   (docs/*.md are cited where they are installed, share/doc/posixtrace);
# - every page it refers to as name(3) or name(7) exists, and posixtrace(1);
# - every example program (an .EX block of EXAMPLES with an #include)
#   compiles warning-free with each C compiler present.
# groff is installed (Debian's groff-base) when it is missing and we are root;
# otherwise the formatting checks are skipped, and say so.
# Prints one line per check, then "N passed, N failed"; exits non-zero if any
# check failed.
# Usage, from anywhere: sh tests/man/check.sh
cd "$(dirname "$0")/../.." || exit 2
man=docs/man
tmp=$(mktemp -d /tmp/pt_man.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT

pass=0; fail=0; skipped=0
ok()   { echo "ok   $*"; pass=$((pass + 1)); }
bad()  { echo "FAIL $*"; fail=$((fail + 1)); }
skip() { echo "SKIP $*"; skipped=$((skipped + 1)); }
have() { command -v "$1" >/dev/null 2>&1; }

if ! have groff && [ "$(id -u)" -eq 0 ] && have apt-get; then
	echo "installing groff-base for the formatting checks"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q groff-base >"$tmp/apt" 2>&1 ||
		{ apt-get update -q && apt-get install -y -q groff-base; } >"$tmp/apt" 2>&1 ||
		sed 's/^/     /' "$tmp/apt"
fi
have groff ||
	skip "formatting checks: groff is not installed, and could not be (needs root and apt-get)"

# The sections of a page (the .SH lines), one a line.
sections() { sed -n 's/^\.SH  *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$1"; }

# The text of section $2 of page $1, on one line.
section_text() {
	awk -v want="$2" '
	/^\.SH / { sub(/^\.SH +"?/, ""); sub(/"? *$/, ""); on = ($0 == want); next }
	on { printf "%s ", $0 }' "$1"
}

# The target of a link page, or nothing if $1 is a page of its own.
link_target() { sed -n '1s/^\.so  *\(.*\)$/\1/p' "$1"; }

# --- every declared function has a page ------------------------------------
# (posixtrace__* are the header's own implementation details, not API.)
grep -hE '^(int|void)[[:space:]]+\**(posix_trace|posixtrace)_[a-z_]+\(' \
	include/trace.h include/posixtrace.h |
	sed -E 's/^(int|void)[[:space:]]+\**([a-z_]+)\(.*/\2/' | grep -v '^posixtrace__' |
	sort -u >"$tmp/functions"
nstd=$(grep -c '^posix_trace_' "$tmp/functions")
if [ "$nstd" -eq 50 ]; then
	ok "include/trace.h declares the 50 functions of the standard"
else
	bad "include/trace.h: $nstd functions found, the standard has 50"
fi

while read -r fn; do
	page=$man/man3/$fn.3
	if [ ! -f "$page" ]; then
		bad "$fn: no page $page"
		continue
	fi
	target=$(link_target "$page")
	doc=$page
	[ -n "$target" ] && doc=$man/$target
	if [ ! -f "$doc" ]; then
		bad "$fn: $page links to $target, which does not exist"
	elif ! section_text "$doc" NAME | grep -qw "$fn"; then
		bad "$fn: the NAME section of $doc does not name it"
	elif ! section_text "$doc" SYNOPSIS | grep -q "$fn("; then
		bad "$fn: the SYNOPSIS of $doc does not declare it"
	else
		ok "$fn: ${target:-man3/$fn.3}"
	fi
done <"$tmp/functions"

# --- each page on its own ---------------------------------------------------
need_all="NAME
DESCRIPTION
SEE ALSO"
need_function="LIBRARY
SYNOPSIS
RETURN VALUE
ERRORS
EXAMPLES"
need_standard="IMPLEMENTATION-DEFINED BEHAVIOUR
STANDARDS"

# check_page FILE: the structure and the content of a page of its own.
check_page() {
	f=$1; base=$(basename "$f"); sec=${base##*.}; name=${base%.*}
	why=""
	th=$(sed -n 's/^\.TH  *\([^ ]*\)  *\([^ ]*\).*/\1 \2/p' "$f")
	[ "$th" = "$name $sec" ] || why="$why; .TH says \"$th\", not \"$name $sec\""
	need=$need_all
	case $name in
	posix_trace_*) need="$need
$need_function
$need_standard" ;;
	posixtrace_*) need="$need
$need_function" ;;
	esac
	[ "$sec" = 3 ] && need="$need
LIBRARY
SYNOPSIS"
	sections "$f" >"$tmp/sections"
	echo "$need" | sort -u | while read -r s; do
		grep -qxF "$s" "$tmp/sections" || echo "no $s section"
	done >"$tmp/missing"
	[ -s "$tmp/missing" ] && why="$why; $(paste -sd, "$tmp/missing")"
	# Source-tree paths and paths of a build machine do not belong in
	# installed pages; documents are cited where they are installed.
	if grep -nE '(^|[^a-z/])(docs|src|tests)/|/work/|/home/|/tmp/pt' "$f" >"$tmp/paths"; then
		why="$why; cites a path outside the installation: $(head -n 1 "$tmp/paths")"
	fi
	grep -oE '[^[:space:]()]*\.md' "$f" | grep -v '^/usr/local/share/doc/posixtrace/' >"$tmp/md"
	[ -s "$tmp/md" ] && why="$why; cites $(head -n 1 "$tmp/md") (not an installed path)"
	if [ -n "$why" ]; then
		bad "$f${why}"
	else
		ok "$f: sections and citations"
	fi
}

# check_format FILE: groff's warnings, and the width of the text.
check_format() {
	f=$1
	(cd $man && groff -man -ww -z "${f#"$man"/}") >"$tmp/warn" 2>&1
	if [ -s "$tmp/warn" ]; then
		bad "$f: groff warns: $(head -n 3 "$tmp/warn" | paste -sd' ')"
		return
	fi
	(cd $man && groff -man -Tascii -P-cbou -rLL=78n "${f#"$man"/}") 2>/dev/null |
		awk 'length > 80 { print length ": " $0 }' >"$tmp/wide"
	if [ -s "$tmp/wide" ]; then
		bad "$f: $(wc -l <"$tmp/wide") lines wider than 80 columns, first: $(head -n 1 "$tmp/wide")"
		return
	fi
	ok "$f: formats without warnings within 80 columns"
}

# check_refs FILE: the pages it refers to exist.
check_refs() {
	f=$1
	grep -E '^\.[BIR][BIR] ' "$f" |
		grep -oE '(posix_trace|posixtrace)[a-z_]*"? *\([137]\)' |
		sed -E 's/^([a-z_]+)"? *\(([137])\)$/\1 \2/' | sort -u >"$tmp/refs"
	: >"$tmp/dangling"
	while read -r ref sec; do
		if [ "$sec" = 1 ]; then
			[ -f "$man/man1/$ref.1" ] || [ -f "docs/$ref.1" ] || echo "$ref($sec)"
		else
			[ -f "$man/man$sec/$ref.$sec" ] || echo "$ref($sec)"
		fi
	done <"$tmp/refs" >"$tmp/dangling"
	if [ -s "$tmp/dangling" ]; then
		bad "$f: refers to missing pages: $(paste -sd' ' "$tmp/dangling")"
	else
		ok "$f: $(wc -l <"$tmp/refs") references to posixtrace pages resolve"
	fi
}

# The example programs of a page, unescaped, as $tmp/ex.N.c; prints N.
extract_examples() {
	awk -v out="$tmp/ex" '
	/^\.SH / { sub(/^\.SH +"?/, ""); sub(/"? *$/, ""); inex = ($0 == "EXAMPLES"); next }
	inex && /^\.EX/ { code = ""; incode = 1; next }
	inex && /^\.EE/ {
		incode = 0
		if (code ~ /#include/) {
			n++
			printf "%s", code > (out "." n ".c")
			close(out "." n ".c")
		}
		next
	}
	incode {
		line = $0
		gsub(/\\e/, "\001", line)
		gsub(/\\-/, "-", line)
		gsub(/\\\(aq/, "\047", line)
		gsub(/\\\(dq/, "\"", line)
		gsub(/\\&/, "", line)
		gsub(/\001/, "\\", line)
		code = code line "\n"
	}
	END { print n + 0 }' "$1"
}

compilers=""
for cc in gcc clang; do
	have "$cc" && compilers="$compilers $cc"
done
[ -n "$compilers" ] || skip "example programs: no C compiler (gcc, clang) installed"

# check_examples FILE: each example program compiles with each compiler.
check_examples() {
	f=$1
	rm -f "$tmp"/ex.*
	n=$(extract_examples "$f")
	[ "$n" -gt 0 ] || return 0
	i=1
	while [ "$i" -le "$n" ]; do
		for cc in $compilers; do
			if ! "$cc" -Wall -Wextra -Werror -Iinclude -c "$tmp/ex.$i.c" \
				-o "$tmp/ex.o" >"$tmp/cc" 2>&1; then
				bad "$f: example $i does not compile with $cc: $(head -n 2 "$tmp/cc" | paste -sd' ')"
				return
			fi
		done
		i=$((i + 1))
	done
	ok "$f: $n example program(s) compile with$compilers"
}

for f in "$man"/man3/*.3 "$man"/man7/*.7; do
	[ -f "$f" ] || continue
	target=$(link_target "$f")
	if [ -n "$target" ]; then
		if [ "$(wc -l <"$f")" -ne 1 ]; then
			bad "$f: a link page holds its .so line only"
		elif [ ! -f "$man/$target" ]; then
			bad "$f: .so target $target does not exist"
		else
			ok "$f: links to $target"
		fi
		continue
	fi
	check_page "$f"
	have groff && check_format "$f"
	check_refs "$f"
	[ -n "$compilers" ] && check_examples "$f"
done

[ "$skipped" -eq 0 ] || echo "$skipped check(s) skipped (SKIP lines above)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
