/* SPDX-License-Identifier: MIT */
/*
 * What the tests of events posted from signal handlers share (t_signal,
 * t_sigjump): the payload's check, the timers and their handlers.
 */
#ifndef PT_TEST_SIGTEST_H
#define PT_TEST_SIGTEST_H

#include <sys/time.h>
#include "harness.h"

#define HANDLER_WRITER 2 /* pt_payload.writer of handlers' events */

static int payload_of(const struct pt_ev *e, struct pt_payload *p)
{
	if (e->len != sizeof *p)
		return 0;
	memcpy(p, e->data, sizeof *p);
	return p->check == pt_mix(p->writer, p->seq) && p->writer < 4;
}

/* A thread's first event registers it, which no handler may interrupt or
 * do (posix_trace_event(3)): signals wait until it is done. */
static void block_timer_signals(int how)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigaddset(&set, SIGPROF);
	pthread_sigmask(how, &set, NULL);
}

static void set_timer(int which, long usec)
{
	struct itimerval it = {{0, usec}, {0, usec}};
	ck_assert_int_eq(setitimer(which, &it, NULL), 0);
}

static void on_signal(int sig, void (*fn)(int, siginfo_t *, void *), void (*simple)(int),
                      int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = flags;
	if (fn)
		sa.sa_sigaction = fn;
	else
		sa.sa_handler = simple;
	ck_assert_int_eq(sigaction(sig, &sa, NULL), 0);
}

#endif
