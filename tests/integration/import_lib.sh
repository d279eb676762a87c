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
