/* SPDX-License-Identifier: MIT */
/*
 * posixtrace(1): C++ names as users read them (app::Worker<int>::run(int
 * const&) for _ZN3app6WorkerIiE3runERKi), with libstdc++'s
 * __cxa_demangle when the command is built with it (PT_HAVE_DEMANGLE).
 * A name comes from a file a log names, so it is hostile input: only
 * names of at most DEMANGLE_INPUT_MAX bytes are parsed (the demangler
 * recurses as deep as a name nests), and only in the confined
 * symbolizer's child (tools/symproc.c), whose limits contain a crash.
 */
#ifndef POSIXTRACE_DEMANGLE_H
#define POSIXTRACE_DEMANGLE_H

#include <stddef.h>

/* Longer mangled names are shown as they are. */
#define DEMANGLE_INPUT_MAX 1024

/* name demangled into buf (size bytes), or name itself: not a mangled
 * C++ name (no "_Z" prefix), longer than DEMANGLE_INPUT_MAX, not valid,
 * its demangled form longer than size - 1, or built without the
 * demangler. */
const char *demangle(const char *name, char *buf, size_t size);

#endif
