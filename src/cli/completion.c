/* cli/completion: `servelab completion bash|zsh`: a shell completion script
 * printed from the command list and the option tables themselves, so it
 * completes exactly the commands and options the binary has: subcommands;
 * every option of the command being typed; a choice option's values
 * (--api completions|chat); file names for everything else. `make install`
 * installs both. */
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

/* Every option of c as "--a --b", into f. */
static void option_words(FILE *f, const command *c) {
    int first = 1;
    for (const opt_def *d = c->options; d && d->name; d++) {
        fprintf(f, "%s--%s", first ? "" : " ", d->name);
        first = 0;
    }
    fprintf(f, "%s--help", first ? "" : " ");
}

/* The options of c that take a value, as a shell case pattern "--a|--b"
 * (empty when none), and those with choices, one case each. */
static void value_cases(FILE *f, const command *c, const char *indent, int zsh) {
    for (const opt_def *d = c->options; d && d->name; d++) {
        if (d->type != OPT_CHOICE || !d->choices)
            continue;
        char words[512];
        snprintf(words, sizeof words, "%s", d->choices);
        for (char *p = words; *p; p++)
            if (*p == '|')
                *p = ' ';
        if (zsh)
            fprintf(f, "%s--%s) compadd -- %s; return ;;\n", indent, d->name, words);
        else
            fprintf(f, "%s--%s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n", indent,
                    d->name, words);
    }
    int any = 0;
    for (const opt_def *d = c->options; d && d->name; d++)
        if (d->type != OPT_FLAG && d->type != OPT_CHOICE) {
            fprintf(f, "%s--%s", any ? "|" : indent, d->name);
            any = 1;
        }
    if (any)
        fprintf(f, ") %s; return ;;\n", zsh ? "_files" : "COMPREPLY=($(compgen -f -- \"$cur\"))");
}

static void bash_script(FILE *f) {
    fputs("# bash completion for servelab (servelab completion bash), made from its option "
          "tables\n_servelab() {\n    local cur=${COMP_WORDS[COMP_CWORD]} "
          "prev=${COMP_WORDS[COMP_CWORD-1]}\n    COMPREPLY=()\n    if [ \"$COMP_CWORD\" -eq 1 ]; "
          "then\n        COMPREPLY=($(compgen -W \"",
          f);
    for (int i = 0; commands[i]; i++)
        fprintf(f, "%s%s", i ? " " : "", commands[i]->name);
    fputs(" --help --version\" -- \"$cur\"))\n        return\n    fi\n    case "
          "${COMP_WORDS[1]} in\n",
          f);
    for (int i = 0; commands[i]; i++) {
        const command *c = commands[i];
        fprintf(f, "    %s)\n        case $prev in\n", c->name);
        value_cases(f, c, "            ", 0);
        fputs("        esac\n        if [[ $cur == -* ]]; then\n            COMPREPLY=($(compgen "
              "-W \"",
              f);
        option_words(f, c);
        fputs("\" -- \"$cur\"))\n        else\n            COMPREPLY=($(compgen -f -- "
              "\"$cur\"))\n        fi\n        ;;\n",
              f);
    }
    fputs("    esac\n}\ncomplete -F _servelab servelab\n", f);
}

static void zsh_script(FILE *f) {
    fputs("#compdef servelab\n# zsh completion for servelab (servelab completion zsh), made from "
          "its option tables\n_servelab() {\n    if (( CURRENT == 2 )); then\n        compadd -- ",
          f);
    for (int i = 0; commands[i]; i++)
        fprintf(f, "%s%s", i ? " " : "", commands[i]->name);
    fputs(" --help --version\n        return\n    fi\n    local prev=${words[CURRENT-1]}\n    case "
          "${words[2]} in\n",
          f);
    for (int i = 0; commands[i]; i++) {
        const command *c = commands[i];
        fprintf(f, "    %s)\n        case $prev in\n", c->name);
        value_cases(f, c, "            ", 1);
        fputs("        esac\n        if [[ $PREFIX == -* ]]; then\n            compadd -- ", f);
        option_words(f, c);
        fputs("\n        else\n            _files\n        fi\n        ;;\n", f);
    }
    fputs("    esac\n}\n_servelab \"$@\"\n", f);
}

static int completion_main(int argc, char **argv) {
    opt_args args;
    int rc = cli_parse(&cmd_completion, argc, argv, NULL, 1, &args);
    if (rc)
        return rc > 0 ? 0 : 2;
    const char *shell = args.n_positional ? args.positional[0] : NULL;
    int code = 0;
    if (shell && !strcmp(shell, "bash"))
        bash_script(stdout);
    else if (shell && !strcmp(shell, "zsh"))
        zsh_script(stdout);
    else
        code = cli_fail(&cmd_completion, "expected bash or zsh, got '%s'", shell ? shell : "");
    opt_args_free(&args);
    return code;
}

const command cmd_completion = {
    .name = "completion",
    .run = completion_main,
    .usage = "completion bash|zsh",
    .about = "a shell completion script for servelab's commands and options",
    .text = "Prints a completion script for bash or zsh, made from servelab's own command list\n"
            "and option tables: subcommands, every option of each, a choice option's values,\n"
            "file names elsewhere. make install installs both; by hand:\n"
            "  source <(servelab completion bash)",
};
