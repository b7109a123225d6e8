/* shellwords: a line of arguments (a campaign's sim args or server_args,
 * `capacity --sim "..."`) split into the words of an argv, with the
 * shell's quoting rules and none of its expansions, as Python's
 * shlex.split and Ruby's Shellwords do. servelab starts its own children
 * with an argv (common/proc.h), never through a shell, so a `$(...)`, a
 * backquote, a `*` or a `;` in such a line is only text.
 *
 * The rules: blanks (space, tab, newline) separate words; '...' keeps
 * everything up to the next ' as it is; "..." keeps everything up to the
 * next unescaped ", a backslash in it escaping only $ ` " \ and a newline
 * (as in the shell; before anything else it is kept); outside quotes a
 * backslash takes the next character as it is. Quotes join with what
 * touches them (a"b c"d is one word), and '' is an empty word. An
 * unbalanced quote or a backslash at the end is an error. */
#ifndef SERVELAB_SHELLWORDS_H
#define SERVELAB_SHELLWORDS_H

/* The words of `text` (NULL: none) into *argv, a NULL-terminated array
 * that shellwords_free releases, and their count into *argc. 0, or -1 with
 * why in err (nothing to free then). */
int shellwords_split(const char *text, char ***argv, int *argc, char *err, int errlen);
/* Releases what shellwords_split made (NULL: nothing). */
void shellwords_free(char **argv);
/* The words as one line that shellwords_split (and a shell) reads back as
 * the same words: a word of plain characters as it is, any other in single
 * quotes. For logs and messages. malloc'd. */
char *shellwords_join(char *const *argv);

#endif
