#!/bin/sh
# Below src/cli/, the library neither prints nor ends the process: no
# stdout or stderr, no printf/puts/perror, no warn/err, no exit. It writes
# only where its caller asked (a FILE * or a buffer it was given, the sink
# of common/notice.h) and says how work ended with common/outcome.h; the
# commands in src/cli/ alone print and choose exit codes. Each line that
# breaks the rule is printed with its file and line, and the exit status is
# 1. Comments are not read. (A child after fork may _exit: that ends the
# child, not servelab.)
cd "$(dirname "$0")/.." || exit 2
pattern="(^|[^_A-Za-z0-9])(stdout|stderr)([^_A-Za-z0-9]|\$)|(^|[^_A-Za-z0-9])(v?printf|puts|perror|v?warnx?|v?errx?|exit)[[:space:]]*[(]"
status=0
for f in $(ls src/*/*.[ch] | grep -v '^src/cli/'); do
    # drop /* ... */ comments (also across lines) and string literals, keep line numbers
    out=$(awk -v pat="$pattern" '
        {
            line = $0; code = "";
            while (length(line) > 0) {
                if (incom) {
                    e = index(line, "*/");
                    if (!e) { line = ""; break }
                    line = substr(line, e + 2); incom = 0; continue
                }
                s = index(line, "/*");
                if (!s) { code = code line; break }
                code = code substr(line, 1, s - 1); line = substr(line, s + 2); incom = 1
            }
            gsub(/"([^"\\]|\\.)*"/, "\"\"", code)
            sub(/\/\/.*/, "", code)
            if (code ~ pat) printf "%s:%d: %s\n", FILENAME, NR, $0
        }' "$f")
    if [ -n "$out" ]; then
        printf '%s\n' "$out"
        status=1
    fi
done
[ $status = 0 ] || echo "(below src/cli/: write where the caller asked, report through common/notice.h, return an outcome)"
exit $status
