/* SPDX-License-Identifier: MIT */
/*
 * A plugin that links libposixtrace, loaded and unloaded by dl_host (which
 * does not link it): posts events, and can trace its own process.
 */
#include <stdint.h>
#include <trace.h>

int plugin_post(uint32_t seq);
int plugin_selftest(int n);

/* One "dl.event" event carrying seq; 0 or an error number. */
int plugin_post(uint32_t seq)
{
	trace_event_id_t id;
	int err = posix_trace_eventid_open("dl.event", &id);
	if (err == 0)
		posix_trace_event(id, &seq, sizeof seq);
	return err;
}

/* Posts n events into a stream of this process's own and returns how many
 * it reads back (-1 when the stream cannot be made). */
int plugin_selftest(int n)
{
	trace_id_t trid;
	trace_event_id_t id;
	if (posix_trace_create(0, NULL, &trid) != 0)
		return -1;
	if (posix_trace_eventid_open("dl.self", &id) != 0 || posix_trace_start(trid) != 0) {
		posix_trace_shutdown(trid);
		return -1;
	}
	for (int i = 0; i < n; i++)
		posix_trace_event(id, &i, sizeof i);
	int got = 0, unavailable = 0;
	struct posix_trace_event_info info;
	char data[64];
	size_t len;
	while (posix_trace_trygetnext_event(trid, &info, data, sizeof data, &len, &unavailable) == 0 &&
	       !unavailable)
		got += info.posix_event_id == id;
	posix_trace_shutdown(trid);
	return got;
}
