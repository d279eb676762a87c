#!/bin/sh
# Fails when a source file outside tests/ and bench/ has more than 1,500
# lines or a function more than 150 (docs/development.md "Code style": a
# file or function past that holds two things).  A function is counted
# from the '{' that opens it in column 0 to the '}' that closes it in
# column 0, which is how clang-format (make format) lays them out.
set -u
root=${1:-.}
cd "$root" || exit 2
max_file=1500
max_func=150
files=$(git ls-files -co --exclude-standard -- '*.c' '*.h' 2>/dev/null ||
    find . -name '*.c' -o -name '*.h')
bad=0
n=0
for f in $files; do
    case "$f" in
        tests/* | bench/* | build*/*) continue ;;
    esac
    [ -f "$f" ] || continue
    n=$((n + 1))
    lines=$(wc -l <"$f")
    if [ "$lines" -gt "$max_file" ]; then
        echo "$f: $lines lines (at most $max_file)"
        bad=1
    fi
    long=$(awk -v max="$max_func" -v f="$f" '
        /^[A-Za-z_][A-Za-z0-9_]*\(/ { name = $0; sub(/\(.*/, "", name) }
        /^\{/ { start = FNR }
        /^\}/ {
            if (start && FNR - start + 1 > max)
                printf "%s:%d: %s: %d lines (at most %d)\n", f, start, name, FNR - start + 1, max
            start = 0
        }' "$f")
    if [ -n "$long" ]; then
        echo "$long"
        bad=1
    fi
done
if [ "$bad" -ne 0 ]; then
    echo "check-size: files or functions too long (see docs/development.md, Code style)" >&2
    exit 1
fi
echo "check-size: $n files, none over $max_file lines, no function over $max_func"
