#!/bin/bash
# Workers in processes of their own on shared S3 storage (issue 28), run
# through tests/s3/with-s3rver.sh: the server keeps the buckets on S3 and
# leaves the fileFetcher, the fileExtractor and the textExtractor to
# `sluice worker` processes (workers.external), two per type, each given
# the server's configuration file (--config), so that they read and write
# the bulks on S3 themselves:
# 1. the workers say they work on S3 directly;
# 2. the crawl SUCCEEDS and the index equals the tree, PDF text included
#    (the external textExtractor has the converters);
# 3. one fileFetcher worker killed with SIGKILL while the crawl runs:
#    the other one takes its work, the re-crawl of the changed tree
#    SUCCEEDS and the index follows the tree.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
: "${SL_TEST_S3_ENDPOINT:?run me through tests/s3/with-s3rver.sh}"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

T="$TMP/tree"
mkdir -p "$T"
T=$(realpath "$T")
python3 - "$T" <<'PY'
import os, sys
root = sys.argv[1]
for i in range(300):
    d = os.path.join(root, "d%02d" % (i % 10))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%03d.txt" % i), "w") as f:
        f.write("worker file %d, word w%d\n" % (i, i) * 10)
PY
cp "$(dirname "$0")/../docs/sample.pdf" "$T/d00/"
(cd "$T/d01" && zip -q "$T/pack.zip" f001.txt f011.txt)

expected() {
    { find "$T" -type f; unzip -Z1 "$T/pack.zip" | sed "s|^|$T/pack.zip!/|"; } | LC_ALL=C sort
}

s3_request PUT sluice-shared >/dev/null
import_config "$TMP/config.json" ".objectstore = {backend: \"s3\", s3: {endpoint: \"$SL_TEST_S3_ENDPOINT\",
    bucket: \"sluice-shared\", accessKeyId: \"$SL_TEST_S3_KEY\", secretAccessKey: \"$SL_TEST_S3_SECRET\"}}
    | .jobmanager.leaseSeconds = 3 | .workers.external = \"fileFetcher,fileExtractor,textExtractor\""
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

PIDS=""
# worker TYPE N: a `sluice worker` of TYPE (log $TMP/TYPE-N.log)
worker() {
    "$SLUICE" worker --server "$BASE" --worker "$1" --config "$TMP/config.json" \
        --threads 2 --host "$1-$2" 2>"$TMP/$1-$2.log" &
    PIDS="$PIDS $!"
    eval "PID_$1_$2=$!"
}
for t in fileFetcher fileExtractor textExtractor; do
    worker "$t" 1
    worker "$t" 2
done
trap 'rc=$?; for p in $PIDS; do kill -KILL "$p" 2>/dev/null || true; done; cleanup $rc' EXIT
# until each has said so (a sanitizer build starts slowly: 0.5 s saw 3)
for i in $(seq 1 200); do
    n=$(grep -l "objects on S3 directly" "$TMP"/*-[12].log | wc -l || true)
    [ "$n" = 6 ] && break
    sleep 0.1
done
[ "$n" = 6 ] && ok "the 6 workers read and write the bulks on S3 directly" ||
    fail "$n of 6 workers on S3 in 20 s: $(head -3 "$TMP"/fileFetcher-1.log)"

# ---- 2. the crawl
define_crawl crawlShared "$T" shared
if crawl crawlShared; then ok "the crawl SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
snapshot "$TMP/snap"
expected >"$TMP/want"
ids "$TMP/snap" | LC_ALL=C sort >"$TMP/got"
diff "$TMP/want" "$TMP/got" >"$TMP/diff" && ok "the index equals the tree ($(wc -l <"$TMP/got") documents)" ||
    fail "index ids differ: $(head -c 600 "$TMP/diff")"
curl -sS -o "$TMP/doc.json" "$BASE/smila/index/default/$(jq -rn --arg id "$T/d00/sample.pdf" '$id|@uri')"
jq -e '.text | contains("The quick sluice gate opens at dawn")' "$TMP/doc.json" >/dev/null &&
    ok "the external textExtractor read the PDF" || fail "sample.pdf: $(head -c 300 "$TMP/doc.json")"

# ---- 3. a fileFetcher killed, changes re-crawled
for i in $(seq 0 40); do echo "changed $i, word zulu" >"$T/d0$((i % 10))/f$(printf %03d $((i * 7)))".txt; done
rm "$T/d09/f299.txt"
start_run crawlShared
sleep 0.3
kill -KILL "$PID_fileFetcher_1"
if wait_run crawlShared "$RUN"; then ok "the re-crawl SUCCEEDED with a fileFetcher killed"; else
    fail "re-crawl: $(jq -c '{state, tasks}' "$RUNJSON" | head -c 600)"; fi
wait_indexed
snapshot "$TMP/snap2"
expected >"$TMP/want"
ids "$TMP/snap2" | LC_ALL=C sort >"$TMP/got"
diff "$TMP/want" "$TMP/got" >"$TMP/diff" && ok "the index follows the tree" ||
    fail "index ids differ: $(head -c 600 "$TMP/diff")"
"$SLUICE" search --server "$BASE" --limit 100 zulu >"$TMP/hits" 2>/dev/null || true
[ "$(grep -c "" "$TMP/hits")" = 41 ] && ok "the 41 changed files have their new text" ||
    fail "zulu hits: $(grep -c "" "$TMP/hits")"
finish
