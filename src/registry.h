/* SPDX-License-Identifier: MIT */
/*
 * The name registry (registry.c): event names shared by a process tree
 * traced with inheritance, and their copies in the streams.
 */
#ifndef PT_REGISTRY_H
#define PT_REGISTRY_H

#include "process.h"

int pt_registry_create(void);
int pt_register_name_in(struct pt_registry *reg, const char *name, trace_event_id_t *id);
int pt_reg_name(struct pt_registry *reg, trace_event_id_t id, char *out);
uint32_t pt_reg_count(struct pt_registry *reg);
void pt_reg_to_stream(struct pt_registry *reg, const struct pt_map *m, uint32_t from);
void pt_reg_adopt_stream_names(struct pt_registry *reg, const struct pt_map *m);
int pt_registry_map_fd(int fd, struct pt_registry **out);
void pt_registry_copy_after_fork(void);
void pt_seed_names(struct pt_attached *a);


/* The pos-th event type of posix_trace_eventtypelist_getnext_id's list:
 * system events, the unnamed user event, then user ids in order. */
trace_event_id_t pt_typelist_id(uint32_t pos);

#endif
