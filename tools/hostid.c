/* SPDX-License-Identifier: MIT */
/*
 * The host.id of the OTLP exporter: the machine id of machine-id(5), which
 * that page says not to expose, as the library hashes it for the host
 * record of every log (posixtrace_host_self, posixtrace_log_host: as
 * systemd's sd_id128_get_machine_app_specific() with the application id
 * 863bb4c1-be97-40f0-bb34-975751328dcf), in 32 lowercase hex digits.
 */
#include <errno.h>
#include <string.h>

#include "otlp.h"

/* 32 hex digits in out: the library takes the machine id and hashes it
 * as every log's host record does, so host.id and the logs agree. */
int host_id(char out[33])
{
	struct posixtrace_host h;
	if (posixtrace_host_self(&h) != 0)
		return EINVAL;
	if (!h.posixtrace_machine_known)
		return ENOENT;
	put_hex_bytes(out, h.posixtrace_machine_id, sizeof h.posixtrace_machine_id)[0] = '\0';
	return 0;
}
