/* docs: the tables of docs/files.md that are printed from rundir/'s
 * tables rather than written by hand. docs/files.md marks each with
 *   <!-- BEGIN generated: NAME -->
 *   ...
 *   <!-- END generated: NAME -->
 * (NAME: requests.csv, chunks.csv, errors.csv, summary.json, client), and
 * rundir_docs_splice gives the file back with what lies between each pair
 * printed again: `servelab help --files docs/files.md` prints it (`make
 * docs` writes it back), and a test checks the committed file is its own
 * splice. Text outside the markers is the file's own. */
#ifndef SERVELAB_RUNDIR_DOCS_H
#define SERVELAB_RUNDIR_DOCS_H

#include "common/strbuf.h"

/* `in` with every marked table printed again, into *out (appended). 0, or
 * -1 with err when a marker names no table or has no END. */
int rundir_docs_splice(const char *in, strbuf *out, char *err, int errlen);

#endif
