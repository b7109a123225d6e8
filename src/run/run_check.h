/* run_check: the checks of one option's value that the rows of
 * run_options (run_options.c) name as their .check (common/opt.h): 0, or
 * -1 with what is wrong in err ("expected WHAT, got 'TEXT'" or the like;
 * the caller puts the option's name in front). Private to src/run/. */
#ifndef SERVELAB_RUN_CHECK_H
#define SERVELAB_RUN_CHECK_H

#include <stddef.h>

/* --url: http:// or https://, no space or control character, a host and
 * a port in 1-65535; credentials never reach the message. */
int run_check_url(const char *text, char *err, size_t errlen);
/* --header: 'Name: value' without CR or LF, and not a length header. */
int run_check_header(const char *text, char *err, size_t errlen);
/* --metadata KEY=VALUE: a key of letters, digits, '_', '-' and '.'. */
int run_check_metadata(const char *text, char *err, size_t errlen);
/* --metrics-interval: auto or seconds. */
int run_check_metrics_interval(const char *text, char *err, size_t errlen);
/* --preconnect: auto, off or a number of connections. */
int run_check_preconnect(const char *text, char *err, size_t errlen);
/* --slo: what model/slo.h parses. */
int run_check_slo(const char *text, char *err, size_t errlen);
/* --turns: a number of turns, or all. */
int run_check_turns(const char *v, char *why, size_t whylen);
/* --cache-bust-salt: 1 to 16 hex digits. */
int run_check_salt(const char *v, char *why, size_t whylen);
/* --extra-body: a JSON object without servelab's own keys. */
int run_check_extra_body(const char *v, char *why, size_t whylen);
/* --tools FILE, --response-format FILE: read and checked now. */
int run_check_tools(const char *v, char *why, size_t whylen);
int run_check_format(const char *v, char *why, size_t whylen);
/* --shard: I/N or auto. */
int run_check_shard(const char *v, char *why, size_t whylen);
/* --start-at: EPOCH or +S, in the future. */
int run_check_start_at(const char *v, char *why, size_t whylen);
/* --rate-plan: stages that parse. */
int run_check_rate_plan(const char *v, char *why, size_t whylen);

#endif
