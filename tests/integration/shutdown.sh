#!/bin/bash
# SIGTERM and SIGINT stop the server cleanly: an upload in flight
# completes, new connections are refused, the exit status is 0.
. "$(dirname "$0")/lib.sh"

write_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
req PUT /smila/store/s/
expect_status 201 "create store"
head -c $((3 * 1024 * 1024)) /dev/urandom >"$TMP/three"
curl -sS -o "$TMP/up.json" -w '%{http_code}' --limit-rate 1M -T "$TMP/three" \
    "$BASE/smila/store/s/inflight" >"$TMP/up.status" &
upload=$!
sleep 0.7
kill -TERM "$SERVER_PID"
sleep 0.3
if curl -sS -m 2 "$BASE/smila/" >/dev/null 2>&1; then
    fail "new connection accepted during shutdown"
else
    ok "new connections refused during shutdown"
fi
wait "$upload" || true
[ "$(cat "$TMP/up.status")" = 201 ] && ok "in-flight upload finished with 201" \
    || fail "in-flight upload got $(cat "$TMP/up.status")"
rc=0
wait "$SERVER_PID" || rc=$?
SERVER_PID=""
[ "$rc" -eq 0 ] && ok "exit status 0 after SIGTERM" || fail "exit status $rc"
grep -q "shutting down" "$TMP/server.log" && ok "logged the shutdown" || fail "no shutdown log"
cmp -s "$TMP/data/store/s/inflight" "$TMP/three" && ok "in-flight object stored whole" \
    || fail "in-flight object missing or different"
ls "$TMP/data/store/.tmp" | grep -q . && fail "shadow files left behind" \
    || ok "no shadow files left"

start_server --config "$TMP/config.json" --data-dir "$TMP/data"
req GET /smila/store/s/inflight
expect_status 200 "object survives restart"
kill -INT "$SERVER_PID"
rc=0
wait "$SERVER_PID" || rc=$?
SERVER_PID=""
[ "$rc" -eq 0 ] && ok "exit status 0 after SIGINT" || fail "exit status $rc after SIGINT"
finish
