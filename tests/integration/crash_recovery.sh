#!/bin/bash
# kill -9 at many points of a multi-task runOnce run (after about every Nth
# task finish, and at random times), restart, and compare with an
# uninterrupted run: the run ends SUCCEEDED with the same task counters,
# the same committed output (every record id exactly once) and no
# transient objects left.  Uses sluice-test (the server with the test
# workers running in-process).
#
# CRASH_POINTS (task-count kill points), CRASH_RANDOM (number of random
# kills) and CRASH_TWICE (1: the kill-twice run, 0: not) choose the kills;
# unset, it does all of them.  ctest runs them in parts
# (it_crash_recovery_1..3 in integration.cmake), each with its own
# uninterrupted run, so that ctest -j can spread them over the cores.
SLUICE=${SLUICE_TEST:?set SLUICE_TEST to the sluice-test binary}
. "$(dirname "$0")/lib.sh"
CR=$(cd "$(dirname "$0")/crash" && pwd)
POINTS=${CRASH_POINTS-"3 10 25 50 90 130 170 210 240 250"}
RANDOM_KILLS=${CRASH_RANDOM:-4}
TWICE=${CRASH_TWICE:-1}

write_config "$TMP/config.json" ".jobmanager = {\"configDir\": \"$CR\", \"workflowsDir\": \"$CR/workflows\"}"

# run_job DATA: starts the server on DATA, the store and the job; sets RUN.
run_job() {
    start_server --config "$TMP/config.json" --data-dir "$1"
    req PUT /smila/store/out/
    req POST /smila/jobmanager/jobs/chainJob/
    RUN=$(jq -r .jobId "$BODY")
}

# wait_end: waits for the run's final state, prints it.
wait_end() {
    local i s
    for i in $(seq 1 600); do
        req GET "/smila/jobmanager/jobs/chainJob/$RUN/"
        s=$(jq -r .state "$BODY")
        case "$s" in SUCCEEDED|FAILED|CANCELED) echo "$s"; return 0 ;; esac
        sleep 0.1
    done
    echo "TIMEOUT"
}

# summary DATA: counters and the sorted record ids of the output (one line
# a record, also kept in DATA.ids).  The output is read once, by one bulk
# cat of all 150 bulks (a process per bulk was most of the time of a kill).
summary() {
    jq -c '{state, tasks: {createdTaskCount: .tasks.createdTaskCount, successfulTaskCount: .tasks.successfulTaskCount}}' "$BODY"
    find "$1/store/out/results" -type f -print0 | sort -z |
        xargs -0 -r "$SLUICE" bulk cat | jq -r ._recordid | sort >"$1.ids"
    md5sum <"$1.ids"
    uniq -d "$1.ids" | wc -l
}

# The uninterrupted run.
run_job "$TMP/base"
[ "$(wait_end)" = SUCCEEDED ] && ok "uninterrupted run SUCCEEDED" || fail "uninterrupted run: $(cat "$BODY")"
summary "$TMP/base" >"$TMP/base.summary"
stop_server
n=$(wc -l <"$TMP/base.ids")
[ "$n" = 1500 ] && ok "uninterrupted run wrote 1500 records" || fail "uninterrupted run wrote $n records"

# crash_once NAME KILLER...: a fresh run killed by the KILLER command.
crash_once() {
    local name=$1 data="$TMP/$1" state
    shift
    run_job "$data"
    "$@"
    # killed at once: a request more between the last poll and the kill
    # let about 35 tasks finish (the run ended before a kill at 260 of
    # 301); where it was killed is what the last poll saw
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    local at
    at=$(jq -r '"\(.state) after \(.tasks.successfulTaskCount) of 301 finishes"' "$BODY")
    case "$name:$at" in
        random*|twice*) ;;
        *SUCCEEDED*) fail "killed $name: the run had already ended ($at)" ;;
        *) ok "killed $name mid-run: $at" ;;
    esac
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    start_server --config "$TMP/config.json" --data-dir "$data"
    state=$(wait_end)
    summary "$data" >"$TMP/$name.summary"
    if [ "$state" = SUCCEEDED ] && cmp -s "$TMP/base.summary" "$TMP/$name.summary"; then
        ok "killed $name: same result as the uninterrupted run"
    else
        fail "killed $name: state $state; $(diff "$TMP/base.summary" "$TMP/$name.summary" | tr '\n' ' ')"
    fi
    sleep 0.2
    req GET /smila/store/temp/
    expect_jq '.objectCount == 0' "killed $name: no transient objects left"
    stop_server
    rm -rf "$data"
}

# after_finishes N: returns once the run has about N successful tasks.
# Polls with curl alone (the body read and matched by bash, no jq): the
# last point is about 0.2 s before the end of the run, which two jq a poll
# missed now and then on a loaded machine.
after_finishes() {
    local i body re='"tasks": *[{][^}]*"successfulTaskCount": *([0-9]+)'
    for i in $(seq 1 3000); do
        req GET "/smila/jobmanager/jobs/chainJob/$RUN/"
        IFS= read -r -d '' body <"$BODY" || true
        [[ $body =~ $re ]] && [ "${BASH_REMATCH[1]}" -ge "$1" ] && return 0
        [[ $body =~ \"state\":\ *\"SUCCEEDED\" ]] && return 0
    done
}

for p in $POINTS; do
    crash_once "after-$p-finishes" after_finishes "$p"
done
for i in $(seq 1 "$RANDOM_KILLS"); do
    ms=$((RANDOM % 600))
    crash_once "random-${ms}ms" sleep "0.$(printf '%03d' "$ms")"
done
# Twice in one run: kill, restart, kill again.
crash_twice() {
    after_finishes 30
    kill -KILL "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
    start_server --config "$TMP/config.json" --data-dir "$TMP/twice"
    after_finishes 150
}
if [ "$TWICE" = 1 ]; then
    crash_once twice crash_twice
fi
finish
