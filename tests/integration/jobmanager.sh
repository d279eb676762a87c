#!/bin/bash
# The jobmanager over REST with external workers played by curl: runOnce
# and standard runs, follow-ups, completion, retries, fatal errors,
# postpone and events, leases, cancel, and the error answers of the task
# protocol.  Definitions come from tests/integration/jm/.
. "$(dirname "$0")/lib.sh"
JM=$(cd "$(dirname "$0")/jm" && pwd)

write_config "$TMP/config.json" ".jobmanager = {\"configDir\": \"$JM\", \"workflowsDir\": \"$JM/workflows\", \"leaseSeconds\": 2, \"maxRetries\": 2, \"workerLimits\": {\"processor\": 1}}"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
req PUT /smila/store/persist/
expect_status 201 "create the persistent store"

req GET /smila/jobmanager/jobs/autoJob/
expect_jq '.runs.current | length > 0' "autoStart job runs after start"
AUTORUN=$(jq -r .runs.current "$BODY")
req GET "/smila/jobmanager/jobs/autoJob/$AUTORUN/"
expect_jq '.state == "RUNNING" and .runMode == "STANDARD"' "autoStart run is a standard RUNNING run"

TASK="$TMP/task.json"
# take WORKER: takes a task into $TASK, sets TID.
take() {
    req POST "/smila/tasks/$1/" -d "{\"host\": \"test\"}"
    cp "$BODY" "$TASK"
    TID=$(jq -r '.taskId // empty' "$TASK")
}
# put_output SLOT [N]: writes N (default 1) bulks into the task's slot.
put_output() {
    local id n=${2:-1} i store
    id=$(jq -r ".output.$1[0].id" "$TASK")
    store=$(jq -r ".output.$1[0].store" "$TASK")
    for i in $(seq 0 $((n - 1))); do
        local oid=$id
        [ "$i" -gt 0 ] && oid="${id%/0}/$i"
        curl -sS -o /dev/null -T /etc/hostname "$BASE/smila/store/$store/$oid"
    done
}
# finish WORKER STATUS [extra json]
done_task() {
    req POST "/smila/tasks/$1/$TID/finish" -d "{\"status\": \"$2\"${3:+, $3}}"
}
run_state() {
    req GET "/smila/jobmanager/jobs/$1/$2/"
    jq -r .state "$BODY"
}
wait_state() { # JOB RUN STATE
    local i
    for i in $(seq 1 100); do
        [ "$(run_state "$1" "$2")" = "$3" ] && return 0
        sleep 0.1
    done
    return 1
}

# ---- a runOnce crawl with follow-ups and completion
req POST /smila/jobmanager/jobs/crawlJob/
expect_status 200 "start crawlJob"
RUN=$(jq -r .jobId "$BODY")
req POST /smila/jobmanager/jobs/crawlJob/
expect_error 409 CONFLICT "second start of an active job"
req DELETE /smila/store/temp/
expect_error 409 CONFLICT "store of an active run cannot be deleted"
req GET /smila/jobmanager/jobs/crawlJob/
expect_jq ".runs.current == \"$RUN\"" "job info shows the current run"

take crawler
expect_status 200 "take the crawl task"
expect_jq '.parameters.root == "/data" and .parameters.tempStore == "temp" and .leaseSeconds == 2 and .properties.workerHost == "test"' "task parameters and properties"
put_output dirsToCrawl 2
put_output filesToCrawl 3
done_task crawler SUCCESSFUL '"counters": {"files.seen": 3}'
expect_status 200 "finish the crawl task"
done_task crawler SUCCESSFUL
expect_error 410 GONE "finishing twice"
req GET /smila/tasks/crawler/
expect_jq '.todo.count == 2' "two follow-up crawl tasks (multiple slot)"
req GET /smila/tasks/processor/
expect_jq '.todo.count == 3' "three processor tasks (one per bulk)"
for i in 1 2; do take crawler; done_task crawler SUCCESSFUL; done
take crawler
expect_status 204 "no more crawl tasks"
take processor
FIRST=$TID
cp "$TASK" "$TMP/first.json"
take processor
expect_status 204 "workerLimits processor=1 holds the second task back"
TID=$FIRST
cp "$TMP/first.json" "$TASK"
put_output output
done_task processor SUCCESSFUL
for i in 2 3; do
    take processor
    expect_jq '.input.input | length == 1' "processor task $i has one input bulk"
    put_output output
    done_task processor SUCCESSFUL
