#!/bin/sh
# Fails when the C sources call a banned function (docs/development.md
# "Code style"):
# unbounded string functions, atoi-style parsing, raw allocation outside
# core/alloc.c, and the calls that are not thread-safe (strerror, localtime,
# gmtime, asctime, ctime: use sl_errno_str and the _r forms).  Prints every
# offending line.
set -u
root=${1:-.}
cd "$root" || exit 2
pattern='(^|[^A-Za-z0-9_.>])(strcpy|strcat|sprintf|vsprintf|strtok|gets|atoi|atol|atoll|malloc|calloc|realloc|free|strdup|strndup|strerror|strncpy|localtime|gmtime|asctime|ctime)[[:space:]]*\('
files=$(git ls-files -co --exclude-standard -- '*.c' '*.h' 2>/dev/null || find . -name '*.c' -o -name '*.h')
bad=0
for f in $files; do
    case "$f" in
        core/alloc.c) continue ;;
        build*/*) continue ;;
    esac
    [ -f "$f" ] || continue
    # Ignore comment-only lines so prose may name the functions.
    hits=$(grep -nE "$pattern" "$f" | grep -vE '^[0-9]+:[[:space:]]*(/\*|\*)')
    if [ -n "$hits" ]; then
        echo "$hits" | sed "s|^|$f:|"
        bad=1
    fi
done
if [ "$bad" -ne 0 ]; then
    echo "check-banned: banned calls found (see docs/development.md, Code style)" >&2
    exit 1
fi
echo "check-banned: no banned calls in $(echo "$files" | wc -w) files"
