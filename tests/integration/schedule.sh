#!/bin/bash
# Job schedules (issue 32, docs/jobmanager.md "Schedules"), with the
# server's clock driven by the test (SLUICE_TEST_CLOCK=1, POST
# /smila/debug/clock), never by sleeping:
# 1. a schedule with a mistake is refused when the job is defined (400
#    naming schedule and what is wrong);
# 2. a standard job indexing into its own index, started at 02:00 Berlin
#    time with a 60-minute window and at 04:00 without one: the start
#    comes at 02:00 CET (01:00Z), the run is paused when the window
#    closes (a record pushed then waits: accepted, not indexed) and
#    resumed by the next start (then it is indexed: nothing lost); on
#    the day daylight saving starts, 02:00 does not exist and the start
#    comes at 03:00 CEST; a start while the run is going is skipped and
#    counted; sluice job status shows the next start;
# 3. a paused run stays paused across a restart and ends when finished
#    (pause and resume over REST, their 404 and 409); after a restart, a
#    start that came while the server was down runs once at the first
#    tick (runMissed); with runMissed false it is only counted as missed;
#    the job defined anew starts afresh;
# 4. atWindowEnd finish: the run ends at the window's end, with what the
#    bulkbuilder accepted in it indexed.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

export SLUICE_TEST_CLOCK=1
import_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

# clock ISO: the schedules' tick at that time
clock() {
    req POST /smila/debug/clock -d "{\"now\": $(date -u -d "$1" +%s%3N)}"
    [ "$STATUS" = 200 ] || fail "clock $1: $STATUS $(cat "$BODY")"
}
job_info() { req GET /smila/jobmanager/jobs/sched/; }
# wait_no_run: until the job has no run going (5 s at most); its info in BODY
wait_no_run() {
    for _ in $(seq 1 100); do
        job_info
        jq -e '.runs.current == null' "$BODY" >/dev/null && return 0
        sleep 0.05
    done
}
run_data() {
    local cur
    cur=$(curl -sS "$BASE/smila/jobmanager/jobs/sched/" | jq -r .runs.current)
    req GET "/smila/jobmanager/jobs/sched/$cur/"
}
define() {
    req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' -d "{
      \"name\": \"sched\", \"workflow\": \"indexUpdate\",
      \"parameters\": {\"index\": \"sched\"}, \"schedule\": $1}"
}
# found WORD: the hits of WORD in the job's index
found() {
    curl -sS -G "$BASE/smila/index/sched/search" --data-urlencode "q=$1" | jq -r '.total // 0'
}
# pushed_settled: the bulkbuilder has handed over what it accepted
pushed_settled() {
    local i
    for i in $(seq 1 200); do
        curl -sS "$BASE/smila/bulkbuilder/" |
            jq -e 'all(.jobs[]; .openRecords == 0 and .pendingBulks == 0)' >/dev/null && return 0
        sleep 0.05
    done
    return 1
}
# wait_found WORD N: until WORD has N hits (10 s at most)
wait_found() {
    local i
    for i in $(seq 1 200); do
        [ "$(found "$1")" = "$2" ] && return 0
        sleep 0.05
    done
    return 1
}

# ---- 1. refused when defined
define '{"timeZone": "Mars/Olympus", "starts": [{"minute": 0}]}'
expect_error 400 INVALID_DEFINITION "a schedule in an unknown time zone"
expect_jq '.error.field == "schedule" and (.error.message | test("Mars/Olympus"))' "the error names the zone"
define '{"starts": [{"hour": 2}]}'
expect_error 400 INVALID_DEFINITION "a start time without a minute"
expect_jq '.error.message | test("minute is required")' "the error says minute is required"
define '{"starts": [{"minute": 0, "hour": 24}]}'
expect_jq '.error.message | test("starts\\[0\\].hour")' "an hour of 24 is refused, naming starts[0].hour"
define '{"mode": "runOnce", "starts": [{"minute": 0}]}'
expect_jq '.error.message | test("schedule.mode")' "a mode the workflow does not have is refused"
req GET /smila/jobmanager/jobs/sched/
expect_status 404 "no job was defined by the refused definitions"