done
req GET "/smila/jobmanager/jobs/crawlJob/$RUN/"
expect_jq '.state == "FINISHING"' "pusher tasks still open"
for i in 1 2 3; do take pusher; done_task pusher SUCCESSFUL; done
wait_state crawlJob "$RUN" COMPLETING && ok "run enters COMPLETING" || fail "no COMPLETING: $(cat "$BODY")"
take pusher
expect_jq '.properties.completion == true and .properties.partitions == 1 and (.input|length) == 0' "completion task"
done_task pusher SUCCESSFUL
wait_state crawlJob "$RUN" SUCCEEDED && ok "run SUCCEEDED" || fail "run not SUCCEEDED: $(cat "$BODY")"
expect_jq '.tasks.createdTaskCount == 10 and .tasks.successfulTaskCount == 10 and .workflowRuns.successfulWorkflowRunCount == 2' "task and workflow run counters"
expect_jq '.worker["0_crawler"]["files.seen"] == 3 and .worker["0_crawler"]["output.filesToCrawl.dataObjectCount"] == 3 and .worker["1_processor"]["input.input.dataObjectCount"] == 3' "worker counters"
sleep 0.3
req GET /smila/store/temp/
expect_jq '.objectCount == 0' "transient objects deleted after the run"
req POST "/smila/jobmanager/jobs/crawlJob/$RUN/finish"
expect_error 409 BAD_STATE "finish of a finished run"
req GET "/smila/jobmanager/jobs/crawlJob/$RUN/?returnDetails=true"
expect_jq '.workflowDefinition.name == "crawl" and .jobDefinition.name == "crawlJob"' "returnDetails adds the definitions"

# ---- recoverable errors, retries, failure after retries, fatal errors
req POST /smila/jobmanager/jobs/crawlJob/
RUN=$(jq -r .jobId "$BODY")
take crawler
OLD=$TID
put_output filesToCrawl
done_task crawler RECOVERABLE_ERROR '"errorMessage": "disk hiccup"'
expect_status 200 "recoverable error accepted"
req GET /smila/store/temp/
expect_jq '.objectCount == 0' "output of the failed attempt discarded"
take crawler
[ "$TID" != "$OLD" ] && ok "retry has a new task id" || fail "same task id on retry"
expect_jq '.properties.retries == 1' "retry count 1"
done_task crawler RECOVERABLE_ERROR
take crawler
expect_jq '.properties.retries == 2' "retry count 2"
done_task crawler RECOVERABLE_ERROR '"errorMessage": "still broken"'
wait_state crawlJob "$RUN" FAILED && ok "run FAILED after maxRetries" || fail "not FAILED: $(cat "$BODY")"
expect_jq '.tasks.retriedAfterErrorTaskCount == 2 and .tasks.failedAfterRetryTaskCount == 1 and (.errors[-1].message == "still broken")' "retry counters and error list"

req POST /smila/jobmanager/jobs/crawlJob/
RUN=$(jq -r .jobId "$BODY")
take crawler
put_output filesToCrawl 2
done_task crawler SUCCESSFUL
take processor
done_task processor FATAL_ERROR '"errorMessage": "cannot parse"'
wait_state crawlJob "$RUN" FAILED && ok "fatal error fails a runOnce run" || fail "fatal: $(cat "$BODY")"
expect_jq '.tasks.failedWithoutRetryTaskCount == 1 and .tasks.obsoleteTaskCount == 1 and .errors[0].status == "FATAL_ERROR"' "fatal counters (other task obsolete)"
req GET /smila/tasks/processor/
expect_jq '.todo.count == 0' "no tasks left of the failed run"

