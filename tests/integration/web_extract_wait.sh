#!/bin/bash
# webExtractor: a compound whose download ends while another download of
# the task is in flight is extracted only once no transfer is (issue 6,
# review): extracting it at once held up the other transfer past its
# wall-clock timeout.  The site (web_extract_wait.py) serves /big.zip,
# whose extraction takes longer than timeoutMs, at once, and /slow.zip
# after a delay well inside timeoutMs; one webExtractor task downloads
# both.  A workflow without pusher keeps the elements out of the index.
# Asserted: both compounds fetched and extracted, no network failure
# (the slow download did not time out), big.zip's extraction was deferred,
# every element written, the run SUCCEEDED.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

ENTRIES=${ENTRIES:-60000}
python3 "$SRC/tests/integration/web_extract_wait.py" --port-file "$TMP/site.port" \
    --entries "$ENTRIES" --slow 0.2 &
SITE_PID=$!
trap 'kill $SITE_PID 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 200); do [ -s "$TMP/site.port" ] && break; sleep 0.05; done
SITE="http://127.0.0.1:$(cat "$TMP/site.port")"

mkdir -p "$TMP/workflows"
cp "$SRC"/workflows/*.json "$TMP/workflows/"
cat >"$TMP/workflows/webExtractWait.json" <<'JSON'
{"name": "webExtractWait", "modes": ["runOnce"], "parameters": {"tempStore": "temp"},
 "startAction": {"worker": "webCrawler", "input": {"linksToCrawl": "linksBucket"},
   "output": {"linksToCrawl": "linksBucket", "crawledRecords": "crawledBucket"}},
 "actions": [
  {"worker": "deltaChecker", "input": {"recordsToCheck": "crawledBucket"},
   "output": {"updatedRecords": "pagesBucket", "updatedCompounds": "compoundsBucket"}},
  {"worker": "webExtractor", "input": {"compounds": "compoundsBucket"},
   "output": {"files": "filesBucket"}}]}
JSON
write_config "$TMP/config.json" ".jobmanager = {\"configDir\": \"$SRC/config\", \"workflowsDir\": \"$TMP/workflows\", \"leaseSeconds\": 30} | .workers = {\"threads\": 2}"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

params=$(jq -cn --arg url "$SITE/" --arg inc "^$SITE/" \
    '{dataSource: "wait", startUrl: $url, timeoutMs: 800,
      filters: {urlPatterns: {include: [$inc]}},
      politeness: {delayMs: 0, maxConnectionsPerHost: 4, respectRobots: false}}')
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"waitJob\", \"workflow\": \"webExtractWait\", \"parameters\": $params}"
[ "$STATUS" = 200 ] || { echo "define waitJob: $STATUS $(cat "$BODY")" >&2; exit 1; }

t0=$(date +%s.%N)
if crawl waitJob; then ok "crawl SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
echo "# crawl took $(echo "$(date +%s.%N) - $t0" | bc) s"
jq -c '.worker' "$RUNJSON"
[ "$(counter compounds.fetched)" = 2 ] && ok "both compounds downloaded and extracted" ||
    fail "compounds.fetched = $(counter compounds.fetched)"
[ "$(counter links.failed.network)" = 0 ] && ok "no download timed out" ||
    fail "links.failed.network = $(counter links.failed.network)"
[ "$(counter compounds.deferred)" = 1 ] && ok "big.zip's extraction waited for slow.zip's download" ||
    fail "compounds.deferred = $(counter compounds.deferred)"
[ "$(counter elements.records)" = $((ENTRIES + 3)) ] && ok "every element written ($((ENTRIES + 3)))" ||
    fail "elements.records = $(counter elements.records)"
finish
