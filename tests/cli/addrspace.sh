#!/bin/sh
# SPDX-License-Identifier: MIT
# A program whose address space is limited (RLIMIT_AS=256M) below the
# reserve of record's default stream (about 261 MiB) joins it all the same:
# it maps what fits, all 25,000 of its events are in the log, and record's
# note names the short mapping rather than saying the program may not be
# linked with libposixtrace (before: 0 of 25,000 events, 0 lost, and that
# note).  Not under a sanitizer (its shadow memory does not fit in 256 MiB).
# Sourced by tests/cli/run.sh (its helpers and variables).

as_shadow=$(ldd "$BUILD/libposixtrace.so" 2>/dev/null | grep -c -E 'lib(asan|tsan)')
if [ -z "$EMIT" ] || [ "$as_shadow" -gt 0 ] || ! command -v prlimit >/dev/null 2>&1; then
	skip "addrspace: a program under RLIMIT_AS=256M is recorded" \
		"needs ptemit and prlimit, and no AddressSanitizer or ThreadSanitizer"
else
	"$PT" record -o as.ptlog -- prlimit --as=268435456 "$EMIT" "count=25000,as.event" >as.out 2>&1; rc=$?
	[ $rc -eq 0 ] && pass "addrspace: record exits 0" ||
		fail "addrspace: record exits 0" "exit $rc: $(cat as.out)"
	"$PT" dump as.ptlog >as.txt 2>&1
	n=$(count "as.event" as.txt)
	[ "$n" -eq 25000 ] && pass "addrspace: all 25,000 events under RLIMIT_AS=256M" ||
		fail "addrspace: all 25,000 events under RLIMIT_AS=256M" "$n events: $(cat as.out)"
	has "addrspace: record's note names the short mapping" "could map only part of the trace stream" as.out
	hasnt "addrspace: no note that the program may not be linked" "may not be linked" as.out
fi
