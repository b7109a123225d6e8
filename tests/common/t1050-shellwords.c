/* shellwords: a line of arguments split as the shell quotes, with none of
 * its expansions (common/shellwords.h). Hostile text stays text: a $(...),
 * a backquote, a glob or a ; is a word's characters, and nothing runs
 * (these tests start nothing; the end-to-end ones are in
 * t5120-no-shell-anywhere.c). */
#include "common/shellwords.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* The words of text joined by '|', or "ERROR: why". */
static char *split_text(const char *text) {
    static char buf[2048];
    char **argv, err[512];
    int argc;
    if (shellwords_split(text, &argv, &argc, err, sizeof err)) {
        snprintf(buf, sizeof buf, "ERROR: %s", err);
        return buf;
    }
    buf[0] = 0;
    for (int i = 0; i < argc; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? "|" : "", argv[i]);
    CHECK(argv[argc] == NULL);
    shellwords_free(argv);
    return buf;
}

TEST(shellwords_blanks_separate_words) {
    CHECK_STR(split_text("--profile tiny  --seed\t3\n--x"), "--profile|tiny|--seed|3|--x");
    CHECK_STR(split_text("   "), "");
    CHECK_STR(split_text(""), "");
    CHECK_STR(split_text(NULL), "");
}

TEST(shellwords_quotes_group_and_join) {
    CHECK_STR(split_text("--chat-template 'a b'"), "--chat-template|a b");
    CHECK_STR(split_text("\"x y\" z"), "x y|z");
    CHECK_STR(split_text("a\"b c\"d"), "ab cd");
    CHECK_STR(split_text("'' \"\" x"), "||x");
    CHECK_STR(split_text("'it'\\''s'"), "it's");
    CHECK_STR(split_text("\"say \\\"hi\\\" \\\\ \\n\""), "say \"hi\" \\ \\n");
    CHECK_STR(split_text("a\\ b c\\'d"), "a b|c'd");
}

TEST(shellwords_expand_nothing) {
    CHECK_STR(split_text("--out x$(touch P)"), "--out|x$(touch|P)");
    CHECK_STR(split_text("\"$(touch P)\" `touch Q` '${A:=$(touch R)}'"),
              "$(touch P)|`touch|Q`|${A:=$(touch R)}");
    CHECK_STR(split_text("a;touch P *.c ~ $HOME"), "a;touch|P|*.c|~|$HOME");
    CHECK_STR(split_text("\"\\$HOME \\`x\\`\""), "$HOME `x`");
}

TEST(shellwords_refuse_unbalanced_quotes) {
    const char *bad[] = {"'open", "a \"open", "x 'y\"", "\"a\\\"", "end\\", NULL};
    for (const char **b = bad; *b; b++) {
        char *r = split_text(*b);
        CHECK_MSG(!strncmp(r, "ERROR: ", 7), "'%s' gave %s", *b, r);
    }
    CHECK_MSG(strstr(split_text("a 'b"), "single quote at character 3 is never closed"), "%s",
              split_text("a 'b"));
}

/* What join writes, split reads back as the same words. */
TEST(shellwords_join_reads_back) {
    char *const words[] = {"/opt/my tools/servelab",
                           "sim",
                           "--trace",
                           "o;x/$(touch P)/t.csv",
                           "it's",
                           "",
                           "plain-1.5",
                           NULL};
    char *line = shellwords_join(words);
    CHECK_STR(line, "'/opt/my tools/servelab' sim --trace 'o;x/$(touch P)/t.csv' 'it'\\''s' '' "
                    "plain-1.5");
    char **back, err[256];
    int n;
    CHECK(shellwords_split(line, &back, &n, err, sizeof err) == 0);
    CHECK_INT(n, 7);
    for (int i = 0; i < n; i++)
        CHECK_STR(back[i], words[i]);
    shellwords_free(back);
    free(line);
}
