/* provisional scaffold: pre-recorded streams, until the log module lands */
#include <errno.h>
#include <string.h>
#include "logfile.h"
int pt_logfile_next(struct pt_handle *h, struct posix_trace_event_info *ev, void *data, size_t num_bytes, size_t *data_len) { (void)h; (void)ev; (void)data; (void)num_bytes; (void)data_len; return 0; }
int pt_logfile_name(struct pt_handle *h, trace_event_id_t id, char *out) { (void)h; (void)id; (void)out; return EINVAL; }
int pt_logfile_typelist(struct pt_handle *h, trace_event_id_t *id) { (void)h; (void)id; return 0; }
void pt_logfile_attr(struct pt_handle *h, trace_attr_t *attr) { (void)h; memset(attr, 0, sizeof *attr); }
void pt_logfile_status(struct pt_handle *h, struct posix_trace_status_info *st) { (void)h; (void)st; }
void pt_logfile_info(struct pt_handle *h, struct posixtrace_log_info *info) { (void)h; (void)info; }
void pt_logfile_free(struct pt_handle *h) { (void)h; }
int posix_trace_open(int fd, trace_id_t *trid) { (void)fd; (void)trid; return EINVAL; }
int posix_trace_rewind(trace_id_t trid) { (void)trid; return EINVAL; }
int posix_trace_close(trace_id_t trid) { (void)trid; return EINVAL; }
