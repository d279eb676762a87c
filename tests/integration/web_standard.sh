#!/bin/bash
# Web import with several start URLs (issue 6, SMILA.md 7.5): a crawl job
# of the workflow webCrawlingStandard runs in standard mode; its start
# action is the bulkbuilder, whose records (start URLs, by _recordid or
# httpUrl) feed the webCrawler's linksToCrawl.  Two generated sites on
# two ports (web_site.py):
# 1. runOnce is refused for that workflow; a standard run starts;
# 2. three start URLs pushed one after the other (each its own bulk, so
#    its own workflow run): host A's start page, host B's (as httpUrl),
#    and a page of A that no link reaches (only a rel=nofollow one);
#    every page of both sites is indexed, each fetched once, nothing
#    disallowed; then finish: the completion runs, SUCCEEDED, and records
#    pushed afterwards are refused (503);
# 3. a second standard run with only A's start URL, finished right after
#    the push (the finish waits until the bulkbuilder handed it over), and
#    strategy full: nothing changed is pushed, and at finish the
#    delta-delete removes what this run did not reach (host B, the
#    unlinked page);
# 4. a standard run finished with nothing pushed deletes nothing.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

start_site() { # NAME: SITE_<NAME> base URL, access log $TMP/NAME.log
    python3 "$SRC/tests/integration/web_site.py" --port-file "$TMP/$1.port" \
        --log "$TMP/$1.log" --pages 12 &
    PIDS="$PIDS $!"
    for _ in $(seq 1 100); do [ -s "$TMP/$1.port" ] && break; sleep 0.05; done
    eval "SITE_$1=http://127.0.0.1:$(cat "$TMP/$1.port")"
}
PIDS=""
trap 'kill $PIDS 2>/dev/null; cleanup' EXIT
start_site A
start_site B

import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

params=$(jq -cn --arg a "$SITE_A" --arg b "$SITE_B" \
    '{dataSource: "multi", jobToPushTo: "indexUpdate",
      filters: {urlPatterns: {include: ["^" + $a + "/", "^" + $b + "/"]}},
      politeness: {delayMs: 0, maxConnectionsPerHost: 4}}')
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d "{\"name\": \"crawlMulti\", \"workflow\": \"webCrawlingStandard\", \"parameters\": $params}"
expect_status 200 "a standard crawl job without startUrl is defined"

# ---- 1. modes
req POST /smila/jobmanager/jobs/crawlMulti/ -d '{"mode": "runOnce"}'
expect_status 400 "runOnce is refused: the workflow starts with the bulkbuilder"
req POST /smila/job/crawlMulti/record -d "{\"_recordid\": \"$SITE_A/\"}"
expect_status 503 "no start URL is taken while the job does not run"
req POST /smila/jobmanager/jobs/crawlMulti/ -d '{"mode": "standard"}'
expect_status 200 "standard run started"
RUN=$(jq -r .jobId "$BODY")

# push RECORD_JSON: one record, then until the bulkbuilder handed it to
# the job (committedBulks grew), so every push is its own workflow run
pushed=0
push() {
    local i
    req POST /smila/job/crawlMulti/record -d "$1"
    [ "$STATUS" = 202 ] || { fail "push $1: $STATUS $(cat "$BODY")"; return 0; }
    pushed=$((pushed + 1))
    for i in $(seq 1 300); do
        curl -sS "$BASE/smila/bulkbuilder/" |
            jq -e ".jobs[] | select(.job == \"crawlMulti\") | .committedBulks >= $pushed" >/dev/null && return 0
        sleep 0.05
    done
    fail "the bulkbuilder did not commit start URL $pushed"
}

# until_indexed FILE: until the index holds exactly the ids of FILE (60 s)
until_indexed() {
    local i
    for i in $(seq 1 300); do
        wait_indexed || true
        snapshot "$TMP/snap"
        ids "$TMP/snap" | LC_ALL=C sort >"$TMP/got"
        cmp -s "$1" "$TMP/got" && return 0
        sleep 0.2
    done
    return 1
}

expected() { # SITE: its indexable URLs
    python3 "$SRC/tests/integration/web_site.py" --pages 12 --expected | sed "s|^|$1|"
}

# ---- 2. three start URLs, three workflow runs
push "{\"_recordid\": \"$SITE_A/\"}"
push "{\"_recordid\": \"start-b\", \"httpUrl\": \"$SITE_B/\"}"
push "{\"_recordid\": \"$SITE_A/p/nofollow.html\"}"
{ expected "$SITE_A"; expected "$SITE_B"; echo "$SITE_A/p/nofollow.html"; } | LC_ALL=C sort >"$TMP/want"
if until_indexed "$TMP/want"; then
    ok "every page of both sites and the unlinked start page is indexed ($(wc -l <"$TMP/want"))"
