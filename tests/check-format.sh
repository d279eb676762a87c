#!/bin/sh
# Fails when a C source is not clang-format clean (.clang-format at the root).
set -u
root=${1:-.}
cd "$root" || exit 2
if ! command -v clang-format >/dev/null 2>&1; then
    echo "check-format: clang-format is not installed (scripts/install-deps.sh installs it)" >&2
    exit 1
fi
files=$(git ls-files -co --exclude-standard -- '*.c' '*.h' 2>/dev/null)
# shellcheck disable=SC2086
if ! clang-format --dry-run --Werror $files; then
    echo "check-format: run 'make format'" >&2
    exit 1
fi
echo "check-format: $(echo "$files" | wc -w) files clean"
