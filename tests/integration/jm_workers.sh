#!/bin/bash
# The worker runtime in-process: sluice-test serve runs the test workers
# (tests/workers/) on its pool.  runOnce runs split -> copy -> completion,
# recoverable errors with retries, a fatal error, postpone, and cancel of
# a slow run.  Definitions are written below into a temporary config dir.
SLUICE=${SLUICE_TEST:?set SLUICE_TEST to the sluice-test binary}
. "$(dirname "$0")/lib.sh"

JM="$TMP/jm"
mkdir -p "$JM/workflows"
cat >"$JM/workflows/test.json" <<'JSON'
{"workflows": [
 {"name": "splitCopy", "modes": ["runOnce"], "parameters": {"tempStore": "temp"},
  "startAction": {"worker": "testSplit", "output": {"records": "split"}},
  "actions": [
   {"worker": "testCopy", "input": {"input": "split"}, "output": {"copied": "copied"}},
   {"worker": "testCompletion", "input": {"input": "copied"}}]},
 {"name": "splitFail", "modes": ["runOnce"], "parameters": {"tempStore": "temp"},
  "startAction": {"worker": "testSplit", "output": {"records": "split"}},
  "actions": [{"worker": "testFail", "input": {"input": "split"}}]},
 {"name": "splitSlow", "modes": ["runOnce"], "parameters": {"tempStore": "temp"},
  "startAction": {"worker": "testSplit", "output": {"records": "split"}},
  "actions": [{"worker": "testSlow", "input": {"input": "split"}}]}
]}
JSON
cat >"$JM/jobs.json" <<'JSON'
{"jobs": [
 {"name": "copyJob", "workflow": "splitCopy",
  "parameters": {"count": 25, "per_bulk": 10, "partitions": 3}},
 {"name": "recoverJob", "workflow": "splitFail",
  "parameters": {"count": 4, "per_bulk": 4, "fail": "recoverable:2"}},
 {"name": "fatalJob", "workflow": "splitFail",
  "parameters": {"count": 4, "per_bulk": 4, "fail": "fatal"}},
 {"name": "postponeJob", "workflow": "splitFail",
  "parameters": {"count": 4, "per_bulk": 4, "fail": "postpone:3"}},
 {"name": "slowJob", "workflow": "splitSlow",
  "parameters": {"count": 2, "per_bulk": 1, "sleep_ms": "60000"}}
]}
JSON

write_config "$TMP/config.json" ".jobmanager = {\"configDir\": \"$JM\", \"workflowsDir\": \"$JM/workflows\", \"leaseSeconds\": 3, \"maxRetries\": 5} | .workers = {\"threads\": 2}"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

req GET /smila/jobmanager/workers/testSplit/
expect_jq '.name == "testSplit" and .taskGenerator == "runOnceTrigger" and .readOnly == true' "test workers are registered"

# start JOB: starts a runOnce run, sets RUN.
start() {
    req POST "/smila/jobmanager/jobs/$1/" -d '{"mode": "runOnce"}'
    expect_status 200 "start $1"
    RUN=$(jq -r .jobId "$BODY")
}
wait_state() { # JOB RUN STATE [tries of 0.1 s]
    local i
    for i in $(seq 1 "${4:-300}"); do
        req GET "/smila/jobmanager/jobs/$1/$2/"
        [ "$(jq -r .state "$BODY")" = "$3" ] && return 0
        case "$(jq -r .state "$BODY")" in
        SUCCEEDED | FAILED | CANCELED) return 1 ;;
        esac
        sleep 0.1
    done
    return 1
}