else
    fail "index differs: $(diff "$TMP/want" "$TMP/got" | head -c 600)"
fi
req GET "/smila/jobmanager/jobs/crawlMulti/$RUN/"
expect_jq '.state == "RUNNING" and .runMode == "STANDARD"' "the run is still RUNNING in standard mode"
expect_jq '.workflowRuns.startedWorkflowRunCount >= 3' "each pushed bulk started its own workflow run"
req POST "/smila/jobmanager/jobs/crawlMulti/$RUN/finish"
expect_status 200 "finish"
if wait_run crawlMulti "$RUN"; then ok "the finished standard run SUCCEEDED"; else fail "run: $(cat "$RUNJSON")"; fi
jq -e '.workflowRuns.failedWorkflowRunCount == 0 and .workflowRuns.activeWorkflowRunCount == 0' "$RUNJSON" >/dev/null &&
    ok "no workflow run failed" || fail "workflow runs: $(jq -c .workflowRuns "$RUNJSON")"
[ "$(counter records.pushed)" = "$(wc -l <"$TMP/want")" ] && ok "each page pushed once" ||
    fail "records.pushed = $(counter records.pushed), want $(wc -l <"$TMP/want")"
[ "$(counter entries.removed)" = 0 ] && ok "the completion (delta-delete) ran and removed nothing" ||
    fail "entries.removed = $(counter entries.removed)"
for h in A B; do
    dups=$(awk '$4 != "/doc.txt" && $4 != "/archive.zip" {print $4}' "$TMP/$h.log" | sort | uniq -d | tr '\n' ' ')
    [ -z "$dups" ] && ok "host $h: no page fetched twice, robots.txt once" || fail "host $h: requested twice: $dups"
    grep -q ' /private/' "$TMP/$h.log" && fail "host $h: /private/ was requested" ||
        ok "host $h: nothing disallowed by robots.txt was requested"
done
req POST /smila/job/crawlMulti/record -d "{\"_recordid\": \"$SITE_A/\"}"
expect_status 503 "after the run ended no start URL is taken"

# ---- 3. a second run with one start URL: no change pushed, the rest deleted
: >"$TMP/A.log"
req POST /smila/jobmanager/jobs/crawlMulti/ -d '{"mode": "standard"}'
expect_status 200 "second standard run started"
RUN=$(jq -r .jobId "$BODY")
# push and finish at once: the finish hands the accepted start URL to the
# run first (the bulkbuilder's open journal would otherwise wait for the
# next run, and the delta-delete would take every page of the source)
req POST /smila/job/crawlMulti/record -d "{\"_recordid\": \"$SITE_A/\"}"
expect_status 202 "start URL of host A accepted"
req POST "/smila/jobmanager/jobs/crawlMulti/$RUN/finish"
expect_status 200 "finish the second run"
if wait_run crawlMulti "$RUN"; then ok "second run SUCCEEDED"; else fail "run 2: $(cat "$RUNJSON")"; fi
[ "$(counter records.pushed)" = 0 ] && ok "nothing unchanged was pushed again" ||
    fail "records.pushed = $(counter records.pushed) in the no-change run"
snapshot "$TMP/snap"
ids "$TMP/snap" | LC_ALL=C sort >"$TMP/got"
expected "$SITE_A" | LC_ALL=C sort >"$TMP/want"
if cmp -s "$TMP/want" "$TMP/got"; then
    ok "finish ran the delta-delete (full): what this run did not reach is gone, host A stays ($(counter entries.removed) removed)"
else
    fail "after the second run: $(diff "$TMP/want" "$TMP/got" | head -c 600)"
fi

# ---- 4. a standard run finished with nothing pushed did no work: no
# completion, so no delta-delete of the whole source
req POST /smila/jobmanager/jobs/crawlMulti/ -d '{"mode": "standard"}'
RUN=$(jq -r .jobId "$BODY")
req POST "/smila/jobmanager/jobs/crawlMulti/$RUN/finish"
expect_status 200 "finish a run nothing was pushed to"
if wait_run crawlMulti "$RUN"; then ok "it SUCCEEDED"; else fail "run 3: $(cat "$RUNJSON")"; fi
jq -e '.workflowRuns.startedWorkflowRunCount == 0' "$RUNJSON" >/dev/null &&
    ok "without a workflow run, not even a completion one" ||
    fail "workflow runs: $(jq -c .workflowRuns "$RUNJSON")"
snapshot "$TMP/snap"
ids "$TMP/snap" | LC_ALL=C sort >"$TMP/got"
cmp -s "$TMP/want" "$TMP/got" && ok "and the index kept host A's pages ($(wc -l <"$TMP/got"))" ||
    fail "after an empty run: $(diff "$TMP/want" "$TMP/got" | head -c 300)"

stop_server
finish
