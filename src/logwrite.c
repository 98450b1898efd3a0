/* provisional scaffold */
#include "logwrite.h"
int pt_logw_begin(struct pt_logw *w, struct pt_logw_state *st, int fd, const struct pt_logw_params *p) { (void)p; w->st = st; w->fd = fd; return 0; }
int pt_logw_resume(struct pt_logw *w, struct pt_logw_state *st, int fd) { w->st = st; w->fd = fd; return 0; }
int pt_logw_names(struct pt_logw *w, uint32_t first_id, uint32_t count, const char (*names)[64]) { (void)w; (void)first_id; (void)count; (void)names; return 0; }
int pt_logw_event(struct pt_logw *w, const struct pt_log_ctx *ctx, uint64_t ts_ns, trace_event_id_t id, const void *data, uint32_t len, int truncated, uint64_t pc) { (void)w; (void)ctx; (void)ts_ns; (void)id; (void)data; (void)len; (void)truncated; (void)pc; return 0; }
int pt_logw_sync(struct pt_logw *w, const struct pt_logw_status *s) { (void)w; (void)s; return 0; }
int pt_logw_clear(struct pt_logw *w) { (void)w; return 0; }
int pt_logw_finish(struct pt_logw *w, const struct pt_logw_status *s) { (void)w; (void)s; return 0; }
void pt_logw_free(struct pt_logw *w) { (void)w; }
