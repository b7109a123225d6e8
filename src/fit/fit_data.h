/* fit_data: what `servelab fit` reads of the runs it is given. A path is a
 * run (it holds requests.csv) or a folder searched for runs (a campaign,
 * a capacity search, a folder of them), in name order. Of each run it keeps
 * the requests' instants, their prompt and cached tokens, the server's own
 * prompt timing where it gave one (llama.cpp), every chunk's arrival, and
 * from meta.json who served it and the limits the server reported. */
#ifndef SERVELAB_FIT_DATA_H
#define SERVELAB_FIT_DATA_H

#include <stddef.h>

typedef struct fit_req {
    double sent, first, last; /* ms from the run's t=0; NAN unknown */
    int prompt, cached;       /* prompt tokens, those served from a cache (0 unknown) */
    int output;
    double server_prompt_ms; /* llama.cpp's timings.prompt_ms; NAN unknown */
    int server_prompt_n;     /* the prompt tokens it computed; -1 unknown */
    int ok;                  /* no error, and a first and last token */
    int cut;                 /* cut short by the client (cancelled, timeout): the server may
                                have gone on with it unseen */
    size_t chunk0;           /* its chunks: run.chunk_t[chunk0 .. chunk0 + n_chunks) */
    int n_chunks;
} fit_req;

typedef struct fit_run {
    char *dir;
    fit_req *req;
    size_t n_req;
    size_t disordered; /* rows whose first token is before the send, or the last before it */
    double *chunk_t;   /* arrival, ms from t=0, grouped by request in index order */
    int *chunk_tokens;
    size_t n_chunks;
    /* who served it: the Server header with the binary's hash or version */
    char server[512];
    char model[256];
    /* the limits the server reported (0: not reported), and from where */
    int slots, n_ctx, kv_blocks, block_size, max_model_len, batch_tokens;
    int max_tokens, ignore_eos; /* the run's asking: max_tokens 0 unknown */
    char slots_from[128], kv_from[128], len_from[128], batch_from[128];
} fit_run;

/* The runs under the paths into *runs (malloc'd, *n of them). 0, or -1
 * with the path or file:line that is wrong in err (no runs found is an
 * error too). */
int fit_load(char *const *paths, int n_paths, fit_run **runs, int *n, char *err, size_t errlen);
void fit_runs_free(fit_run *runs, int n);

#endif