# ---- 2. start, window, pause, resume, daylight saving, skip
define '{"timeZone": "Europe/Berlin", "mode": "standard",
  "starts": [{"minute": 0, "hour": 2, "windowMinutes": 60}, {"minute": 0, "hour": 4}]}'
expect_status 200 "a job with a schedule"
clock 2026-03-27T12:00:00Z
job_info
expect_jq '.scheduling.nextStart == "2026-03-28T01:00:00.000Z" and .scheduling.timeZone == "Europe/Berlin"' \
    "the next start is 02:00 CET, 01:00Z"
expect_jq '.runs.current == null' "no run before it"
"$SLUICE" job status sched --server "$BASE" >"$TMP/status.txt" 2>&1
grep -q "next start 2026-03-28T01:00:00.000Z" "$TMP/status.txt" &&
    ok "sluice job status shows the next start" || fail "status: $(cat "$TMP/status.txt")"
clock 2026-03-28T00:59:00Z
job_info
expect_jq '.runs.current == null' "a minute before, no run"
clock 2026-03-28T01:00:05Z
job_info
expect_jq '.runs.current != null and .scheduling.started == 1 and .scheduling.windowEnd == "2026-03-28T02:00:00.000Z"' \
    "at 02:00 the run starts, its window open until 03:00"
run_data
expect_jq '.state == "RUNNING" and .runMode == "STANDARD" and (.paused | not)' "the run is RUNNING"
req POST /smila/job/sched/record -d '{"_recordid": "s-1", "text": "zulu first"}'
expect_status 202 "a record pushed in the window"
wait_found zulu 1 && ok "is indexed" || fail "s-1 not indexed: $(found zulu)"

clock 2026-03-28T02:00:30Z
run_data
expect_jq '.state == "RUNNING" and .paused == true' "when the window closes the run is paused"
job_info
expect_jq '.scheduling.pausedAtWindowEnd == 1' "and that is counted"
req POST /smila/job/sched/record -d '{"_recordid": "s-2", "text": "yankee second"}'
expect_status 202 "a record pushed while paused is accepted"
pushed_settled || fail "the bulkbuilder did not hand the record over"
sleep 1 # a task that could be taken would be taken within this
[ "$(found yankee)" = 0 ] && ok "but not indexed while paused (its tasks wait)" ||
    fail "indexed while paused"
clock 2026-03-28T03:00:10Z
run_data
expect_jq '(.paused | not) and .state == "RUNNING"' "the 04:00 start resumes the paused run"
wait_found yankee 1 && ok "and the waiting record is indexed: nothing lost" || fail "s-2 not indexed"
job_info
expect_jq '.scheduling.resumed == 1 and .scheduling.started == 1 and (.scheduling | has("windowEnd") | not)' \
    "counted as resumed; that start has no window"

clock 2026-03-29T00:00:00Z
job_info
expect_jq '.scheduling.nextStart == "2026-03-29T01:00:00.000Z"' \
    "on 29 March 02:00 does not exist: the start is at 03:00 CEST, 01:00Z"
clock 2026-03-29T01:00:05Z
job_info
expect_jq '.scheduling.skipped == 1 and .scheduling.started == 1 and (.scheduling | has("windowEnd") | not)' \
    "a start while the run is going is skipped and counted; it opens no window"
grep -q "scheduled start of job 'sched' skipped" "$TMP/server.log" && ok "and logged" || fail "no log line"

# pause and resume by hand
cur=$(jq -r .runs.current "$BODY")
"$SLUICE" job pause sched --server "$BASE" >/dev/null && run_data &&
    expect_jq '.paused == true' "sluice job pause pauses the run"
"$SLUICE" job resume sched --server "$BASE" >/dev/null && run_data &&
    expect_jq '(.paused | not)' "sluice job resume resumes it"

