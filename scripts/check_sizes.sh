#!/bin/sh
# Function and file sizes: every function over MAX_FN lines and every file
# over MAX_FILE lines (the built-in prompt data excepted) is printed, and the
# exit status is 1 when there is any.
MAX_FN=${MAX_FN:-120}
MAX_FILE=${MAX_FILE:-800}
status=0
for f in $(git ls-files 'src/*.[ch]' 'tests/*.[ch]' 'bench/*.c'); do
    n=$(wc -l < "$f")
    case "$f" in src/workload/builtin_prompts.c) ;; *)
        if [ "$n" -gt "$MAX_FILE" ]; then echo "$f: $n lines (at most $MAX_FILE)"; status=1; fi ;;
    esac
    awk -v max="$MAX_FN" -v f="$f" '
    function strip(s) { gsub(/\\./, "", s); gsub(/"[^"]*"/, "", s); gsub(/'\''[^'\'']*'\''/, "", s); sub(/\/\/.*/, "", s); return s }
    {
        line = $0
        if (incomment) { if (index(line, "*/")) { sub(/.*\*\//, "", line); incomment = 0 } else next }
        gsub(/\/\*[^*]*\*+([^\/*][^*]*\*+)*\//, "", line)
        if (index(line, "/*")) { sub(/\/\*.*/, "", line); incomment = 1 }
        line = strip(line)
        if (depth == 0 && line ~ /^[A-Za-z_]/) { head = NR; name = $0 }
        o = gsub(/\{/, "{", line); c = gsub(/\}/, "}", line)
        if (depth == 0 && o > c && head && line ~ /\{[ \t]*$/ && (name ~ /\(/)) { start = head; fname = name }
        depth += o - c
        if (depth == 0 && start) {
            len = NR - start + 1
            if (len > max) { printf "%s:%d: %d lines (at most %d): %s\n", f, start, len, max, substr(fname, 1, 60); bad = 1 }
            start = 0; head = 0
        }
    }
    END { exit bad }' "$f" || status=1
done
exit $status
