/* managed_server: the user's command line made into the text its shell
 * runs, and the environment that carries everything servelab adds (see
 * managed_server.h); server_proc starts and awaits it. */
#include "target/managed_server.h"
#include "common/strbuf.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every {key} in tmpl replaced by value. malloc'd. */
static char *expand(const char *tmpl, const char *key, const char *value) {
    strbuf b = {0};
    sb_puts(&b, "");
    size_t kl = strlen(key);
    for (const char *p = tmpl; *p;) {
        const char *at = strstr(p, key);
        if (!at) {
            sb_puts(&b, p);
            break;
        }
        sb_putn(&b, p, (size_t)(at - p));
        sb_puts(&b, value);
        p = at + kl;
    }
    return b.s;
}

/* The server's environment entries: target.server.env, then the port and
 * the run's server_args (which win over a same-named entry). */
static char **environment(const managed_server_spec *m, int port, const char *server_args) {
    char **env = xcalloc((size_t)m->n_env + 3, sizeof *env);
    int n = 0;
    strbuf b = {0};
    for (int i = 0; i < m->n_env; i++) {
        b.n = 0;
        sb_printf(&b, "%s=%s", m->env_names[i], m->env_values[i]);
        env[n++] = xstrdup(b.s);
    }
    b.n = 0;
    sb_printf(&b, "SERVELAB_PORT=%d", port);
    env[n++] = xstrdup(b.s);
    b.n = 0;
    sb_printf(&b, "SERVELAB_SERVER_ARGS=%s", server_args ? server_args : "");
    env[n++] = xstrdup(b.s);
    sb_free(&b);
    return env;
}

int managed_server_start(server_proc *sp, const managed_server_spec *m, const char *server_args,
                         const char *log_path, char *err, int errlen) {
    if (server_proc_init(sp, server_args, log_path, err, errlen))
        return -1;
    char port[16];
    snprintf(port, sizeof port, "%d", sp->port);
    char *a = expand(m->command, "{port}", "\"$SERVELAB_PORT\"");
    char *text = expand(a, "{server_args}", "$SERVELAB_SERVER_ARGS");
    free(a);
    char *script = xmalloc(strlen(text) + 6);
    sprintf(script, "exec %s", text);
    /* for messages: the command as the user wrote it, with the values in place */
    a = expand(m->command, "{port}", port);
    char *shown = expand(a, "{server_args}", sp->args);
    free(a);
    char **env = environment(m, sp->port, server_args);
    /* The documented user command (target.server.command) runs in a shell,
     * the only process servelab starts through one: its text is the user's. */
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    server_proc_launch l = {.argv = argv,
                            .env = env,
                            .logged = script,
                            .shown = shown,
                            .health_path = m->health_path,
                            .ready_timeout_s = m->ready_timeout_s};
    int rc = server_proc_start(sp, &l, err, errlen);
    for (char **e = env; *e; e++)
        free(*e);
    free(env);
    free(shown);
    free(script);
    free(text);
    return rc;
}

int managed_server_check_program(const char *command, char *err, int errlen) {
    const char *p = command;
    char word[512];
    for (;;) {
        p += strspn(p, " \t");
        size_t n = strcspn(p, " \t;&|");
        if (n == 0 || n >= sizeof word)
            return 0;
        memcpy(word, p, n);
        word[n] = 0;
        p += n;
        if (!strchr(word, '=') || word[0] == '=')
            break;
    }
    static const char *const builtins[] = {"cd",   "exec", "export", ".",     "env", "eval",
                                           "exit", "set",  "ulimit", "umask", NULL};
    for (const char *const *b = builtins; *b; b++)
        if (!strcmp(word, *b))
            return 0;
    if (strchr(word, '/')) {
        if (access(word, X_OK) == 0)
            return 0;
    } else {
        const char *path = getenv("PATH");
        for (const char *d = path ? path : ""; *d;) {
            size_t dn = strcspn(d, ":");
            char full[4700];
            snprintf(full, sizeof full, "%.*s/%s", (int)dn, d, word);
            if (dn && access(full, X_OK) == 0)
                return 0;
            d += dn + (d[dn] == ':');
        }
    }
    snprintf(err, errlen, "target.server.command: '%s' %s", word,
             strchr(word, '/') ? "cannot be run" : "is not on PATH");
    return -1;
}
