#!/bin/bash
# A full crawl deletes only after a complete run.  The fileFetcher is an
# external worker here (workers.external), so a run's fetch tasks wait:
# this script runs `sluice worker --worker fileFetcher` for the complete
# runs, and takes and fails the tasks itself for the broken ones.  Each
# broken run (workflow run canceled, job run canceled, a fatal task,
# retries used up, a directory that cannot be listed) follows a file's
# removal and another's change: it must delete nothing and say why in its
# run data ("completion": {"skipped": ...}) and in `sluice job status`;
# the next complete run then deletes the removed file's document and
# indexes the changed file's newest content.  A rootFolder that is a file
# fails the run; a file swapped for a link out of rootFolder before its
# fetch is skipped.  As root, the server runs without CAP_DAC_OVERRIDE and
# CAP_DAC_READ_SEARCH (setpriv) so that a mode 000 directory is unreadable.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

T="$TMP/tree"
mkdir -p "$T/sub"
T=$(realpath "$T")
echo "alpha keep" >"$T/keep.txt"
echo "bravo version0" >"$T/change.txt"
echo "delta inner" >"$T/sub/inner.txt"

CLI=$SLUICE
if [ "$(id -u)" = 0 ]; then
    cat >"$TMP/sluice-nocap" <<EOF
#!/bin/sh
exec setpriv --inh-caps=-dac_override,-dac_read_search \
    --bounding-set=-dac_override,-dac_read_search "$CLI" "\$@"
EOF
    chmod +x "$TMP/sluice-nocap"
    SLUICE="$TMP/sluice-nocap"
fi
import_config "$TMP/config.json" '.workers.external = "fileFetcher" | .jobmanager.maxRetries = 1'
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
SLUICE=$CLI
define_crawl crawlC "$T" srcC

FETCHER=""
fetcher_start() {
    "$SLUICE" worker --server "$BASE" --worker fileFetcher --threads 2 2>>"$TMP/fetcher.log" &
    FETCHER=$!
}
fetcher_stop() {
    kill -TERM "$FETCHER"
    wait "$FETCHER" || true
    FETCHER=""
}

# indexed NAME: the document of $T/NAME is in index "default".
indexed() {
    snapshot "$TMP/snap"
    ids "$TMP/snap" | grep -qxF "$T/$1"
}

# has_text WORD NAME: a search for WORD finds $T/NAME.
has_text() {
    "$SLUICE" search --server "$BASE" "$1" >"$TMP/hits" 2>/dev/null || true
    grep -qF "$T/$2" "$TMP/hits"
}

complete_run() {
    fetcher_start
    if crawl crawlC; then ok "$1: a complete run SUCCEEDED"; else fail "$1: complete run: $(cat "$TMP/crawl.err")"; fi
    fetcher_stop
}

# take: take a fetch task of the current run (waits for one); TASK is its
# JSON file, TASK_ID its id.
TASK="$TMP/task.json"
take() {
    local i
    for i in $(seq 1 600); do
        STATUS=$(curl -sS -o "$TASK" -w '%{http_code}' -X POST "$BASE/smila/tasks/fileFetcher/")
        [ "$STATUS" = 200 ] && break
        sleep 0.05
    done
    TASK_ID=$(jq -r .taskId "$TASK")
}

# finish_task STATUS: finish the taken task with STATUS.
finish_task() {
    req POST "/smila/tasks/fileFetcher/$TASK_ID/finish/" -H 'Content-Type: application/json' \
        -d "{\"status\": \"$1\", \"errorMessage\": \"failed by the test\"}"
}

# prepare N: gone<N>.txt is indexed by a complete run, then removed, and
# change.txt changes to version N.
prepare() {
    echo "echo$1 gone" >"$T/gone$1.txt"
    complete_run "case $1 setup"
    indexed "gone$1.txt" && ok "case $1: gone$1.txt is indexed" || fail "case $1: gone$1.txt not indexed"
    rm "$T/gone$1.txt"
    echo "bravo version$1" >"$T/change.txt"
}

# broken N STATE WHY: the broken run ended STATE, deleted nothing and its
# run data and `sluice job status` say WHY (a jq regex).
broken() {
    local state
    state=$(jq -r .state "$RUNJSON")
    [ "$state" = "$2" ] && ok "case $1: the run ended $2" || fail "case $1: the run ended $state, want $2"
    jq -e --arg re "$3" '.completion.skipped | test($re)' "$RUNJSON" >/dev/null &&
        ok "case $1: the run data says why nothing was deleted ($(jq -r .completion.skipped "$RUNJSON"))" ||
        fail "case $1: completion: $(jq -c .completion "$RUNJSON")"
    "$SLUICE" job status crawlC --server "$BASE" >"$TMP/status" 2>&1 || true
    grep -q "completion skipped, nothing deleted: " "$TMP/status" &&
        ok "case $1: sluice job status says so" || fail "case $1: status: $(cat "$TMP/status")"
    [ "$(counter records.deleted)" = 0 ] && ok "case $1: records.deleted 0" ||
        fail "case $1: records.deleted $(counter records.deleted)"
    indexed "gone$1.txt" && ok "case $1: the removed file's document stays until a complete run" ||
        fail "case $1: gone$1.txt was deleted by a broken run"
    indexed keep.txt && indexed change.txt && indexed sub/inner.txt &&
        ok "case $1: every existing file is still indexed" || fail "case $1: a document of an existing file is gone: $(cat "$TMP/snap")"
}

