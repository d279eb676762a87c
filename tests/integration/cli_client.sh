#!/bin/bash
# The client commands against a real server (docs/cli.md): the server and
# token from the environment; job list, define (a mistake names its field),
# start --wait (the indexing phase, the last line on its own), start
# --wait while a run is going follows that run, follow and Ctrl-C (the run
# goes on, exit 130), cancel, delete --purge; workflow list, define and
# delete; index list and delete; source list; a server that cannot be
# reached exits 3.  Each delta-delete task of a run's completion takes
# 400 ms (SLUICE_TEST_DELAY), so runs last long enough to be caught going.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

ROOT="$TMP/tree"
for d in $(seq 1 12); do
    mkdir -p "$ROOT/d$d"
    echo "file $d of the command line test" >"$ROOT/d$d/f.txt"
done
import_config "$TMP/config.json"
SLUICE_TEST_DELAY=updatePusher.deltaDelete=400 start_server --config "$TMP/config.json" --data-dir "$TMP/data"
export SLUICE_SERVER=$BASE

# run CMD...: OUT, ERR and RC of a sluice command
run() {
    RC=0
    "$SLUICE" "$@" >"$TMP/out" 2>"$TMP/err" || RC=$?
}

run job list
[ "$RC" = 0 ] && grep -q '^indexUpdate  running ' "$TMP/out" && grep -q '^crawlFilesystem' "$TMP/out" &&
    ok "job list, the server from SLUICE_SERVER: the jobs, indexUpdate running" || fail "job list: $RC $(cat "$TMP/out" "$TMP/err")"

jq -n --arg root "$ROOT" '{name: "cliCrawl", workflow: "fileCrawling",
    parameters: {dataSource: "cli", rootFolder: $root, jobToPushTo: "indexUpdate"}}' >"$TMP/job.json"
run job define "$TMP/job.json"
[ "$RC" = 0 ] && grep -q "^job cliCrawl defined$" "$TMP/out" && ok "job define FILE" || fail "job define: $RC $(cat "$TMP/out" "$TMP/err")"
jq '.workflow = "noSuchWorkflow" | .name = "bad"' "$TMP/job.json" >"$TMP/bad.json"
run job define "$TMP/bad.json"
[ "$RC" = 1 ] && grep -q "HTTP 400" "$TMP/err" && grep -q "noSuchWorkflow" "$TMP/err" &&
    ok "a job with an unknown workflow is refused, exit 1, naming it" || fail "bad define: $RC $(cat "$TMP/err")"
echo '{"name": ' >"$TMP/broken.json"
run job define "$TMP/broken.json"
[ "$RC" = 1 ] && grep -q "broken.json: line [0-9]" "$TMP/err" && ok "a file that is not JSON: exit 1 with the line" ||
    fail "broken define: $RC $(cat "$TMP/err")"
run job list --json
[ "$RC" = 0 ] && jq -e 'any(.[]; .name == "cliCrawl")' "$TMP/out" >/dev/null &&
    ok "job list --json has the new job" || fail "job list --json: $(head -c 300 "$TMP/out")"

run job start cliCrawl --wait --timeout 120
last=$(grep -a '^SUCCEEDED' "$TMP/err" | tail -n 1)
{ [ "$RC" = 0 ] && grep -q '^[0-9]\{8\}-' "$TMP/out" && [[ $last == *"  indexed" ]]; } &&
    ok "job start --wait: the run id, then the final line of its own: SUCCEEDED ... indexed" ||
    fail "start --wait: $RC, final line '$last'; $(cat "$TMP/err")"

# a run going: start --wait follows it instead of failing
first=$("$SLUICE" job start cliCrawl)
run job start cliCrawl --wait --timeout 120
{ [ "$RC" = 0 ] && grep -q "has run $first going; following it" "$TMP/err" && [ "$(cat "$TMP/out")" = "$first" ]; } &&
    ok "start --wait with a run going follows that run" || fail "start --wait on a going run: $RC $(cat "$TMP/out" "$TMP/err")"

