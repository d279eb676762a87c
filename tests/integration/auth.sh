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
req GET /smila/ -H "Authorization: Bearer s3cret-token"
expect_status 200 "right token"
req PUT /smila/store/s/ -H "Authorization: Bearer s3cret-token"
expect_status 201 "right token can create"
[ ! -d "$TMP/data/store/s2" ] && ok "no state from refused requests" || fail "state changed"
stop_server

# Loopback stays open without a token.
write_config "$TMP/loop.json" '.apiToken = "s3cret-token"'
start_server --config "$TMP/loop.json" --data-dir "$TMP/data"
req GET /smila/
expect_status 200 "loopback needs no token"
stop_server
finish
