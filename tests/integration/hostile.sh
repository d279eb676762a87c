#!/bin/bash
# Hostile requests against the real server (issue 24): none may stop it or
# leave it unable to change state, and every one is answered with the
# JSON error body.
# A: every route of http/routes.c with each path parameter replaced by
#    bytes that are not UTF-8 once decoded (%ff%fe, a%ffb): a 4xx JSON
#    error naming the parameter, never a 5xx; unknown paths and wrong
#    methods with such bytes: 404/405 JSON; a query argument with them:
#    400 naming the argument; a Host header with them: answered.
# B: an event name over LMDB's key limit is a 400, and the jobmanager
#    still takes changes afterwards (it used to fail every change with
#    500 until restarted).
# C: delta and visited-link source names '..', '.', a newline, a NUL,
#    a backslash: 400, never "cleared".
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"

ROUTES="$(dirname "$0")/../../http/routes.c"

write_config "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

# json_error: the body is the JSON error body (any code).
json_error() {
    jq -e '.error.code | type == "string"' "$BODY" >/dev/null 2>&1
}

# ---- A: every route, every parameter, bytes that are not UTF-8
# "METHOD PATTERN" pairs: the string literals of each route entry.
tr -d '\n' <"$ROUTES" | grep -o '"\(GET\|PUT\|POST\|DELETE\)",[[:space:]]*"/smila[^"]*"' |
    sed 's/"\([A-Z]*\)",[[:space:]]*"\(.*\)"/\1 \2/' >"$TMP/routes"
n=$(wc -l <"$TMP/routes")
[ "$n" -ge 40 ] && ok "read $n routes from routes.c" || fail "only $n routes read from routes.c"
bad=0
checked=0
while read -r method pattern; do
    case "$pattern" in *[:*]*) ;; *) continue ;; esac
    for v in '%ff%fe' 'a%ffb'; do
        path=$(echo "$pattern" | sed "s#/[:*][A-Za-z]*#/$v#g")
        req "$method" "$path" -H 'Content-Type: application/json' -d '{}'
        checked=$((checked + 1))
        if [ "$STATUS" -lt 400 ] || [ "$STATUS" -ge 500 ] || ! json_error; then
            bad=$((bad + 1))
            fail "$method $path: status $STATUS, body $(head -c 200 "$BODY")"
        elif ! jq -e '.error.field | length > 0' "$BODY" >/dev/null; then
            bad=$((bad + 1))
            fail "$method $path: the error names no field: $(head -c 200 "$BODY")"
        fi
    done
done <"$TMP/routes"
[ "$bad" -eq 0 ] && ok "$checked requests with non-UTF-8 path parameters: 4xx JSON naming the field"
req GET /smila/jobmanager/jobs/%ff%fe
expect_error 400 INVALID_NAME "a job name of bytes that are not UTF-8"
expect_jq '.error.field == "name"' "the error names the parameter"
req GET '/smila/nothere%ff'
expect_error 404 NOT_FOUND "an unknown path with a non-UTF-8 byte"
req POST '/smila/jobmanager/buckets/%ff%fe' -d '{}'
expect_error 405 METHOD_NOT_ALLOWED "a wrong method on a path with non-UTF-8 bytes"
req GET '/smila/index/default/search?q=%ff%fe'
expect_error 400 INVALID_INPUT "a query argument that is not UTF-8"
expect_jq '.error.field == "q"' "the error names the argument"
req GET '/smila/index?%ff=1'
expect_error 400 INVALID_INPUT "a query argument name that is not UTF-8"
req GET '/smila/nothere' -H $'Host: \xff\xfe'
expect_error 404 NOT_FOUND "a Host header that is not UTF-8"
req GET /smila/
expect_status 200 "the server still answers after part A"

# ---- B: an event name over the key limit does not wedge the jobmanager
long=$(head -c 600 /dev/zero | tr '\0' 'a')
req POST "/smila/jobmanager/events/$long/begin"
expect_error 400 INVALID_INPUT "an event name of 600 bytes"
expect_jq '.error.field == "event"' "the error names the event"
req POST "/smila/jobmanager/events/a%01b/begin"
expect_error 400 INVALID_INPUT "an event name with a control character"
req POST /smila/jobmanager/events/ok-event/begin
expect_status 200 "a good event begins after the bad ones"
expect_jq '.began == true' "the event began"
req POST /smila/jobmanager/buckets/ -H 'Content-Type: application/json' \
    -d '{"name": "afterBad", "type": "recordBulks"}'
expect_status 200 "a bucket can still be defined"
req POST /smila/jobmanager/events/ok-event/complete
expect_status 200 "the event completes"

# ---- C: source names
for s in '..' '.' 'a%0ab' 'a%00b' 'a%5cb' '%2e%2e'; do
    for kind in delta visitedlinks; do
        req DELETE "/smila/importing/$kind/$s"
        expect_error 400 INVALID_INPUT "DELETE $kind source '$s'"
        req GET "/smila/importing/$kind/$s"
        expect_error 400 INVALID_INPUT "GET $kind source '$s'"
    done
done
req DELETE /smila/importing/delta/good-source
expect_status 200 "a good source name is still cleared"

req GET /smila/
expect_status 200 "the server is alive at the end"
stop_server
finish