# ---- postpone with a prerequisite event, and events
req POST /smila/jobmanager/events/login/begin
expect_jq '.began == true' "event begins"
req POST /smila/jobmanager/events/login/begin
expect_jq '.began == false' "event already pending"
req POST /smila/jobmanager/jobs/crawlJob/
RUN=$(jq -r .jobId "$BODY")
take crawler
done_task crawler POSTPONE '"prerequisiteEvents": ["login"]'
expect_status 200 "postpone with a prerequisite event"
take crawler
expect_status 204 "task blocked while the event is pending"
req POST /smila/jobmanager/events/login/complete
take crawler
expect_status 200 "task handed out after the event completed"
expect_jq '.properties.retries == 0' "postpone is not a retry"

# ---- leases: an expired lease is a retry, the late finisher gets 410
OLD=$TID
sleep 3
req POST "/smila/tasks/crawler/$OLD/keepAlive"
expect_error 410 GONE "keepAlive after the lease expired"
done_task crawler SUCCESSFUL
expect_error 410 GONE "late finish after the lease expired"
take crawler
expect_status 200 "expired task is offered again"
req POST "/smila/tasks/crawler/$TID/keepAlive"
expect_status 200 "keepAlive of a live task"
done_task crawler SUCCESSFUL
take pusher
done_task pusher SUCCESSFUL
wait_state crawlJob "$RUN" SUCCEEDED && ok "run after expiry SUCCEEDED" || fail "after expiry: $(cat "$BODY")"
expect_jq '.tasks.retriedAfterTimeoutTaskCount == 1' "retriedAfterTimeoutTaskCount"

# ---- cancel
req POST /smila/jobmanager/jobs/crawlJob/
RUN=$(jq -r .jobId "$BODY")
take crawler
req POST "/smila/jobmanager/jobs/crawlJob/$RUN/cancel"
expect_status 200 "cancel"
wait_state crawlJob "$RUN" CANCELED && ok "run CANCELED" || fail "cancel: $(cat "$BODY")"
done_task crawler SUCCESSFUL
expect_error 410 GONE "finish after cancel"
req POST "/smila/jobmanager/jobs/crawlJob/$RUN/cancel"
expect_error 409 BAD_STATE "cancel of a canceled run"
req DELETE "/smila/jobmanager/jobs/crawlJob/$RUN/"
expect_status 200 "delete a finished run's data"
req GET "/smila/jobmanager/jobs/crawlJob/$RUN/"
expect_error 404 NOT_FOUND "deleted run is gone"

# ---- standard mode, persistent bucket linking two jobs, finish
req POST /smila/jobmanager/jobs/indexJob/ -d '{"mode": "standard"}'
expect_status 200 "start indexJob (standard)"
IRUN=$(jq -r .jobId "$BODY")
req DELETE "/smila/jobmanager/jobs/indexJob/$IRUN/"
expect_error 409 CONFLICT "delete of an active run"
req POST /smila/jobmanager/jobs/feedJob/
FRUN=$(jq -r .jobId "$BODY")
take crawler
expect_jq '.output.filesToCrawl[0].store == "persist"' "output to the persistent bucket"
put_output filesToCrawl 2
done_task crawler SUCCESSFUL
wait_state feedJob "$FRUN" SUCCEEDED && ok "feedJob SUCCEEDED" || fail "feedJob: $(cat "$BODY")"
req GET "/smila/jobmanager/jobs/indexJob/$IRUN/"
expect_jq '.state == "RUNNING" and .workflowRuns.startedWorkflowRunCount == 2' "two workflow runs started in indexJob"
req GET "/smila/jobmanager/jobs/indexJob/$IRUN/workflowrun/1/"
expect_jq '.openTaskCount == 1' "workflow run data"
for i in 1 2; do take processor; put_output output; done_task processor SUCCESSFUL; take pusher; done_task pusher SUCCESSFUL; done
req POST "/smila/jobmanager/jobs/indexJob/$IRUN/finish"
expect_status 200 "finish the standard run"
take pusher
expect_jq '.properties.completion == true' "completion task after finish"
done_task pusher SUCCESSFUL
wait_state indexJob "$IRUN" SUCCEEDED && ok "standard run SUCCEEDED" || fail "standard: $(cat "$BODY")"
expect_jq '.runMode == "STANDARD" and .workflowRuns.successfulWorkflowRunCount == 3' "standard run counters"