# pause over REST; refusals
req POST "/smila/jobmanager/jobs/sched/$cur/pause"
expect_status 200 "POST .../pause"
req POST /smila/jobmanager/jobs/sched/20200101-000000000-00000000/pause
expect_error 404 NOT_FOUND "pausing a run that does not exist"

# ---- 3. a paused run across a restart; starts missed while down
stop_server
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
run_data
expect_jq '.paused == true and .state == "RUNNING"' "a paused run is still paused after a restart"
req POST "/smila/jobmanager/jobs/sched/$cur/finish"
expect_status 200 "the paused run is finished"
wait_no_run
expect_jq '.runs.current == null' "and ends (a finished run's tasks are handed out)"
req GET "/smila/jobmanager/jobs/sched/$cur/"
expect_jq '.state == "SUCCEEDED" and (.paused | not)' "SUCCEEDED, no longer paused"
req POST "/smila/jobmanager/jobs/sched/$cur/resume"
expect_error 409 BAD_STATE "resuming a run that has ended"
stop_server
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
clock 2026-03-31T12:00:00Z
job_info
expect_jq '.runs.current != null and .scheduling.started == 2' "after a restart, a start missed while down runs once"
grep -q "a start missed while down" "$TMP/server.log" && ok "logged as missed while down" || fail "no log line"
clock 2026-03-31T12:00:10Z
job_info
expect_jq '.scheduling.started == 2 and .scheduling.skipped == 1' "once only"

cur=$(jq -r .runs.current "$BODY")
req POST "/smila/jobmanager/jobs/sched/$cur/finish"
wait_no_run
define '{"timeZone": "Europe/Berlin", "runMissed": false,
  "starts": [{"minute": 0, "hour": 2, "windowMinutes": 60}, {"minute": 0, "hour": 4}]}'
expect_status 200 "the job again, with runMissed false"
clock 2026-03-31T12:00:20Z
job_info
expect_jq '.scheduling.started == 0 and .scheduling.skipped == 0' "a job defined anew starts afresh"
stop_server
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
clock 2026-04-03T12:00:00Z
job_info
expect_jq '.runs.current == null and .scheduling.missed == 1 and .scheduling.started == 0' \
    "with runMissed false a missed start is only counted"
clock 2026-04-04T00:00:05Z
job_info
expect_jq '.runs.current != null and .scheduling.started == 1' "the next start on time runs (02:00 CEST, 00:00Z)"

# ---- 4. atWindowEnd finish: the run is finished, the records the
# bulkbuilder accepted are handed over first and indexed
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' -d '{
  "name": "schedFin", "workflow": "indexUpdate", "parameters": {"index": "sched2"},
  "schedule": {"atWindowEnd": "finish", "starts": [{"minute": 0, "hour": 6, "windowMinutes": 30}]}}'
expect_status 200 "a job whose window end finishes its run"
clock 2026-04-04T05:00:00Z
clock 2026-04-04T06:00:05Z
req GET /smila/jobmanager/jobs/schedFin/
fin=$(jq -r .runs.current "$BODY")
expect_jq '.runs.current != null and .scheduling.windowEnd == "2026-04-04T06:30:00.000Z"' "it starts at 06:00 UTC"
req POST /smila/job/schedFin/record -d '{"_recordid": "f-1", "text": "whiskey window"}'
expect_status 202 "a record pushed in its window"
clock 2026-04-04T06:30:05Z
req GET /smila/jobmanager/jobs/schedFin/
expect_jq '.scheduling.finishedAtWindowEnd == 1' "at the window's end the run is finished"
for _ in $(seq 1 200); do
    req GET "/smila/jobmanager/jobs/schedFin/$fin/"
    jq -e '.state == "SUCCEEDED"' "$BODY" >/dev/null && break
    sleep 0.05
done
expect_jq '.state == "SUCCEEDED"' "and ends SUCCEEDED"
[ "$(curl -sS -G "$BASE/smila/index/sched2/search" --data-urlencode q=whiskey | jq -r .total)" = 1 ] &&
    ok "with the record pushed in the window indexed" || fail "f-1 not indexed"

stop_server
finish
