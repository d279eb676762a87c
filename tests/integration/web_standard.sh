#!/bin/bash
# Web import with several start URLs (issue 6, as SMILA's web crawl in standard mode): a crawl job
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
. "$(dirname "$0")/web_lib.sh"

start_site A --pages 12
start_site B --pages 12

start_web_server

define_job crawlMulti webCrawlingStandard "$(web_params "$SITE_A" multi \
    "del(.startUrl) | .filters.urlPatterns.include += [\"^$SITE_B/\"]")"
expect_status 200 "a standard crawl job without startUrl is defined"

# ---- 1. modes
req POST /smila/jobmanager/jobs/crawlMulti/ -d '{"mode": "runOnce"}'
expect_status 400 "runOnce is refused: the workflow starts with the bulkbuilder"
req POST /smila/job/crawlMulti/record -d "{\"_recordid\": \"$SITE_A/\"}"
expect_status 503 "no start URL is taken while the job does not run"
start_standard crawlMulti
expect_status 200 "standard run started"

# push RECORD_JSON: one record, then until the bulkbuilder handed it to
# the job (committedBulks grew), so every push is its own workflow run
committed() {
    curl -sS "$BASE/smila/bulkbuilder/" |
        jq -e ".jobs[] | select(.job == \"crawlMulti\") | .committedBulks >= $PUSHED" >/dev/null
}
push() {
    push_record crawlMulti "$1" || return 0
    poll 300 0.05 committed || fail "the bulkbuilder did not commit start URL $PUSHED"
}

# indexed FILE: the index holds exactly the ids of FILE once the
# processing caught up (ids in $TMP/got)
indexed() {
    wait_indexed || true
    index_ids "$TMP/got"
    cmp -s "$1" "$TMP/got"
}

# ---- 2. three start URLs, three workflow runs
push "{\"_recordid\": \"$SITE_A/\"}"
push "{\"_recordid\": \"start-b\", \"httpUrl\": \"$SITE_B/\"}"
push "{\"_recordid\": \"$SITE_A/p/nofollow.html\"}"
{ site_expected "$SITE_A" --pages 12; site_expected "$SITE_B" --pages 12; echo "$SITE_A/p/nofollow.html"; } |
    LC_ALL=C sort >"$TMP/want"
if poll 300 0.2 indexed "$TMP/want"; then # 60 s
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
expect_counter records.pushed = "$(wc -l <"$TMP/want")" "each page pushed once"
expect_counter entries.removed = 0 "the completion (delta-delete) ran and removed nothing"
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
start_standard crawlMulti
expect_status 200 "second standard run started"
# push and finish at once: the finish hands the accepted start URL to the
# run first (the bulkbuilder's open journal would otherwise wait for the
# next run, and the delta-delete would take every page of the source)
req POST /smila/job/crawlMulti/record -d "{\"_recordid\": \"$SITE_A/\"}"
expect_status 202 "start URL of host A accepted"
req POST "/smila/jobmanager/jobs/crawlMulti/$RUN/finish"
expect_status 200 "finish the second run"
if wait_run crawlMulti "$RUN"; then ok "second run SUCCEEDED"; else fail "run 2: $(cat "$RUNJSON")"; fi
expect_counter records.pushed = 0 "nothing unchanged was pushed again"
site_expected "$SITE_A" --pages 12 >"$TMP/want"
expect_index "$TMP/want" "finish ran the delta-delete (full): what this run did not reach is gone, host A stays ($(counter entries.removed) removed)"

# ---- 4. a standard run finished with nothing pushed did no work: no
# completion, so no delta-delete of the whole source
start_standard crawlMulti
req POST "/smila/jobmanager/jobs/crawlMulti/$RUN/finish"
expect_status 200 "finish a run nothing was pushed to"
if wait_run crawlMulti "$RUN"; then ok "it SUCCEEDED"; else fail "run 3: $(cat "$RUNJSON")"; fi
jq -e '.workflowRuns.startedWorkflowRunCount == 0' "$RUNJSON" >/dev/null &&
    ok "without a workflow run, not even a completion one" ||
    fail "workflow runs: $(jq -c .workflowRuns "$RUNJSON")"
expect_index "$TMP/want" "and the index kept host A's pages ($(wc -l <"$TMP/want"))"

stop_server
finish
