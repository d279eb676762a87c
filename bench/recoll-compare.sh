#!/bin/bash
# bench/recoll-compare.sh: Sluice's search against Recoll's on the same
# corpus and the same queries (bench/compare-queries.txt: each line a
# query in Sluice's language, a tab, the query in Recoll's).
#
# The corpus is text people keep on every Debian machine: the C headers
# under /usr/include (*.h) and the documentation under /usr/share/doc
# (copyright files, README, *.txt, *.html), copied into a temporary
# folder.  Sluice imports it (a fileCrawling job into the default index,
# `sluice job start --wait`); recollindex indexes it without stemming
# (indexstemminglanguages empty, recollq -s ""), as Sluice has none.
# For each query the script prints both totals (recollq -E: exact) and
# how many of Recoll's top 10 are in Sluice's top 10 (by path), and
# at the end the mean overlap, how many queries agree on the total, and
# how many on the whole top-10 set.  docs/index.md "Compared with
# Recoll" explains the differences.  Not a test.
#
# usage: bench/recoll-compare.sh [--queries FILE] [--keep] [--details]
#                                [--baseline BIN]
#   --details prints both top-10 lists of each query whose sets differ
#   --baseline BIN  imports the corpus with a second sluice binary too and
#                   prints its share of Recoll's top 10 beside (the
#                   ranking of two versions against the same Recoll index)
# Environment: SLUICE (default <repo>/build/sluice), TMPDIR.  Needs
# recollcmd (recollq, recollindex), curl, jq; installs recollcmd with
# apt-get when it is missing and this runs as root.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
SLUICE=${SLUICE:-$REPO/build/sluice}
QUERIES=$REPO/bench/compare-queries.txt
KEEP=0
DETAILS=0
BASELINE=
while [ $# -gt 0 ]; do
    case $1 in
    --queries) QUERIES=${2:?--queries needs a file}; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --details) DETAILS=1; shift ;;
    --baseline) BASELINE=${2:?--baseline needs a binary}; shift 2 ;;
    -h | --help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "recoll-compare.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if ! command -v recollq >/dev/null; then
    [ "$(id -u)" = 0 ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -q recollcmd >/dev/null ||
        { echo "recoll-compare.sh: recollq is missing (apt-get install recollcmd)" >&2; exit 1; }
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-recoll.XXXXXX")
PID=""
BPID=""
cleanup() {
    [ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    [ -n "$BPID" ] && kill -TERM "$BPID" 2>/dev/null && wait "$BPID" 2>/dev/null
    if [ "$KEEP" -eq 1 ]; then echo "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
ROOT=$TMP/corpus
mkdir -p "$ROOT"

# ---- the corpus
{
    find /usr/include -type f -name '*.h' -print0
    find /usr/share/doc -type f \( -name copyright -o -name 'README' -o -name '*.txt' \
        -o -name '*.html' \) -print0
} | tar --null -T - -cf - 2>/dev/null | tar -C "$ROOT" -xf -
files=$(find "$ROOT" -type f | wc -l)
mib=$(du -sm "$ROOT" | cut -f1)
echo "bench/recoll-compare.sh: $(date -u +%FT%TZ), nproc $(nproc)"
echo "corpus: $files files, $mib MiB (/usr/include/**/*.h; /usr/share/doc copyright, README, *.txt, *.html)"
echo "sluice: $SLUICE; recoll: recollcmd $(dpkg-query -W -f='${Version}' recollcmd 2>/dev/null || echo '?')"

# ---- Recoll
CONF=$TMP/recoll-conf
mkdir -p "$CONF"
cat >"$CONF/recoll.conf" <<EOF
topdirs = $ROOT
noaspell = 1
indexstemminglanguages =
loglevel = 2
logfilename = $CONF/recoll.log
EOF
start=$(date +%s.%N)
recollindex -c "$CONF" >"$TMP/recollindex.log" 2>&1
echo "recollindex: $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}') s, $(sed -n 's/^dbtotdocs = //p' "$CONF/idxstatus.txt" 2>/dev/null || echo '?') documents"

# ---- Sluice
# sluice_import BIN DATA: a server of BIN on DATA imports the corpus; its base URL
# in BASE, its pid in LASTPID
sluice_import() {
    local port start
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    BASE=http://127.0.0.1:$port
    (cd "$REPO" && exec "$1" serve --listen "127.0.0.1:$port" --data-dir "$2" \
        --log-level warn) >"$2.log" 2>&1 &
    LASTPID=$!
    for _ in $(seq 1 300); do
        curl -fsS "$BASE/smila/" >/dev/null 2>&1 && break
        sleep 0.1
    done
    jq -n --arg root "$ROOT" '{name: "compare", workflow: "fileCrawling",
        parameters: {dataSource: "compare", rootFolder: $root, jobToPushTo: "indexUpdate"}}' >"$TMP/job.json"
    "$1" job define --server "$BASE" "$TMP/job.json" >/dev/null
    start=$(date +%s.%N)
    "$1" job start --server "$BASE" compare --wait --timeout 3600 >/dev/null 2>"$TMP/start.log" ||
        { echo "recoll-compare.sh: the import failed:" >&2; cat "$TMP/start.log" >&2; exit 1; }
    echo "sluice ($1): $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}') s, $(curl -s "$BASE/smila/index/default" | jq -r .documentCount) documents"
}
BBASE=""
if [ -n "$BASELINE" ]; then
    sluice_import "$BASELINE" "$TMP/baseline"
    BPID=$LASTPID BBASE=$BASE
fi
sluice_import "$SLUICE" "$TMP/data"
PID=$LASTPID

# ---- the queries
# top10 FILE: sorted paths, one a line
sluice_top() { # QUERY OUT [BASE]: top-10 paths into OUT, prints the total
    curl -s -G "${3:-$BASE}/smila/index/default/search" --data-urlencode "q=$1" --data-urlencode limit=10 >"$TMP/reply"
    jq -r '.hits[]? | (.path // ._recordid)' "$TMP/reply" | sort >"$2"
    jq -r '.total // ("error: " + .error.message)' "$TMP/reply"
}
recoll_top() { # QUERY OUT
    recollq -c "$CONF" -s "" -b -n 10 "$1" 2>/dev/null | sed -n 's|^file://||p' | sort >"$2"
    recollq -c "$CONF" -s "" -E -Q "$1" 2>/dev/null | sed -n 's/^\([0-9]*\) results.*/\1/p' | head -1
}

printf '%-44s %8s %8s %8s%s\n' "query (Sluice's)" sluice recoll "top10 in" "${BBASE:+  baseline}"
n=0 sum=0 same_total=0 same_set=0 counted=0 bsum=0 bsame_set=0
while IFS=$'\t' read -r sq rq; do
    case $sq in '#'* | '') continue ;; esac
    sq=${sq//@ROOT@/$ROOT}
    rq=${rq//@ROOT@/$ROOT}
    n=$((n + 1))
    st=$(sluice_top "$sq" "$TMP/s")
    rt=$(recoll_top "$rq" "$TMP/r")
    rn=$(wc -l <"$TMP/r")
    both=$(comm -12 "$TMP/s" "$TMP/r" | wc -l)
    [ "$st" = "$rt" ] && same_total=$((same_total + 1))
    cmp -s "$TMP/s" "$TMP/r" && same_set=$((same_set + 1))
    bshown=""
    if [ -n "$BBASE" ]; then
        sluice_top "$sq" "$TMP/b" "$BBASE" >/dev/null
        bboth=$(comm -12 "$TMP/b" "$TMP/r" | wc -l)
        cmp -s "$TMP/b" "$TMP/r" && bsame_set=$((bsame_set + 1))
        [ "$rn" -gt 0 ] && bsum=$(awk -v a="$bsum" -v b="$bboth" -v c="$rn" 'BEGIN {print a + b / c}')
        bshown=$(printf '  %5s/%-2s' "$bboth" "$rn")
    fi
    if [ "$rn" -gt 0 ]; then
        sum=$(awk -v a="$sum" -v b="$both" -v c="$rn" 'BEGIN {print a + b / c}')
        counted=$((counted + 1))
    fi
    shown=${sq//$ROOT/@ROOT@}
    printf '%-44s %8s %8s %5s/%-2s%s\n' "${shown:0:44}" "$st" "${rt:-?}" "$both" "$rn" "$bshown"
    if [ "$DETAILS" -eq 1 ] && ! cmp -s "$TMP/s" "$TMP/r"; then
        comm -23 "$TMP/s" "$TMP/r" | sed "s|$ROOT|@ROOT@|; s/^/    only sluice: /"
        comm -13 "$TMP/s" "$TMP/r" | sed "s|$ROOT|@ROOT@|; s/^/    only recoll: /"
    fi
done <"$QUERIES"
echo
echo "$n queries: the same total in $same_total, the same top-10 set in $same_set;"
echo "mean share of Recoll's top 10 in Sluice's top 10: $(awk -v s="$sum" -v c="$counted" 'BEGIN {printf "%.2f", c ? s / c : 0}') (over the $counted queries Recoll finds anything for)"
if [ -n "$BBASE" ]; then
    echo "baseline ($BASELINE): the same top-10 set in $bsame_set; mean share $(awk -v s="$bsum" -v c="$counted" 'BEGIN {printf "%.2f", c ? s / c : 0}')"
fi
