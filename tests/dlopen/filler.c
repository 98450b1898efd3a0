/* SPDX-License-Identifier: MIT */
/* A module with initial-exec TLS, loaded (in copies) by dl_host to use up
 * the static TLS surplus before it loads the plugin. */
#ifndef FILLER_SIZE
#define FILLER_SIZE 96
#endif
__thread char filler_tls[FILLER_SIZE] __attribute__((tls_model("initial-exec")));

char *filler_touch(void);
char *filler_touch(void) { return filler_tls; }
