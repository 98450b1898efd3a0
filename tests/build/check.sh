#!/bin/sh
# SPDX-License-Identifier: MIT
# The build follows what it detected: a command built without libdw (LIBDW=,
# or libdw not installed yet, as on a fresh machine before `make check`
# installs it) is relinked by the next build that finds libdw, and the other
# way round; a build that detects the same as the last one relinks nothing.
# `make demo` runs the dependency step before it builds.
# Usage: sh tests/build/check.sh BUILD_DIR ; ends with "N passed, N failed".
BUILD=${1:-build}
B="$BUILD/build-check"
passed=0 failed=0 skipped=0
check() { if [ "$2" = ok ]; then passed=$((passed + 1)); echo "ok $1"; else failed=$((failed + 1)); echo "FAIL $1"; [ -n "$3" ] && echo "$3" | sed 's/^/    /'; fi; }
mk() { make --no-print-directory BUILD="$B" OPT=-O0 "$@"; }
linked_libdw() { readelf -d "$B/posixtrace" 2>/dev/null | grep -q 'NEEDED.*libdw'; }

rm -rf "$B"
if mk LIBDW= "$B/posixtrace" > "$BUILD/build-check.log" 2>&1 && ! linked_libdw; then
	check "LIBDW= builds the command without libdw" ok
else
	check "LIBDW= builds the command without libdw" no "$(tail -n 5 "$BUILD/build-check.log")"
fi
if mk -q LIBDW= "$B/posixtrace"; then check "the same detection again rebuilds nothing" ok
else check "the same detection again rebuilds nothing" no; fi

if pkg-config --exists libdw 2>/dev/null; then
	if mk -q "$B/posixtrace"; then
		check "libdw found after a build without it: the command is out of date" no \
		      "make -q says up to date: the command would keep no symbols"
	else
		check "libdw found after a build without it: the command is out of date" ok
	fi
	if mk "$B/posixtrace" >> "$BUILD/build-check.log" 2>&1 && linked_libdw; then
		check "the next build relinks it with libdw" ok
	else
		check "the next build relinks it with libdw" no "$(tail -n 5 "$BUILD/build-check.log")"
	fi
	if mk -q "$B/posixtrace"; then check "and the build after that rebuilds nothing" ok
	else check "and the build after that rebuilds nothing" no; fi
	if mk -q LIBDW= "$B/posixtrace"; then
		check "LIBDW= after a build with libdw: out of date" no
	else
		check "LIBDW= after a build with libdw: out of date" ok
	fi
else
	echo "SKIP relinking with libdw: pkg-config does not find libdw (scripts/install-deps.sh installs libdw-dev)"
	skipped=1
fi

# A header changed rebuilds the objects that include it (as the compiler
# found them, directly or not) and no others: make -W pretends it is new.
for h in src/tagstack.h src/log/crc32c.h; do
	want=$(grep -l "$h" "$B"/obj/*.d "$B"/obj/*/*.d 2>/dev/null | sed "s|^$B/obj/||; s|\.d\$||" | sort | tr '\n' ' ')
	got=$(mk -n -W "$h" lib 2>/dev/null | sed -n 's|.* -c src/\([a-z0-9_/]*\)\.c .*|\1|p' | sort | tr '\n' ' ')
	if [ -n "$want" ] && [ "$want" = "$got" ]; then check "$h changed rebuilds its includers only ($got)" ok
	else check "$h changed rebuilds its includers only" no "includers: $want
rebuilt: $got"; fi
done

# The dependency step comes first, then a make that sees what it installed
# (the detection is made when a make starts), then the walkthrough.
plan=$(make --no-print-directory -n demo BUILD="$B" 2>/dev/null | grep -n 'install-deps.sh\|examples/demo.sh\|no-print-directory all' | cut -d: -f2- | cut -c1-30 | tr '\n' '|')
case "$plan" in
"sh scripts/install-deps.sh ||"*"make"*"examples/demo.sh"*) check "make demo installs what it needs, then builds, then runs" ok ;;
*) check "make demo installs what it needs, then builds, then runs" no "make -n demo: $plan" ;;
esac
rm -rf "$B"
[ "$skipped" = 1 ] && echo "$passed passed, $failed failed, $skipped skipped" || echo "$passed passed, $failed failed"
