#!/bin/bash
# A busy S3 server (issue 28), through tests/s3/with-s3rver.sh: between
# the server and s3rver a flaky proxy (tests/s3/s3_proxy.py) answers
# every third request 503 or 429 itself.  The requests are retried with
# backoff: the import SUCCEEDS with every file indexed, no task needed a
# retry of its own, and the proxy did inject its faults.
# Then an outage longer than those retries: every HEAD of a bulk just
# written answers 503, until a finish met it.  The jobmanager cannot see a finished task's outputs
# then; the finish is refused ("finish it again") and repeated, never
# taken as "the task wrote nothing" (that dropped a bulk of 10 documents).
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
: "${SL_TEST_S3_ENDPOINT:?run me through tests/s3/with-s3rver.sh}"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

T="$TMP/tree"
mkdir -p "$T/a" "$T/b"
T=$(realpath "$T")
for i in $(seq 1 60); do echo "busy file $i" >"$T/$([ $((i % 2)) = 0 ] && echo a || echo b)/f$i.txt"; done
s3_request PUT sluice-busy >/dev/null
python3 "$(dirname "$0")/../s3/s3_proxy.py" --upstream "$SL_TEST_S3_ENDPOINT" --every 3 \
    --count-file "$TMP/injected" --outage-file "$TMP/outage" --log "$TMP/requests.log" >"$TMP/proxy.port" 2>"$TMP/proxy.log" &
PROXY=$!
OUTAGE=""
trap 'rc=$?; kill "$PROXY" $OUTAGE 2>/dev/null || true; cleanup $rc' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/proxy.port" ] && break; sleep 0.05; done
P="http://127.0.0.1:$(head -1 "$TMP/proxy.port")"

import_config "$TMP/config.json" ".objectstore = {backend: \"s3\", s3: {endpoint: \"$P\",
    bucket: \"sluice-busy\", accessKeyId: \"$SL_TEST_S3_KEY\", secretAccessKey: \"$SL_TEST_S3_SECRET\"}}"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
define_crawl crawlBusy "$T" busy '{"maxFilesPerBulk": 10}'
if crawl crawlBusy; then ok "the crawl SUCCEEDED against a busy S3"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed || fail "the index did not catch up in 60 s"
jq -e '.tasks.retriedAfterErrorTaskCount == 0 and .tasks.failedAfterRetryTaskCount == 0' "$RUNJSON" >/dev/null &&
    ok "no task needed a retry: the requests were retried" || fail "tasks: $(jq -c .tasks "$RUNJSON")"
req GET /smila/index/default/
expect_jq '.documentCount == 60' "the index holds the 60 files"
if [ "$(jq .documentCount "$BODY")" != 60 ]; then
    # the evidence: what was pushed, accepted, committed and indexed
    cp "$BODY" "$TMP/index.json"
    curl -sS "$BASE/smila/bulkbuilder/" >"$TMP/bulkbuilder.json"
    cur=$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/" | jq -r .runs.current)
    curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/$cur/" >"$TMP/indexupdate.json"
    echo "# crawl: $(jq -c .worker "$RUNJSON")" >&2
    echo "# bulkbuilder: $(jq -c . "$TMP/bulkbuilder.json")" >&2
    echo "# indexUpdate: $(jq -c '{tasks, worker}' "$TMP/indexupdate.json")" >&2
fi
n=$(cat "$TMP/injected" 2>/dev/null || echo 0)
[ "$n" -ge 10 ] && ok "the proxy answered $n requests 503 or 429" || fail "only $n faults injected"

U="$TMP/outage-tree"
mkdir -p "$U"
for i in $(seq 1 40); do echo "outage file $i" >"$U/o$i.txt"; done
define_crawl crawlOutage "$(realpath "$U")" outage '{"maxFilesPerBulk": 10}'
touch "$TMP/outage"
# the outage ends when a finish met it (or after 20 s)
(for _ in $(seq 1 200); do
    grep -q "cannot see the outputs of the task" "$TMP/server.log" && break
    sleep 0.1
done; sleep 0.5; rm -f "$TMP/outage") &
OUTAGE=$!
if crawl crawlOutage; then ok "the crawl SUCCEEDED through an outage"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait "$OUTAGE"
wait_indexed || fail "the index did not catch up in 60 s"
req GET /smila/index/default/
expect_jq '.documentCount == 100' "the index holds the 60 + 40 files"
# a finish repeated must not commit a bulk twice
cur=$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/" | jq -r .runs.current)
curl -sS -o "$TMP/iu.json" "$BASE/smila/jobmanager/jobs/indexUpdate/$cur/"
jq -e '[.worker[] | .["records.inserted"] // 0] | add == 100' "$TMP/iu.json" >/dev/null &&
    ok "the bulkbuilder committed 100 records, none twice" ||
    fail "indexUpdate counters: $(jq -c .worker "$TMP/iu.json")"
grep -q "cannot see the outputs of the task" "$TMP/server.log" &&
    ok "a finish during the outage was refused and repeated" ||
    fail "no finish met the outage (the test proves nothing)"
finish