# verify N: the next complete run deletes gone<N>.txt and indexes version N.
verify() {
    complete_run "case $1"
    jq -e '.completion.ran == true' "$RUNJSON" >/dev/null && ok "case $1: the complete run ran its completion" ||
        fail "case $1: completion: $(jq -c .completion "$RUNJSON")"
    indexed "gone$1.txt" && fail "case $1: gone$1.txt is still indexed" || ok "case $1: the removed file's document is deleted now"
    has_text "version$1" change.txt && ok "case $1: change.txt has its newest content" ||
        fail "case $1: search version$1: $(cat "$TMP/hits")"
    indexed keep.txt && indexed sub/inner.txt && ok "case $1: the other documents stay" || fail "case $1: $(cat "$TMP/snap")"
}

complete_run initial
indexed keep.txt && indexed change.txt && indexed sub/inner.txt && ok "the tree is indexed" ||
    fail "initial index: $(cat "$TMP/snap")"

# 1: the workflow run is canceled while its fetch tasks wait.
prepare 1
start_run crawlC
take
WF=$(jq -r .properties.workflowRunId "$TASK")
req POST "/smila/jobmanager/jobs/crawlC/$RUN/workflowrun/$WF/cancel/"
expect_status 200 "case 1: workflow run $WF canceled"
wait_run crawlC "$RUN" || true
broken 1 SUCCEEDED "1 workflow run canceled"
verify 1

# 2: the job run is canceled.
prepare 2
start_run crawlC
take
req POST "/smila/jobmanager/jobs/crawlC/$RUN/cancel/"
expect_status 200 "case 2: job run canceled"
wait_run crawlC "$RUN" || true
broken 2 CANCELED "job run was canceled"
verify 2

# 3: a fetch task ends in a fatal error.
prepare 3
start_run crawlC
take
finish_task FATAL_ERROR
wait_run crawlC "$RUN" || true
broken 3 FAILED "task failed"
verify 3

# 4: a fetch task fails until its retries (maxRetries 1) are used up.
prepare 4
start_run crawlC
for i in 1 2 3 4 5 6; do
    s=$(curl -sS "$BASE/smila/jobmanager/jobs/crawlC/$RUN/" | jq -r .state)
    [ "$s" = FAILED ] && break
    take
    finish_task RECOVERABLE_ERROR
done
wait_run crawlC "$RUN" || true
jq -e '.tasks.failedAfterRetryTaskCount >= 1' "$RUNJSON" >/dev/null && ok "case 4: a task failed after its retry" ||
    fail "case 4: tasks $(jq -c .tasks "$RUNJSON")"
broken 4 FAILED "task failed"
verify 4

# 5: a directory cannot be listed (mode 000): the crawl succeeds but is
# incomplete; inner.txt, which still exists, keeps its document.
prepare 5
chmod 000 "$T/sub"
fetcher_start
crawl crawlC || true
fetcher_stop
chmod 755 "$T/sub"
broken 5 SUCCEEDED "could not read all (its|their) input .*sub"
[ "$(counter directories.unreadable)" -ge 1 ] && ok "case 5: directories.unreadable counted" ||
    fail "case 5: directories.unreadable $(counter directories.unreadable)"
verify 5

# A file replaced by a link out of rootFolder between the crawl and the
# fetch: the fetcher checks the file it opened, skips and counts it.
echo "lima swap" >"$T/swap.txt"
start_run crawlC
for i in $(seq 1 600); do
    curl -sS "$BASE/smila/tasks/fileFetcher/" | jq -e '.todo.count > 0' >/dev/null && break
    sleep 0.05
done
rm "$T/swap.txt"
ln -s /etc/passwd "$T/swap.txt"
fetcher_start
wait_run crawlC "$RUN" || fail "the swap run: $(jq -c '{state, errors}' "$RUNJSON")"
fetcher_stop
[ "$(counter files.skipped.outsideRoot)" = 1 ] && ok "a file turned into a link out of rootFolder is skipped by the fetcher" ||
    fail "files.skipped.outsideRoot $(counter files.skipped.outsideRoot)"
indexed swap.txt && fail "swap.txt (now /etc/passwd) is indexed" || ok "/etc/passwd is not indexed"
rm "$T/swap.txt"

# A rootFolder that is a file fails the run, like a missing one.
define_crawl crawlFile "$T/keep.txt" srcFile
start_run crawlFile
wait_run crawlFile "$RUN" || true
jq -e '.state == "FAILED" and (.errors[0].message | test("not a directory"))' "$RUNJSON" >/dev/null &&
    ok "a rootFolder that is a file fails the run" || fail "rootFolder a file: $(jq -c '{state, errors}' "$RUNJSON")"

stop_server
finish
