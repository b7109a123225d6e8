/* servelab completion: the bash script, sourced in a real bash, completes
 * the subcommands, every option of run (read from the option table, not a
 * list kept here), a choice option's values and file names; the zsh script
 * names the same options; a shell it does not know is one line, exit 2. */
#include "common/opt.h"
#include "run/run.h"
#include "support.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What bash's completion function offers for the words given (the last
 * one is being typed), one per line. */
static char *complete(const char *script, const char *words) {
    char cmd[4096];
    int n = 0;
    for (const char *p = words; *p; p++)
        n += *p == ' ';
    snprintf(cmd, sizeof cmd,
             "bash -c 'source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _servelab; "
             "printf \"%%s\\n\" \"${COMPREPLY[@]}\"' 2>&1",
             script, words, n);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 0, "%s: %s", words, out);
    return out;
}

static int has_line(const char *text, const char *line) {
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p++)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
            return 1;
    return 0;
}

TEST(completion_bash_completes_commands_options_and_values) {
    char *dir = temp_dir(), script[1200], cmd[1400], *out;
    snprintf(script, sizeof script, "%s/servelab.bash", dir);
    snprintf(cmd, sizeof cmd, "%s completion bash > %s", servelab_bin(), script);
    int code;
    free(run_capture(cmd, &code));
    CHECK_INT(code, 0);
    out = complete(script, "servelab ru");
    CHECK_MSG(has_line(out, "run") && !has_line(out, "sim"), "%s", out);
    free(out);
    out = complete(script, "servelab \"\"");
    CHECK_MSG(has_line(out, "sweep") && has_line(out, "merge") && has_line(out, "completion"), "%s",
              out);
    free(out);
    out = complete(script, "servelab run --");
    for (const opt_def *d = run_options; d->name; d++) {
        char want[128];
        snprintf(want, sizeof want, "--%s", d->name);
        CHECK_MSG(has_line(out, want), "run: %s is not offered", want);
    }
    free(out);
    out = complete(script, "servelab run --api \"\"");
    CHECK_MSG(has_line(out, "completions") && has_line(out, "chat"), "%s", out);
    free(out);
    out = complete(script, "servelab run --rate-p");
    CHECK_MSG(has_line(out, "--rate-plan") && !has_line(out, "--rate"), "%s", out);
    free(out);
    char f[1300];
    snprintf(f, sizeof f, "%s/campaign-x.yaml", dir);
    fclose(fopen(f, "w"));
    snprintf(cmd, sizeof cmd, "servelab sweep %s/campaign-", dir);
    out = complete(script, cmd);
    CHECK_MSG(has_line(out, f), "%s", out);
    free(out);
}

TEST(completion_zsh_names_every_option_and_bad_shell_is_refused) {
    char *out;
    CHECK_INT(servelab_cmd("completion zsh", &out), 0);
    CHECK(strncmp(out, "#compdef servelab\n", 18) == 0);
    for (const opt_def *d = run_options; d->name; d++) {
        char want[128];
        snprintf(want, sizeof want, " --%s", d->name);
        CHECK_MSG(strstr(out, want) != NULL, "zsh: %s missing", want);
    }
    CHECK(strstr(out, "--api) compadd -- completions chat; return ;;") != NULL);
    free(out);
    CHECK_INT(servelab_cmd("completion fish", &out), 2);
    CHECK_MSG(strstr(out, "expected bash or zsh, got 'fish'") &&
                  !strchr(strchr(out, '\n') + 1, '\n'),
              "%s", out);
    free(out);
}
