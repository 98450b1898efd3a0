/* SPDX-License-Identifier: MIT */
/*
 * sym_app: the program of the symbols checks (tests/cli/symbols.sh), a
 * PIE built with -g: posts from a function of its own, from a function of
 * a shared library it links (symlib.c), and from a plug-in it loads with
 * dlopen and unloads (plugin.c, argv[1]), and from a function inlined into
 * main.  Each posting line is marked
 * "SITE:<function>" for the check to find its number.  Built twice, the
 * second time with -DREBUILT: the same source, another build id.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <trace.h>

int symlib_post(int n);

__attribute__((noinline)) static void app_work(trace_event_id_t id, int n)
{
	posix_trace_event(id, &n, sizeof n); /* SITE:app_work */
}

/* Inlined into main: its event's site is main's, its line this one's. */
__attribute__((always_inline)) static inline void app_inline(trace_event_id_t id, int n)
{
	posix_trace_event(id, &n, sizeof n); /* SITE:app_inline */
}

int main(int argc, char **argv)
{
	trace_event_id_t id, inl;
	if (argc != 2 || posix_trace_eventid_open("sym.app", &id) != 0 ||
	    posix_trace_eventid_open("sym.inl", &inl) != 0)
		return 2;
	app_inline(inl, 5);
#ifdef REBUILT
	puts("rebuilt");
#endif
	for (int i = 0; i < 3; i++)
		app_work(id, i);
	symlib_post(7);
	void *plugin = dlopen(argv[1], RTLD_NOW);
	int (*post)(int) = plugin ? (int (*)(int))dlsym(plugin, "plugin_post") : NULL;
	if (!post) {
		fprintf(stderr, "sym_app: %s\n", dlerror());
		return 1;
	}
	post(8);
	dlclose(plugin);
	app_work(id, 9);
	return 0;
}
