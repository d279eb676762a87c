#!/bin/bash
# A non-loopback bind needs the API token on every request; without a
# configured token the server refuses to start.
. "$(dirname "$0")/lib.sh"

write_config "$TMP/notoken.json" '.listen = "0.0.0.0:0"'
if timeout 10 "$SLUICE" serve --config "$TMP/notoken.json" --data-dir "$TMP/data" 2>"$TMP/err.log"; then
    fail "server started on 0.0.0.0 without a token"
else
    grep -q apiToken "$TMP/err.log" && ok "refuses 0.0.0.0 without apiToken" \
        || fail "no apiToken message: $(cat "$TMP/err.log")"
fi

write_config "$TMP/token.json" '.listen = "0.0.0.0:0" | .apiToken = "s3cret-token"'
start_server --config "$TMP/token.json" --data-dir "$TMP/data"
req GET /smila/
expect_error 401 UNAUTHORIZED "no token"
req GET /smila/ -H "Authorization: Bearer wrong"
expect_error 401 UNAUTHORIZED "wrong token"
req GET /smila/ -H "Authorization: Bearer s3cret-token-longer"
expect_error 401 UNAUTHORIZED "token with a suffix"
req GET /smila/ -H "Authorization: Basic s3cret-token"
expect_error 401 UNAUTHORIZED "wrong scheme"
req PUT /smila/store/s/ -H "Authorization: Bearer wrong"
expect_status 401 "mutating request without the right token"
req GET /smila/nothing
expect_status 401 "unknown path without token is 401, not 404"
req GET /metrics
expect_error 401 UNAUTHORIZED "GET /metrics without the token"
req GET /
expect_status 200 "the dashboard's page needs no token (it holds no data; it asks for it)"
req GET /ui/app.js
expect_status 200 "nor do its files"
req GET /ui/nothing.js
expect_status 404 "an unknown dashboard file is 404 without the token too"
# a page of another site cannot change state through the browser
req PUT /smila/store/x/ -H "Authorization: Bearer s3cret-token" -H "Origin: http://evil.example"
expect_error 403 ACCESS_DENIED "a PUT with another site's Origin"
expect_jq '.error.field == "Origin"' "the error names the Origin header"
[ ! -d "$TMP/data/store/x" ] && ok "and changed nothing" || fail "the refused PUT made a store"
req PUT /smila/store/x2/ -H "Authorization: Bearer s3cret-token" -H "Origin: ${BASE}"
expect_status 201 "a PUT with this server's own Origin (the dashboard) is taken"
req GET /metrics -H "Authorization: Bearer s3cret-token"
expect_status 200 "GET /metrics with the token"
req GET /smila/ -H "Authorization: Bearer s3cret-token"
expect_status 200 "right token"
req PUT /smila/store/s/ -H "Authorization: Bearer s3cret-token"
expect_status 201 "right token can create"
[ ! -d "$TMP/data/store/s2" ] && ok "no state from refused requests" || fail "state changed"
# The client commands take the server from --server or $SLUICE_SERVER and
# the token from --token or $SLUICE_TOKEN (out of the process list).
rc=0
"$SLUICE" source status files --server "$BASE" >"$TMP/cli.out" 2>"$TMP/cli.err" || rc=$?
[ "$rc" = 1 ] && grep -q "401" "$TMP/cli.err" && ok "sluice source without a token: 401" ||
    fail "sluice source without a token: rc $rc, $(cat "$TMP/cli.err")"
rc=0
SLUICE_SERVER="$BASE" SLUICE_TOKEN=s3cret-token "$SLUICE" source status files >"$TMP/cli.out" 2>"$TMP/cli.err" || rc=$?
# past the token check: the server answers that the source has no entries
[ "$rc" = 1 ] && grep -q "HTTP 404: no delta entries" "$TMP/cli.err" &&
    ok "sluice source with \$SLUICE_SERVER and \$SLUICE_TOKEN" ||
    fail "sluice source with the environment: rc $rc, $(cat "$TMP/cli.out" "$TMP/cli.err")"
rc=0
SLUICE_SERVER=http://127.0.0.1:1 SLUICE_TOKEN=wrong "$SLUICE" source status files --server "$BASE" --token s3cret-token >"$TMP/cli.out" 2>"$TMP/cli.err" || rc=$?
[ "$rc" = 1 ] && grep -q "HTTP 404: no delta entries" "$TMP/cli.err" &&
    ok "--server and --token win over the environment" ||
    fail "options over the environment: rc $rc, $(cat "$TMP/cli.err")"
stop_server

# Loopback stays open without a token.
write_config "$TMP/loop.json" '.apiToken = "s3cret-token"'
start_server --config "$TMP/loop.json" --data-dir "$TMP/data"
req GET /smila/
expect_status 200 "loopback needs no token"
stop_server
finish
