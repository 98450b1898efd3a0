// SPDX-License-Identifier: MIT
// A C++ program whose events are posted by a template method and by a
// template function inlined into it (tests/cli/names.sh, demangled call
// sites): app::Worker<int>::run(int const&), whose symbol is
// _ZN3app6WorkerIiE3runERKi.  Each posting line is marked SITE:name.
#include <trace.h>

namespace app {

template <typename T> __attribute__((always_inline)) inline void note(trace_event_id_t id, const T &v)
{
	posix_trace_event(id, &v, sizeof v); // SITE:note
}

template <typename T> struct Worker {
	trace_event_id_t run_id, note_id;
	__attribute__((noinline)) T run(const T &v);
};

template <typename T> T Worker<T>::run(const T &v)
{
	posix_trace_event(run_id, &v, sizeof v); // SITE:run
	note(note_id, v);
	return v;
}

template struct Worker<int>;

} // namespace app

int main()
{
	app::Worker<int> w;
	if (posix_trace_eventid_open("cxx.run", &w.run_id) != 0 ||
	    posix_trace_eventid_open("cxx.note", &w.note_id) != 0)
		return 2;
	int v = 7;
	return w.run(v) == 7 ? 0 : 1;
}
