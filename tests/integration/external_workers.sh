#!/bin/bash
# External workers: the server runs testSplit in-process but leaves
# testSlow to two `sluice-test worker` processes (workers.external).  One
# of them is killed with SIGKILL while it holds a task; its lease (2 s)
# expires, the other process redoes the task and the run SUCCEEDS with
# every record written exactly once to the persistent output bucket.
SLUICE=${SLUICE_TEST:?set SLUICE_TEST to the sluice-test binary}
. "$(dirname "$0")/lib.sh"

JM="$TMP/jm"
mkdir -p "$JM/workflows"
cat >"$JM/buckets.json" <<'JSON'
{"buckets": [{"name": "slowOut", "type": "recordBulks", "parameters": {"store": "persist"}}]}
JSON
cat >"$JM/workflows/test.json" <<'JSON'
{"name": "splitSlow", "modes": ["runOnce"], "parameters": {"tempStore": "temp"},
 "startAction": {"worker": "testSplit", "output": {"records": "split"}},
 "actions": [{"worker": "testSlow", "input": {"input": "split"}, "output": {"output": "slowOut"}}]}
JSON
cat >"$JM/jobs.json" <<'JSON'
{"jobs": [{"name": "slowJob", "workflow": "splitSlow",
  "parameters": {"count": 6, "per_bulk": 2, "sleep_ms": 1500}}]}
JSON

write_config "$TMP/config.json" ".jobmanager = {\"configDir\": \"$JM\", \"workflowsDir\": \"$JM/workflows\", \"leaseSeconds\": 2} | .workers = {\"threads\": 1, \"external\": \"testSlow\"}"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
req PUT /smila/store/persist/
expect_status 201 "create the persistent store"

# ---- usage errors
rc=0
"$SLUICE" worker --server "$BASE" --worker noSuchWorker 2>"$TMP/w0.log" || rc=$?
[ "$rc" -eq 2 ] && grep -q "unknown worker 'noSuchWorker'" "$TMP/w0.log" &&
    ok "unknown worker: exit 2 with a message" || fail "unknown worker: rc $rc, $(cat "$TMP/w0.log")"
"$SLUICE" worker --help | grep -q testSlow && ok "worker --help lists the test workers" || fail "worker --help"

WTMP="$TMP/wtmp"
mkdir -p "$WTMP"
# worker N: starts external worker N (log $TMP/wN.log), sets W<N>.
worker() {
    TMPDIR="$WTMP" "$SLUICE" worker --server "$BASE" --worker testSlow \
        --host "w$1" --log-level debug 2>"$TMP/w$1.log" &
    eval "W$1=$!"
}
took() { grep -c "took task" "$TMP/w$1.log" 2>/dev/null || true; }

# The internal pool does not take testSlow.
worker 1
req POST /smila/jobmanager/jobs/slowJob/ -d '{"mode": "runOnce"}'
expect_status 200 "start slowJob"
RUN=$(jq -r .jobId "$BODY")
for i in $(seq 1 100); do
    [ "$(took 1)" -ge 1 ] && break
    sleep 0.1
done
[ "$(took 1)" -ge 1 ] && ok "worker 1 took a task" || fail "worker 1 took nothing: $(cat "$TMP/w1.log")"
worker 2
sleep 0.3
kill -KILL "$W1"
wait "$W1" 2>/dev/null || true
ok "worker 1 killed while performing"

for i in $(seq 1 300); do
    req GET "/smila/jobmanager/jobs/slowJob/$RUN/"
    case "$(jq -r .state "$BODY")" in
    SUCCEEDED | FAILED | CANCELED) break ;;
    esac
    sleep 0.1
done
expect_jq '.state == "SUCCEEDED"' "slowJob SUCCEEDED"
expect_jq '.tasks.retriedAfterTimeoutTaskCount >= 1' "the killed worker's lease expired"
expect_jq '.worker["1_testSlow"]["output.output.recordCount"] == 6 and .worker["1_testSlow"].successfulTaskCount == 3 and .worker["1_testSlow"].slowRecords == 6' "6 records in, 6 out, 3 successful tasks"
expect_jq '.worker["1_testSlow"]["input.input.recordCount"] == 6 and .worker["1_testSlow"]["output.output.dataObjectCount"] == 3' "input counted once per successful task"
[ "$(took 2)" -ge 1 ] && ok "worker 2 took tasks" || fail "worker 2 took nothing: $(cat "$TMP/w2.log")"

req GET "/smila/store/persist/?prefix=slowOut/"
expect_jq '.objectCount == 3' "3 output bulks in the persistent bucket"
n=0
for id in $(jq -r '.objects[].id' "$BODY"); do
    curl -sS -o "$TMP/bulk" "$BASE/smila/store/persist/$id"
    n=$((n + $("$SLUICE" bulk count "$TMP/bulk")))
done
[ "$n" -eq 6 ] && ok "the bulks hold 6 records" || fail "the bulks hold $n records"
[ -z "$(ls -A "$WTMP")" ] && ok "no temporary files left" || fail "temporary files: $(ls "$WTMP")"

# ---- SIGTERM: worker 2 exits 0
kill -TERM "$W2"
rc=0
wait "$W2" || rc=$?
[ "$rc" -eq 0 ] && ok "worker 2 exits 0 on SIGTERM" || fail "worker 2 exit $rc: $(tail -5 "$TMP/w2.log")"

# ---- server unreachable: the worker retries and logs, SIGTERM still works
stop_server && ok "server stopped" || fail "server stop"
worker 3
sleep 1
kill -0 "$W3" 2>/dev/null && ok "worker keeps running without a server" || fail "worker 3 died: $(cat "$TMP/w3.log")"
grep -q "cannot take tasks" "$TMP/w3.log" && ok "worker logs the unreachable server" || fail "no log: $(cat "$TMP/w3.log")"
kill -TERM "$W3"
rc=0
wait "$W3" || rc=$?
[ "$rc" -eq 0 ] && ok "worker 3 exits 0 on SIGTERM" || fail "worker 3 exit $rc"
finish