# ---- split -> copy -> completion, all in-process
start copyJob
wait_state copyJob "$RUN" SUCCEEDED && ok "copyJob SUCCEEDED" || fail "copyJob: $(cat "$BODY")"
expect_jq '.worker["0_testSplit"]["output.records.recordCount"] == 25 and .worker["0_testSplit"]["output.records.dataObjectCount"] == 3 and .worker["0_testSplit"].splitRecords == 25' "split wrote 25 records in 3 bulks"
expect_jq '.worker["1_testCopy"]["input.input.recordCount"] == 25 and .worker["1_testCopy"]["output.copied.recordCount"] == 25 and .worker["1_testCopy"].copiedRecords == 25 and .worker["1_testCopy"].successfulTaskCount == 3' "copy read and wrote 25 records in 3 tasks"
expect_jq '.worker["2_testCompletion"].seenRecords == 25 and .worker["2_testCompletion"]["input.input.recordCount"] == 25' "completion worker saw 25 records"
expect_jq '.worker["2_testCompletion"].completionTasks == 3 and .worker["2_testCompletion"]["completion.partition.0"] == 1 and .worker["2_testCompletion"]["completion.partition.2"] == 1' "3 completion tasks, one per partition"
expect_jq '(.worker["1_testCopy"].duration | type) == "number" and (.worker["1_testCopy"]["duration.perform"] | type) == "number"' "runtime counters duration and duration.perform"
expect_jq '.tasks.createdTaskCount == 10 and .tasks.successfulTaskCount == 10 and .tasks.retriedAfterErrorTaskCount == 0' "1 split + 3 copy + 3 completion-input + 3 completion tasks"
expect_jq '.workflowRuns.successfulWorkflowRunCount >= 1 and .workflowRuns.failedWorkflowRunCount == 0' "workflow runs succeeded"

# ---- recoverable:2: two retries, then success
start recoverJob
wait_state recoverJob "$RUN" SUCCEEDED && ok "recoverJob SUCCEEDED" || fail "recoverJob: $(cat "$BODY")"
expect_jq '.tasks.retriedAfterErrorTaskCount == 2 and .tasks.failedAfterRetryTaskCount == 0' "two retries after recoverable errors"
expect_jq '.worker["1_testFail"].passedRecords == 4 and .worker["1_testFail"].failedTaskCount == 2 and .worker["1_testFail"].successfulTaskCount == 1' "testFail counters after retries"

# ---- fatal: the run fails with the worker's message
start fatalJob
wait_state fatalJob "$RUN" FAILED && ok "fatalJob FAILED" || fail "fatalJob: $(cat "$BODY")"
expect_jq '.errors | length >= 1 and (.[0].status == "FATAL_ERROR") and (.[0].worker == "testFail") and (.[0].message | contains("fatal error as asked"))' "the fatal error is in errors"
expect_jq '.tasks.failedWithoutRetryTaskCount == 1' "one task failed without retry"

# ---- postpone:3: three postpones, no retry counted, then success
start postponeJob
wait_state postponeJob "$RUN" SUCCEEDED && ok "postponeJob SUCCEEDED" || fail "postponeJob: $(cat "$BODY")"
expect_jq '.worker["1_testFail"].postponed == 3 and .worker["1_testFail"].passedRecords == 4 and .tasks.retriedAfterErrorTaskCount == 0' "postponed 3 times, then passed"

# ---- cancel a slow run while testSlow performs
start slowJob
for i in $(seq 1 100); do
    req GET /smila/tasks/testSlow/
    [ "$(jq -r .inprogress.count "$BODY")" -ge 1 ] && break
    sleep 0.1
done
expect_jq '.inprogress.count >= 1' "testSlow tasks in progress"
req POST "/smila/jobmanager/jobs/slowJob/$RUN/cancel/"
expect_status 200 "cancel slowJob"
wait_state slowJob "$RUN" CANCELED && ok "slowJob CANCELED" || fail "slowJob: $(cat "$BODY")"
# The keep-alive (every leaseSeconds/3 = 1 s) finds the task gone and the
# worker stops sleeping: the server can stop at once.
for i in $(seq 1 50); do
    grep -q "canceled or lost its lease" "$TMP/server.log" && break
    sleep 0.1
done
grep -q "canceled or lost its lease" "$TMP/server.log" && ok "testSlow noticed the cancel" || fail "no cancel notice: $(tail -5 "$TMP/server.log")"

t0=$(date +%s)
stop_server && ok "server stops with status 0" || fail "server stop"
[ $(($(date +%s) - t0)) -lt 10 ] && ok "stop did not wait for the canceled sleep" || fail "stop took too long"
finish
