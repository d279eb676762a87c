#!/bin/bash
# webExtractor: a compound whose download ends while another download of
# the task is in flight is extracted only once no transfer is (issue 6,
# review): extracting it at once held up the other transfer past its
# wall-clock timeout.  The site (web_extract_wait.py) serves /big.zip and
# /big2.zip, whose extraction together takes longer than timeoutMs, at
# once, and /slow.zip after a delay well inside timeoutMs; one
# webExtractor task downloads all three.  A workflow without pusher keeps
# the elements out of the index.  Asserted: the three compounds fetched
# and extracted, no network failure (the slow download did not time out:
# without the deferral it did), both big extractions deferred, every
# element written, the run SUCCEEDED.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"
. "$(dirname "$0")/web_lib.sh"

ENTRIES=${ENTRIES:-80000}
spawn_site "$TMP/site.port" python3 "$SRC/tests/integration/web_extract_wait.py" --port-file "$TMP/site.port" \
    --entries "$ENTRIES" --slow 0.3

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

define_job waitJob webExtractWait "$(web_params "$SITE" wait 'del(.jobToPushTo) | .timeoutMs = 1500 |
    .politeness.respectRobots = false')"
[ "$STATUS" = 200 ] || { echo "define waitJob: $STATUS $(cat "$BODY")" >&2; exit 1; }

t0=$(date +%s.%N)
expect_crawl waitJob "crawl SUCCEEDED"
echo "# crawl took $(echo "$(date +%s.%N) - $t0" | bc) s"
jq -c '.worker' "$RUNJSON"
expect_counter compounds.fetched = 3 "the three compounds downloaded and extracted"
expect_counter links.failed.network = 0 "no download timed out"
expect_counter compounds.deferred = 2 "the big zips' extractions waited for slow.zip's download"
expect_counter elements.records = $((2 * ENTRIES + 3)) "every element written ($((2 * ENTRIES + 3)))"
finish
