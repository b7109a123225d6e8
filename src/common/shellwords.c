/* shellwords: the splitter and its inverse (see shellwords.h). One pass
 * over the text with a state (outside quotes, in '...', in "..."), each
 * word built in a buffer as long as the text, which no word can outgrow. */
#include "common/shellwords.h"
#include "common/strbuf.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct splitter {
    char **argv;
    int argc, cap;
    char *word; /* the word being built */
    size_t n;
    int in_word; /* a word has begun (even an empty '' one) */
} splitter;

static void end_word(splitter *s) {
    if (!s->in_word)
        return;
    if (s->argc + 2 > s->cap) {
        s->cap = s->cap ? 2 * s->cap : 8;
        s->argv = xrealloc(s->argv, (size_t)s->cap * sizeof *s->argv);
    }
    s->word[s->n] = 0;
    s->argv[s->argc++] = xstrdup(s->word);
    s->argv[s->argc] = NULL;
    s->n = 0;
    s->in_word = 0;
}

static void put(splitter *s, char c) {
    s->word[s->n++] = c;
    s->in_word = 1;
}

/* What a backslash in double quotes escapes, as in the shell. */
static int escapable_in_dquotes(char c) {
    return c == '$' || c == '`' || c == '"' || c == '\\' || c == '\n';
}

int shellwords_split(const char *text, char ***argv, int *argc, char *err, int errlen) {
    if (!text)
        text = "";
    splitter s = {.word = xmalloc(strlen(text) + 1)};
    char quote = 0; /* 0, '\'' or '"' */
    const char *p = text, *opened = NULL;
    for (; *p; p++) {
        char c = *p;
        if (quote == '\'') {
            if (c == '\'')
                quote = 0;
            else
                put(&s, c);
        } else if (quote == '"') {
            if (c == '"')
                quote = 0;
            else if (c == '\\' && p[1] && escapable_in_dquotes(p[1]))
                put(&s, *++p);
            else if (c == '\\' && !p[1])
                break; /* unbalanced: the quote is still open */
            else
                put(&s, c);
        } else if (c == ' ' || c == '\t' || c == '\n') {
            end_word(&s);
        } else if (c == '\'' || c == '"') {
            quote = c;
            opened = p;
            s.in_word = 1;
        } else if (c == '\\') {
            if (!p[1]) {
                snprintf(err, errlen, "'%.200s': a backslash at the end escapes nothing", text);
                goto fail;
            }
            put(&s, *++p);
        } else {
            put(&s, c);
        }
    }
    if (quote) {
        snprintf(err, errlen, "'%.200s': the %s quote at character %d is never closed", text,
                 quote == '"' ? "double" : "single", (int)(opened - text) + 1);
        goto fail;
    }
    end_word(&s);
    free(s.word);
    if (!s.argv)
        s.argv = xcalloc(1, sizeof *s.argv);
    *argv = s.argv;
    *argc = s.argc;
    return 0;
fail:
    free(s.word);
    shellwords_free(s.argv);
    return -1;
}

void shellwords_free(char **argv) {
    for (char **a = argv; a && *a; a++)
        free(*a);
    free(argv);
}

/* A word that needs no quotes: not empty, only characters that no shell
 * treats specially. */
static int plain(const char *w) {
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                               "_@%+=:,./-";
    return *w && strspn(w, safe) == strlen(w);
}

char *shellwords_join(char *const *argv) {
    strbuf b = {0};
    sb_puts(&b, "");
    for (char *const *a = argv; a && *a; a++) {
        if (a != argv)
            sb_puts(&b, " ");
        if (plain(*a)) {
            sb_puts(&b, *a);
            continue;
        }
        sb_puts(&b, "'");
        for (const char *c = *a; *c; c++)
            if (*c == '\'')
                sb_puts(&b, "'\\''"); /* close, an escaped quote, reopen */
            else
                sb_putn(&b, c, 1);
        sb_puts(&b, "'");
    }
    return b.s;
}
