#!/bin/bash
# A busy S3 server (issue 28), through tests/s3/with-s3rver.sh: between
# the server and s3rver a flaky proxy (tests/s3/s3_proxy.py) answers
# every third request 503 or 429 itself.  The requests are retried with
# backoff: the import SUCCEEDS with every file indexed, no task needed a
# retry of its own, and the proxy did inject its faults.
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
    --count-file "$TMP/injected" >"$TMP/proxy.port" 2>"$TMP/proxy.log" &
PROXY=$!
trap 'kill "$PROXY" 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 1 100); do [ -s "$TMP/proxy.port" ] && break; sleep 0.05; done
P="http://127.0.0.1:$(head -1 "$TMP/proxy.port")"

import_config "$TMP/config.json" ".objectstore = {backend: \"s3\", s3: {endpoint: \"$P\",
    bucket: \"sluice-busy\", accessKeyId: \"$SL_TEST_S3_KEY\", secretAccessKey: \"$SL_TEST_S3_SECRET\"}}"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
define_crawl crawlBusy "$T" busy '{"maxFilesPerBulk": 10}'
if crawl crawlBusy; then ok "the crawl SUCCEEDED against a busy S3"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
jq -e '.tasks.retriedAfterErrorTaskCount == 0 and .tasks.failedAfterRetryTaskCount == 0' "$RUNJSON" >/dev/null &&
    ok "no task needed a retry: the requests were retried" || fail "tasks: $(jq -c .tasks "$RUNJSON")"
req GET /smila/index/default/
expect_jq '.documentCount == 60' "the index holds the 60 files"
n=$(cat "$TMP/injected" 2>/dev/null || echo 0)
[ "$n" -ge 10 ] && ok "the proxy answered $n requests 503 or 429" || fail "only $n faults injected"
finish