# ---- runOnce from a persistent bucket: one task per object
req POST /smila/jobmanager/jobs/indexJob/ -d '{"mode": "runOnce"}'
RUN=$(jq -r .jobId "$BODY")
req GET /smila/tasks/processor/
expect_jq '.todo.count == 2' "one task per object in the start bucket"
req POST "/smila/jobmanager/jobs/indexJob/$RUN/cancel"

# ---- bad requests
req POST /smila/jobmanager/jobs/indexJob/ -d '{"mode": "sometimes"}'
expect_error 400 INVALID_INPUT "bad mode"
req POST /smila/jobmanager/jobs/crawlJob/ -d '{"mode": "standard"}'
expect_error 400 INVALID_INPUT "mode not allowed by the workflow"
req POST /smila/jobmanager/jobs/crawlJob/ -d '{"mode": '
expect_error 400 MALFORMED_JSON "malformed start body"
req POST /smila/jobmanager/jobs/nojob/
expect_error 404 NOT_FOUND "start of an unknown job"
req POST /smila/tasks/noworker/
expect_error 404 NOT_FOUND "take for an unknown worker"
req POST /smila/tasks/crawler/ -d '{"qualifiers": "x"}'
expect_error 400 INVALID_INPUT "qualifiers not an array"
req POST /smila/tasks/crawler/nosuchtask/finish -d '{"status": "SUCCESSFUL"}'
expect_error 410 GONE "finish of an unknown task"
req POST /smila/tasks/crawler/nosuchtask/finish -d '{"status": "DONE"}'
expect_error 400 INVALID_INPUT "unknown status"
req POST /smila/tasks/crawler/nosuchtask/finish -d '{"status": "SUCCESSFUL", "counters": {"a": "x"}}'
expect_error 400 INVALID_INPUT "non-numeric counter"
req GET /smila/jobmanager/jobs/crawlJob/norun/
expect_error 404 NOT_FOUND "unknown run"
req GET /smila/jobmanager/jobs/indexJob/$IRUN/workflowrun/9/
expect_error 404 NOT_FOUND "unknown workflow run"

# ---- a dataSource is crawled by one run at a time
req POST /smila/jobmanager/jobs/ -d '{"name": "crawlJob2", "workflow": "crawl", "parameters": {"root": "/other", "dataSource": "files1"}}'
expect_status 200 "second job on the same data source"
req POST /smila/jobmanager/jobs/crawlJob/
RUN=$(jq -r .jobId "$BODY")
req POST /smila/jobmanager/jobs/crawlJob2/
expect_error 409 CONFLICT "same dataSource busy"
expect_jq '.error.field == "dataSource"' "conflict names the dataSource"
req POST "/smila/jobmanager/jobs/crawlJob/$RUN/cancel"

# ---- state survives a restart
stop_server
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
req GET "/smila/jobmanager/jobs/indexJob/$IRUN/"
expect_jq '.state == "SUCCEEDED"' "finished run data survive a restart"
req GET /smila/jobmanager/jobs/crawlJob2/
expect_status 200 "user job survives a restart"
req GET /smila/jobmanager/jobs/autoJob/
expect_jq ".runs.current == \"$AUTORUN\" and .runs.completed == []" "autoStart run resumed, not started twice"
stop_server
finish
