/* trace: the simulator's ground-truth trace files (`--trace`, one CSV row
 * per request, and `--trace-tokens`, one row per streamed token), internal
 * to src/sim/. api.c opens, flushes and closes them; the request's end
 * writes its row, and each streamed token a row once its bytes left. Every
 * write takes the server's out_mu, so any thread may call them. */
#ifndef SERVELAB_SIM_TRACE_H
#define SERVELAB_SIM_TRACE_H

#include "sim/server.h"

/* Opens the files s->cfg names and writes their header rows: 0, or -1 with
 * a message in err (what was opened stays for trace_close). */
int trace_open(sim_server *s, char *err, int errlen);
void trace_request(sim_server *s, const sim_request *r);
/* Token `index` of `r` was written at `wrote_us` (server-relative). */
void trace_token(sim_server *s, const sim_request *r, int index, int64_t step_us, int64_t wrote_us);
/* Flushing and closing check the files: the first failed write is reported
 * on stderr at once and kept (trace_error). */
void trace_flush(sim_server *s);
void trace_close(sim_server *s);
/* The first failed write, or NULL when every row reached its file. */
const char *trace_error(const sim_server *s);

#endif
