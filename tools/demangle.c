/* SPDX-License-Identifier: MIT */
/* C++ names demangled (demangle.h). */
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

#ifdef PT_HAVE_DEMANGLE
/* libstdc++'s (the Itanium C++ ABI's abi::__cxa_demangle, extern "C") */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *length, int *status);

const char *demangle(const char *name, char *buf, size_t size)
{
	int status = -1;
	if (!name || strncmp(name, "_Z", 2) != 0 || strnlen(name, DEMANGLE_INPUT_MAX + 1) >
	                                                   DEMANGLE_INPUT_MAX)
		return name;
	char *out = __cxa_demangle(name, NULL, NULL, &status);
	size_t n = status == 0 && out && *out ? strlen(out) : size;
	if (n < size)
		memcpy(buf, out, n + 1);
	free(out);
	return n < size ? buf : name;
}
#else
const char *demangle(const char *name, char *buf, size_t size)
{
	(void)buf;
	(void)size;
	return name;
}
#endif
