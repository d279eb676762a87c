#!/bin/bash
# Pushes to the bulkbuilder (issue 24, items 4 and 5):
# A: limits are checked at intake: a bulk whose line 2 has a _recordid of
#    70,000 bytes (over the 65,536 the delta service and the index take)
#    is a 400 naming line 2, and nothing of it is accepted (its good
#    line 1 neither); the same record alone is a 400 naming _recordid;
#    the good records pushed again are indexed.
# B: four bodies of 16 MiB of small records (about 690,000 each) pushed
#    in parallel into a job whose workflow is the bulkbuilder alone: every
#    record is accepted and committed, pendingBulks returns to 0, and the
#    server's peak RSS stays under 150 MiB (intake streams each body
#    through a spool file; it used to hold every record of a body as JSON
#    at once, 340 MB for one body).  Under AddressSanitizer, bodies of
#    4 MiB and the growth over the RSS after start is bounded instead.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

asan=0
case "$(ldd "$SLUICE")" in *libasan*) asan=1 ;; esac # not grep -q: an early exit breaks ldd's pipe, and pipefail
# freed memory waits in ASan's quarantine and counts in the RSS
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"
# debug: the server's messages about connections reach the log
import_config "$TMP/config.json" '.log.level = "debug"'
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
base_rss=$(server_peak_rss_kib)

# ---- A: limits at intake
long=$(head -c 70000 /dev/zero | tr '\0' 'x')
{
    echo '{"_recordid": "intake-good-1", "text": "quebec one"}'
    echo "{\"_recordid\": \"$long\", \"text\": \"quebec two\"}"
    echo '{"_recordid": "intake-good-3", "text": "quebec three"}'
} >"$TMP/long.jsonl"
req POST /smila/job/indexUpdate/bulk --data-binary @"$TMP/long.jsonl"
expect_error 400 INVALID_INPUT "a bulk with a 70,000-byte _recordid on line 2"
expect_jq '.error.field == "line 2" and (.error.message | test("_recordid"))' \
    "the error names line 2 and _recordid"
req GET /smila/bulkbuilder/
expect_jq '[.jobs[] | .acceptedRecords] | add // 0 | . == 0' \
    "nothing of that bulk was accepted"
sed -n 2p "$TMP/long.jsonl" >"$TMP/long1.json"
req POST /smila/job/indexUpdate/record --data-binary @"$TMP/long1.json"
expect_error 400 INVALID_INPUT "the same record alone"
expect_jq '.error.field == "_recordid"' "the error names _recordid"
sed 2d "$TMP/long.jsonl" >"$TMP/good.jsonl"
req POST /smila/job/indexUpdate/bulk --data-binary @"$TMP/good.jsonl"
expect_status 202 "the good records pushed again"
expect_jq '.accepted == 2' "both are accepted"
wait_indexed
req GET /smila/index/default/
expect_jq '.documentCount == 2' "both are indexed"

# ---- B: four 16 MiB bodies in parallel, bounded memory
req POST /smila/jobmanager/workflows/ -H 'Content-Type: application/json' -d '{
  "name": "sinkOnly", "modes": ["standard"], "parameters": {"tempStore": "temp"},
  "startAction": {"worker": "bulkbuilder",
    "output": {"insertedRecords": "sinkAdds", "deletedRecords": "sinkDeletes"}}}'
expect_status 200 "a workflow of the bulkbuilder alone"
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d '{"name": "sink", "workflow": "sinkOnly"}'
expect_status 200 "its job"
req POST /smila/jobmanager/jobs/sink/ -H 'Content-Type: application/json' -d '{"mode": "standard"}'
expect_status 200 "the job starts"
mib=16
[ "$asan" = 1 ] && mib=4
python3 - "$TMP" "$mib" <<'PY'
import sys
tmp, mib = sys.argv[1], int(sys.argv[2])
limit = mib * 1024 * 1024
for b in range(4):
    with open(f"{tmp}/big{b}.jsonl", "w") as f:
        size, i = 0, 0
        while True:
            line = '{"_recordid":"%d-%d"}\n' % (b, i)
            if size + len(line) > limit:
                break
            f.write(line)
            size += len(line)
            i += 1
PY
want=0
for b in 0 1 2 3; do want=$((want + $(wc -l <"$TMP/big$b.jsonl"))); done
for b in 0 1 2 3; do
    curl -sS -o "$TMP/big$b.out" -w '%{http_code}' --data-binary @"$TMP/big$b.jsonl" \
        "$BASE/smila/job/sink/bulk" >"$TMP/big$b.status" &
    pids="${pids:-} $!"
done
# shellcheck disable=SC2086
wait $pids
all=1
got=0
for b in 0 1 2 3; do
    [ "$(cat "$TMP/big$b.status")" = 202 ] || { all=0; fail "body $b: $(cat "$TMP/big$b.status") $(head -c 300 "$TMP/big$b.out")"; }
    got=$((got + $(jq '.accepted // 0' "$TMP/big$b.out")))
done
[ "$all" = 1 ] && [ "$got" = "$want" ] && ok "4 bodies of $mib MiB: $got records accepted" \
    || fail "accepted $got of $want"
for i in $(seq 1 600); do
    req GET /smila/bulkbuilder/
    if jq -e --argjson want "$want" '.jobs[] | select(.job == "sink") |
        .pendingBulks == 0 and .openRecords == 0 and .acceptedRecords == $want' "$BODY" >/dev/null; then
        break
    fi
    sleep 0.2
done
expect_jq '.jobs[] | select(.job == "sink") | .pendingBulks == 0' \
    "every bulk of the sink job committed (pendingBulks 0)"
rss=$(server_peak_rss_kib)
echo "# peak RSS: $((base_rss / 1024)) MiB after start, $((rss / 1024)) MiB after the pushes"
if [ "$asan" = 1 ]; then
    [ "$rss" -lt $((base_rss + 100 * 1024)) ] &&
        ok "peak RSS grew by $(((rss - base_rss) / 1024)) MiB under ASan (less than 100)" ||
        fail "peak RSS grew by $(((rss - base_rss) / 1024)) MiB under ASan"
else
    [ "$rss" -lt $((150 * 1024)) ] && ok "peak RSS $((rss / 1024)) MiB < 150 MiB" ||
        fail "peak RSS $((rss / 1024)) MiB"
fi
stop_server
finish