# follow, and Ctrl-C while following: the run goes on
second=$("$SLUICE" job start cliCrawl)
"$SLUICE" job follow cliCrawl >"$TMP/out" 2>"$TMP/err" &
fpid=$!
sleep 1
kill -INT $fpid
RC=0; wait $fpid || RC=$?
{ [ "$RC" = 130 ] && grep -q "stopped following; run $second of job cliCrawl goes on (sluice job follow cliCrawl $second)" "$TMP/err"; } &&
    ok "Ctrl-C while following: exit 130, the run goes on and how to follow it again" ||
    fail "follow + SIGINT: $RC $(cat "$TMP/err")"
run job follow cliCrawl "$second" --timeout 120
[ "$RC" = 0 ] && grep -q "^SUCCEEDED" "$TMP/err" && ok "job follow JOB RUN: the run went on and SUCCEEDED" ||
    fail "follow after SIGINT: $RC $(cat "$TMP/err")"

# cancel
third=$("$SLUICE" job start cliCrawl)
sleep 0.5
run job cancel cliCrawl
[ "$RC" = 0 ] && grep -q "^run $third of job cliCrawl canceled$" "$TMP/out" && ok "job cancel: the run going" ||
    fail "cancel: $RC $(cat "$TMP/out" "$TMP/err")"
run job follow cliCrawl "$third" --timeout 60
[ "$RC" = 1 ] && grep -q "^CANCELED" "$TMP/err" && ok "the canceled run ends CANCELED (follow exits 1)" ||
    fail "after cancel: $RC $(cat "$TMP/err")"
run job cancel cliCrawl
[ "$RC" = 1 ] && grep -q "has no run going" "$TMP/err" && ok "cancel without a run going: exit 1, says so" ||
    fail "cancel idle: $RC $(cat "$TMP/err")"

# workflows, indexes, sources
run workflow list
[ "$RC" = 0 ] && grep -qx fileCrawling "$TMP/out" && ok "workflow list" || fail "workflow list: $(cat "$TMP/out" "$TMP/err")"
curl -sS "$BASE/smila/jobmanager/workflows/fileCrawling/" | jq '.name = "cliFlow" | del(.url, .timestamp, .readOnly)' >"$TMP/wf.json"
run workflow define "$TMP/wf.json"
[ "$RC" = 0 ] && grep -q "^workflow cliFlow defined$" "$TMP/out" && ok "workflow define FILE" || fail "workflow define: $RC $(cat "$TMP/err")"
run workflow delete cliFlow
[ "$RC" = 0 ] && ! "$SLUICE" workflow list | grep -qx cliFlow && ok "workflow delete" || fail "workflow delete: $RC $(cat "$TMP/err")"
run index list
[ "$RC" = 0 ] && grep -q "^default  12 documents$" "$TMP/out" && ok "index list: default with its 12 documents" ||
    fail "index list: $(cat "$TMP/out" "$TMP/err")"
run index delete nothere
[ "$RC" = 1 ] && ok "index delete of an unknown index: exit 1" || fail "index delete nothere: $RC"
run source list
[ "$RC" = 0 ] && grep -q "^cli  12 delta entries$" "$TMP/out" && ok "source list: cli with 12 delta entries" ||
    fail "source list: $(cat "$TMP/out" "$TMP/err")"

run job delete cliCrawl --purge
[ "$RC" = 0 ] && grep -q "^job cliCrawl deleted, its documents purged$" "$TMP/out" && ok "job delete --purge" ||
    fail "job delete: $RC $(cat "$TMP/out" "$TMP/err")"
for _ in $(seq 1 100); do
    [ "$(curl -sS "$BASE/smila/index/default/" | jq .documentCount)" = 0 ] && break
    sleep 0.1
done
[ "$(curl -sS "$BASE/smila/index/default/" | jq .documentCount)" = 0 ] && ok "the purged job's documents left the index" ||
    fail "index still has $(curl -sS "$BASE/smila/index/default/" | jq .documentCount) documents"

# usage and an unreachable server
run job follow
[ "$RC" = 2 ] && ok "job follow without a job: usage error, exit 2" || fail "usage: $RC"
SLUICE_SERVER=http://127.0.0.1:1 run job list
[ "$RC" = 3 ] && ok "a server that cannot be reached: exit 3" || fail "unreachable: $RC $(cat "$TMP/err")"

stop_server
finish
