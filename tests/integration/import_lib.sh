# Helpers for the file import tests (import_*.sh), sourced after lib.sh:
# a server with the repository's own config/ and workflows/ (processing
# job indexUpdate, autoStart, writing index "default"), crawl jobs defined
# over REST, `sluice job start --wait` to run them until indexed, and index
# snapshots from the records endpoint.
SRC=$(cd "$(dirname "$0")/../.." && pwd)

# import_config FILE [extra jq filter]
import_config() {
    write_config "$1" ".jobmanager = {\"configDir\": \"$SRC/config\", \"workflowsDir\": \"$SRC/workflows\", \"leaseSeconds\": 30} | .workers = {\"threads\": 2} | .bulkbuilder = {\"bulkLimitTimeMs\": 200} | ${2:-.}"
}

# define_crawl NAME ROOT SOURCE [extra parameters as a JSON object]
define_crawl() {
    local params
    params=$(jq -cn --arg root "$2" --arg src "$3" --argjson extra "${4:-{\}}" \
        '{dataSource: $src, rootFolder: $root, jobToPushTo: "indexUpdate"} + $extra | with_entries(select(.value != null))')
    req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
        -d "{\"name\": \"$1\", \"workflow\": \"fileCrawling\", \"parameters\": $params}"
    [ "$STATUS" = 200 ] || { echo "define_crawl $1: $STATUS $(cat "$BODY")" >&2; return 1; }
}

# crawl JOB: run it until indexed; RUN is the run id, RUNJSON its data.
RUNJSON="$TMP/run.json"
crawl() {
    local rc=0
    RUN=$("$SLUICE" job start "$1" --wait --timeout 300 --server "$BASE" 2>"$TMP/crawl.err") || rc=$?
    curl -sS -o "$RUNJSON" "$BASE/smila/jobmanager/jobs/$1/$RUN/"
    return $rc
}

# counter NAME: sum of a worker counter over the last run's actions.
counter() {
    jq "[.worker[] | .[\"$1\"] // 0] | add // 0" "$RUNJSON"
}

# snapshot FILE: "<_recordid> TAB <textSha256>" of every document of index
# "default", in _recordid byte order.
snapshot() {
    local after="" out=$1
    : >"$out"
    while :; do
        curl -sS -G -o "$TMP/page.json" "$BASE/smila/index/default/records" \
            --data-urlencode "limit=1000" ${after:+--data-urlencode "after=$after"}
        jq -r '.records[] | "\(._recordid)\t\(.textSha256)"' "$TMP/page.json" >>"$out"
        after=$(jq -r '.next // empty' "$TMP/page.json")
        [ -n "$after" ] || break
    done
}

# ids FILE: the ids of a snapshot.
ids() {
    cut -f1 "$1"
}

# wait_indexed: until the processing job indexUpdate has caught up: no
# open or pending bulk in the bulkbuilder and no active workflow run, seen
# three times 100 ms apart.  Returns 1 after 60 s.
wait_indexed() {
    local i cur quiet=0
    for i in $(seq 1 600); do
        cur=$(curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/" | jq -r .runs.current)
        if curl -sS "$BASE/smila/bulkbuilder/" |
            jq -e 'all(.jobs[]; .openRecords == 0 and .pendingBulks == 0)' >/dev/null &&
            curl -sS "$BASE/smila/jobmanager/jobs/indexUpdate/$cur/" |
            jq -e '.workflowRuns.activeWorkflowRunCount == 0' >/dev/null; then
            quiet=$((quiet + 1))
            [ $quiet -ge 3 ] && return 0
        else
            quiet=0
        fi
        sleep 0.1
    done
    return 1
}

# ---- runs interrupted by kill -9 (import_crash.sh, web_crash.sh)
# wait_run JOB RUN: until the run ended and the index caught up; 0 if it
# SUCCEEDED.  start_run JOB: a runOnce run, its id in RUN.
# until_tasks JOB RUN N: until N tasks succeeded (or the run ended).
# until_state JOB RUN STATE.  kill9_restart DATADIR: kill -9, start again.
wait_run() {
    local i state
    for i in $(seq 1 1200); do
        state=$(curl -sS "$BASE/smila/jobmanager/jobs/$1/$2/" | jq -r .state)
        case $state in SUCCEEDED | FAILED | CANCELED) break ;; esac
        sleep 0.1
    done
    curl -sS -o "$RUNJSON" "$BASE/smila/jobmanager/jobs/$1/$2/"
    wait_indexed
    [ "$state" = SUCCEEDED ]
}


start_run() {
    req POST "/smila/jobmanager/jobs/$1/" -d '{"mode": "runOnce"}'
    RUN=$(jq -r .jobId "$BODY")
}

# until_tasks JOB RUN N: until N tasks of the run succeeded.
until_tasks() {
    local i
    for i in $(seq 1 2000); do
        curl -sS -o "$TMP/poll.json" "$BASE/smila/jobmanager/jobs/$1/$2/"
        jq -e ".tasks.successfulTaskCount >= $3 or (.state | test(\"SUCCEEDED|FAILED\"))" "$TMP/poll.json" >/dev/null && return 0
        sleep 0.005
    done
}

# until_state JOB RUN STATE: until the run is in STATE (or over).
until_state() {
    local i s
    for i in $(seq 1 4000); do
        s=$(curl -sS "$BASE/smila/jobmanager/jobs/$1/$2/" | jq -r .state)
        [ "$s" = "$3" ] && { echo "$s"; return 0; }
        case $s in SUCCEEDED | FAILED | CANCELED) echo "$s"; return 0 ;; esac
    done
}

kill9_restart() {
    kill -KILL "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    start_server --config "$TMP/config.json" --data-dir "$1"
}

