/* provisional scaffold, replaced by the log module */
#ifndef PT_LOGWRITE_H
#define PT_LOGWRITE_H
#include <stdint.h>
#include <trace.h>
#define PT_LOGW_FULL 1
struct pt_log_ctx { int32_t pid, tid; uint64_t thread; char comm[16]; };
struct pt_logw_params { char trace_name[TRACE_NAME_MAX], genversion[TRACE_NAME_MAX]; int64_t create_sec, create_nsec; uint64_t clockres_ns, stream_size, max_data_size, log_size; int32_t stream_policy, log_policy, inheritance; };
struct pt_logw_status { int32_t stream_status, stream_full, stream_overrun, flush_status, flush_error, log_overrun, log_full; uint64_t lost_events; };
struct pt_logw_state { uint32_t nnames; uint64_t x[64]; };
struct pt_logw { struct pt_logw_state *st; int fd; };
int pt_logw_begin(struct pt_logw *w, struct pt_logw_state *st, int fd, const struct pt_logw_params *p);
int pt_logw_resume(struct pt_logw *w, struct pt_logw_state *st, int fd);
int pt_logw_names(struct pt_logw *w, uint32_t first_id, uint32_t count, const char (*names)[64]);
int pt_logw_event(struct pt_logw *w, const struct pt_log_ctx *ctx, uint64_t ts_ns, trace_event_id_t id, const void *data, uint32_t len, int truncated, uint64_t pc);
int pt_logw_sync(struct pt_logw *w, const struct pt_logw_status *s);
int pt_logw_clear(struct pt_logw *w);
int pt_logw_finish(struct pt_logw *w, const struct pt_logw_status *s);
void pt_logw_free(struct pt_logw *w);
#endif
