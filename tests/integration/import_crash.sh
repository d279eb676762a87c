#!/bin/bash
# kill -9 of the server during a file import, then a restart (issue 5,
# docs/operations.md "Crashes and durability"): the run continues and the final index equals that
# of an uninterrupted import.  Kill points: early and late in the crawl
# phase, in the completion phase (delta-delete of an incremental run),
# right after the crawl run ended while the processing job still indexes,
# and twice in a row.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

T="$TMP/tree"
mkdir -p "$T"
T=$(realpath "$T")
for a in 0 1 2 3 4; do
    for b in 0 1 2 3; do
        mkdir -p "$T/d$a/e$b"
        for i in $(seq 1 40); do
            echo "file $a $b $i word$((i % 7)) $(printf '%*s' $((i * 13)) x)" >"$T/d$a/e$b/f$i.txt"
        done
    done
    mkdir -p "$TMP/z$a"
    for i in 1 2 3; do echo "zipped $a $i" >"$TMP/z$a/z$i.txt"; done
    (cd "$TMP/z$a" && zip -q "$T/d$a/pack.zip" z1.txt z2.txt z3.txt)
done
import_config "$TMP/config.json" '.jobmanager.workerLimits = {"updatePusher": 1} | .deltaShards = 64 | .deltaMapSize = 67108864'
CRAWL_PARAMS='{"maxFilesPerBulk": 10}'

# wait_run JOB RUN: until the run is over and everything is indexed.
# ---- reference: an uninterrupted import
start_server --config "$TMP/config.json" --data-dir "$TMP/ref"
define_crawl crawl "$T" src "$CRAWL_PARAMS"
crawl crawl || fail "reference import failed"
snapshot "$TMP/ref1"
TASKS=$(jq .tasks.successfulTaskCount "$RUNJSON")
echo "# reference: $(wc -l <"$TMP/ref1") documents, $TASKS tasks"
stop_server

# ---- kills during the initial import
check_point() { # NAME DATADIR WANT
    if diff "$3" "$TMP/snap-$1" >"$TMP/diff"; then
        ok "$1: after kill -9 and restart the index equals the uninterrupted one"
    else
        fail "$1: index differs: $(head -c 400 "$TMP/diff")"
    fi
}
for point in early late indexing double; do
    D="$TMP/data-$point"
    start_server --config "$TMP/config.json" --data-dir "$D"
    define_crawl crawl "$T" src "$CRAWL_PARAMS"
    start_run crawl
    case $point in
    early) until_tasks crawl "$RUN" 5 ;;
    late) until_tasks crawl "$RUN" $((TASKS * 2 / 3)) ;;
    indexing) until_state crawl "$RUN" SUCCEEDED >/dev/null ;;
    double) until_tasks crawl "$RUN" $((TASKS / 3)) ;;
    esac
    kill9_restart "$D"
    if [ $point = double ]; then
        until_tasks crawl "$RUN" $((TASKS / 2))
        kill9_restart "$D"
    fi
    if wait_run crawl "$RUN"; then ok "$point: the run SUCCEEDED after the restart"; else
        fail "$point: run state $(jq -r .state "$RUNJSON")"; fi
    snapshot "$TMP/snap-$point"
    check_point "$point" "$D" "$TMP/ref1"
    stop_server
done

# ---- kills in the completion phase of an incremental run (durability
# fsync: every accepted delete is synced).  The phase has one task per
# delta shard (64, one at a time: updatePusher limit 1), and the test knob
# SLUICE_TEST_DELAY (docs/operations.md) makes each wait 40 ms first, so
# the phase lasts about 2.6 s on any disk (a margin of 640 ms after the
# 48th task for a loaded machine's polls): on tmpfs it is over in a few
# milliseconds, too short to be seen and hit.  Kills at its start, after
# 16 and after 48 of its tasks; each must land in COMPLETING.
export SLUICE_TEST_DELAY=updatePusher.deltaDelete=40
import_config "$TMP/config.json" '.jobmanager.workerLimits = {"updatePusher": 1} | .deltaShards = 64 | .deltaMapSize = 67108864 | .durability = "fsync"'
for i in $(seq 1 5); do rm "$T/d$i/e1/f"*.txt 2>/dev/null || true; done
rm -f "$T/d0/e0/f1"*.txt "$T/d2/pack.zip"
for i in 1 2 3 4 5; do echo "changed $i" >>"$T/d1/e2/f$i.txt"; done
start_server --config "$TMP/config.json" --data-dir "$TMP/ref"
crawl crawl || fail "reference incremental import failed"
[ "$(counter records.deleted)" -gt 40 ] && ok "reference incremental run deleted $(counter records.deleted)" ||
    fail "reference incremental run deleted $(counter records.deleted)"
snapshot "$TMP/ref2"
stop_server
hit=0
# Each on the data dir of one initial-import kill above.
for kp in early:0 late:16 indexing:48; do
    D="$TMP/data-${kp%:*}"
    point=${kp#*:}
    start_server --config "$TMP/config.json" --data-dir "$D"
    start_run crawl
    state=$(until_state crawl "$RUN" COMPLETING)
    if [ "$point" -gt 0 ] && [ "$state" = COMPLETING ]; then
        curl -sS -o "$TMP/poll.json" "$BASE/smila/jobmanager/jobs/crawl/$RUN/"
        until_tasks crawl "$RUN" $(($(jq .tasks.successfulTaskCount "$TMP/poll.json") + point))
        state=$(curl -sS "$BASE/smila/jobmanager/jobs/crawl/$RUN/" | jq -r .state)
    fi
    kill9_restart "$D"
    [ "$state" = COMPLETING ] && hit=$((hit + 1))
    if wait_run crawl "$RUN"; then ok "completion/+$point: the run SUCCEEDED after the restart (killed in $state)"; else
        fail "completion/+$point: run state $(jq -r .state "$RUNJSON")"; fi
    snapshot "$TMP/snap-c$point"
    if diff "$TMP/ref2" "$TMP/snap-c$point" >"$TMP/diff"; then
        ok "completion/+$point: the index equals the uninterrupted incremental one"
    else
        fail "completion/+$point: index differs: $(head -c 400 "$TMP/diff")"
    fi
    stop_server
done
[ $hit = 3 ] && ok "every kill landed in COMPLETING" ||
    fail "$hit of 3 kills landed in COMPLETING"
finish
