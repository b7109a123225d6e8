/* trace: CSV rows with the times as the server saw them, in milliseconds
 * since it started. A request's first_token_ms is when its first token's
 * bytes went to the socket when it streams (the engine's emission time
 * otherwise), and last_token_ms likewise, so a client's measurements can be
 * checked against what the server did. Rows go through stdio; the server
 * flushes every 100 ms and on exit. */
#include "sim/trace.h"
#include "common/notice.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void put_ms(FILE *f, int64_t us) {
    if (us >= 0)
        fprintf(f, "%.3f", us / 1000.0);
}

static const char *finish_text(const sim_request *r) {
    if (r->status != 200)
        return "error";
    switch (r->s.finish) {
    case FINISH_STOP: return "stop";
    case FINISH_LENGTH: return "length";
    case FINISH_ABORT: return "abort";
    default: return "";
    }
}

int trace_open(sim_server *s, char *err, int errlen) {
    const sim_config *cfg = &s->cfg;
    if (cfg->trace_path) {
        s->trace = fopen(cfg->trace_path, "w");
        if (!s->trace) {
            snprintf(err, errlen, "--trace %s: cannot open for writing", cfg->trace_path);
            return -1;
        }
        fputs(
            "request_id,arrived_ms,admitted_ms,first_token_ms,finished_ms,prompt_tokens,"
            "output_tokens,preemptions,finish_reason,http_status,fault,last_token_ms,structured\n",
            s->trace);
    }
    if (cfg->token_trace_path) {
        s->token_trace = fopen(cfg->token_trace_path, "w");
        if (!s->token_trace) {
            snprintf(err, errlen, "--trace-tokens %s: cannot open for writing",
                     cfg->token_trace_path);
            return -1;
        }
        fputs("request_id,index,t_ms,step_ms\n", s->token_trace);
    }
    return 0;
}

static void write_row(FILE *f, const sim_request *r) {
    fputs(r->request_id, f);
    fputc(',', f);
    put_ms(f, r->s.arrived_us);
    fputc(',', f);
    put_ms(f, r->s.admitted_us);
    fputc(',', f);
    put_ms(f, r->stream ? r->first_write_us : r->s.first_token_us);
    fputc(',', f);
    put_ms(f, r->s.finished_us);
    fprintf(f, ",%d,%d,%d,%s,%d,%s,", r->s.prompt_tokens, r->s.generated, r->s.preemptions,
            finish_text(r), r->status, fault_name(r->fault));
    put_ms(f, r->stream ? r->last_write_us : r->s.finished_us);
    /* a tool call's or a JSON answer's truth: written to match, made wrong,
     * or cut short by max_tokens (which no JSON survives) */
    fputs(!r->plan.text                  ? ","
          : !r->plan.valid               ? ",invalid"
          : r->s.finish == FINISH_LENGTH ? ",cut"
                                         : ",valid",
          f);
    fputc('\n', f);
}

void trace_request(sim_server *s, const sim_request *r) {
    out_lock(s);
    if (s->trace)
        write_row(s->trace, r);
    out_unlock(s);
}

void trace_token(sim_server *s, const sim_request *r, int index, int64_t step_us,
                 int64_t wrote_us) {
    if (!s->token_trace)
        return;
    out_lock(s);
    fprintf(s->token_trace, "%s,%d,%.3f,%.3f\n", r->request_id, index, wrote_us / 1000.0,
            step_us / 1000.0);
    out_unlock(s);
}

/* The first write that failed (a full disk, say) is kept, said at once as a
 * warning (common/notice.h), and makes the simulator exit non-zero: ground truth is complete
 * or says it is not. Called with out_mu held. */
static void note(sim_server *s, int failed, const char *flag, const char *path) {
    if (!failed || s->trace_error[0])
        return;
    snprintf(s->trace_error, sizeof s->trace_error,
             "%s %s: writing failed: %s (the trace is incomplete)", flag, path,
             strerror(errno ? errno : EIO));
    notice(notice_default(), NOTICE_INFO, "sim: %s", s->trace_error);
}

/* Flushes f (and closes it when `close`): nonzero when a write failed. */
static int flush_file(FILE *f, int close) {
    int failed = fflush(f) != 0 || ferror(f);
    if (close)
        failed |= fclose(f) != 0;
    return failed;
}

static void finish(sim_server *s, int close) {
    out_lock(s);
    if (s->trace)
        note(s, flush_file(s->trace, close), "--trace", s->cfg.trace_path);
    if (s->token_trace)
        note(s, flush_file(s->token_trace, close), "--trace-tokens", s->cfg.token_trace_path);
    if (close)
        s->trace = s->token_trace = NULL;
    out_unlock(s);
}

void trace_flush(sim_server *s) {
    finish(s, 0);
}

void trace_close(sim_server *s) {
    finish(s, 1);
}

const char *trace_error(const sim_server *s) {
    return s->trace_error[0] ? s->trace_error : NULL;
}
