/* SPDX-License-Identifier: MIT */
/*
 * symproc_app N PLUGIN LIBRARY: the traced program of the confined
 * symbolizer's tests (t_symproc): posts N events of type sp.main from a
 * function of its own, then one of sym.plugin from PLUGIN's plugin_post
 * and one of sym.lib from LIBRARY's symlib_post (tests/cli/sym/, both
 * loaded with dlopen, so three images whose events come in that order),
 * then one more sp.main.  Built with -g (the helpers' flags).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <trace.h>

__attribute__((noinline)) static void sp_work(trace_event_id_t id, int n)
{
	posix_trace_event(id, &n, sizeof n);
}

static int (*load(const char *path, const char *name))(int)
{
	void *h = dlopen(path, RTLD_NOW);
	int (*fn)(int) = h ? (int (*)(int))dlsym(h, name) : NULL;
	if (!fn)
		fprintf(stderr, "symproc_app: %s\n", dlerror());
	return fn;
}

int main(int argc, char **argv)
{
	trace_event_id_t id;
	if (argc != 4 || posix_trace_eventid_open("sp.main", &id) != 0)
		return 2;
	int n = atoi(argv[1]);
	int (*plugin_post)(int) = load(argv[2], "plugin_post");
	int (*symlib_post)(int) = load(argv[3], "symlib_post");
	if (!plugin_post || !symlib_post)
		return 1;
	for (int i = 0; i < n; i++)
		sp_work(id, i);
	plugin_post(1);
	symlib_post(2);
	sp_work(id, n);
	return 0;
}
