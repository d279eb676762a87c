#!/bin/bash
# bench/scale.sh: does the file import cost grow with the collection?  Runs
# bench/import.sh --no-peers --full-only for each size (default 100000,
# 300000 and 1000000 files; each tree generated once into --tree-cache and
# reused) and prints, per size: the time per document of the crawl run, of
# the whole initial import and of the no-change re-import, find's time per
# file, the peak anonymous and file-backed memory of the server, and the
# KB the server wrote per document during the initial import (wchar of
# /proc/PID/io: bulks, journals, SQLite's WAL and checkpoints), the peak
# MiB of bulks the temporary store held (du every 2 s); then
# each figure as a ratio to the smallest size, and the targets with
# PASS/MISS (not enforced: a benchmark, not a test):
#   initial import, time per document: at the largest size within 1.15x
#   of the smallest;
#   no-change re-import, time per file: its growth within 1.5x find's own;
#   peak anonymous memory: at the largest size within 1.10x of the smallest
#   and under 200 MiB.
# Usage: bench/scale.sh [--sizes "N1 N2 ..."] [--tree-cache DIR]
#                       [--threads T] [--runs R]
# The default tree cache is $TMPDIR/sluice-scale-trees (kept between runs;
# about 7 GiB for the three default sizes); SLUICE and TMPDIR as for
# bench/import.sh.
set -euo pipefail

SIZES="100000 300000 1000000"
CACHE="${TMPDIR:-/tmp}/sluice-scale-trees"
THREADS=()
RUNS=3
while [ $# -gt 0 ]; do
    case $1 in
    --sizes) SIZES=${2:?--sizes needs a list}; shift 2 ;;
    --tree-cache) CACHE=${2:?--tree-cache needs a directory}; shift 2 ;;
    --threads) THREADS=(--threads "${2:?--threads needs a value}"); shift 2 ;;
    --runs) RUNS=${2:?--runs needs a value}; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/sluice-scale.XXXXXX")
trap 'rm -rf "$out"' EXIT

echo "bench/scale.sh: sizes $SIZES, tree cache $CACHE, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
for n in $SIZES; do
    echo "== $n files: bench/import.sh --files $n --no-peers --full-only --runs $RUNS ${THREADS[*]}"
    "$here/import.sh" --files "$n" --no-peers --full-only --runs "$RUNS" "${THREADS[@]}" \
        --tree-cache "$CACHE" --summary "$out/$n" | sed 's/^/   /'
done

# get N KEY: a figure of size N's summary
get() { awk -v k="$2" '$1 == k { print $2 }' "$out/$1"; }
per() { awk -v t="$1" -v n="$2" 'BEGIN { printf "%.2f", t * 1e6 / n }'; } # microseconds per item
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }

echo
echo "per document (us; documents of the initial import) and per file (us; find and the no-change re-import):"
printf '%9s %9s %10s %10s %10s %10s %9s %9s %9s %9s %9s\n' files documents crawl_us import_us nochg_us find_us anon_MiB file_MiB rss_MiB wrote_KB store_MiB
declare -A C I NC F A FB W
first=""
for n in $SIZES; do
    d=$(get "$n" documents)
    C[$n]=$(per "$(get "$n" crawl_s)" "$d")
    I[$n]=$(per "$(get "$n" initial_s)" "$d")
    NC[$n]=$(per "$(get "$n" nochange_s)" "$(get "$n" files)")
    F[$n]=$(per "$(get "$n" find_s)" "$(get "$n" files)")
    A[$n]=$(div "$(get "$n" anon_kib)" 1024)
    FB[$n]=$(div "$(get "$n" file_kib)" 1024)
    W[$n]=$(div "$(get "$n" initial_wchar)" "$((d * 1024))")
    printf '%9s %9s %10s %10s %10s %10s %9.0f %9.0f %9.0f %9s %9.0f\n' "$(get "$n" files)" "$d" "${C[$n]}" "${I[$n]}" \
        "${NC[$n]}" "${F[$n]}" "${A[$n]}" "${FB[$n]}" "$(div "$(get "$n" rss_kib)" 1024)" "${W[$n]}" \
        "$(div "$(get "$n" store_peak_kib)" 1024)"
    [ -n "$first" ] || first=$n
done
echo
echo "growth against $first files (1.00 = flat):"
printf '%9s %10s %10s %10s %10s %9s %9s %9s\n' files crawl import nochange find anon file wrote
for n in $SIZES; do
    printf '%9s %10s %10s %10s %10s %9s %9s %9s\n' "$n" "$(div "${C[$n]}" "${C[$first]}")" "$(div "${I[$n]}" "${I[$first]}")" \
        "$(div "${NC[$n]}" "${NC[$first]}")" "$(div "${F[$n]}" "${F[$first]}")" \
        "$(div "${A[$n]}" "${A[$first]}")" "$(div "${FB[$n]}" "${FB[$first]}")" "$(div "${W[$n]}" "${W[$first]}")"
done
last=$n
verdict() { awk -v v="$1" -v lim="$2" 'BEGIN { print (v != "-" && v + 0 <= lim) ? "PASS" : "MISS" }'; }
g_import=$(div "${I[$last]}" "${I[$first]}")
g_nochg=$(div "$(div "${NC[$last]}" "${NC[$first]}")" "$(div "${F[$last]}" "${F[$first]}")")
g_anon=$(div "${A[$last]}" "${A[$first]}")
echo
echo "targets ($last against $first files; not enforced):"
printf '  %-62s %7s  %s\n' "initial import, time per document, within 1.15x" "${g_import}x" "$(verdict "$g_import" 1.15)"
printf '  %-62s %7s  %s\n' "no-change re-import, growth within 1.5x find's growth" "${g_nochg}x" "$(verdict "$g_nochg" 1.5)"
printf '  %-62s %7s  %s\n' "peak anonymous memory within 1.10x" "${g_anon}x" "$(verdict "$g_anon" 1.10)"
printf '  %-62s %7s  %s\n' "peak anonymous memory under 200 MiB" "${A[$last]} MiB" "$(verdict "${A[$last]}" 199.99)"
