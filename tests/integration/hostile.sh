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
# D: a 40 KB or 100 KB path, query or header: 414/431 with the JSON error
#    body; malformed HTTP (a Content-Length that is no number or over
#    2^64, bad chunk syntax, an unknown method, a broken request line) is
#    answered with the JSON error body too, and the server goes on;
#    pipelined requests are each answered.
# E: 300 idle half-open connections from 127.0.0.2 take at most
#    http.maxConnectionsPerIp slots and are closed after
#    http.requestTimeoutSeconds; a request from 127.0.0.1 is answered at
#    once meanwhile.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"

ROUTES="$(dirname "$0")/../../http/routes.c"

write_config "$TMP/config.json" \
    '.http.requestTimeoutSeconds = 2 | .http.maxConnectionsPerIp = 16'
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
        elif ! jq -e --arg names "$(echo "$pattern" | grep -o '[:*][A-Za-z]*' | tr -d ':*' | tr '\n' ' ')" \
            '.error.field as $f | $names | split(" ") | index($f) != null' "$BODY" >/dev/null; then
            bad=$((bad + 1))
            fail "$method $path: the error does not name a parameter of $pattern: $(head -c 200 "$BODY")"
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

# ---- D: oversized heads get the JSON body; framing errors do not stop us
a40k=$(head -c 40000 /dev/zero | tr '\0' 'a')
req GET "/smila/$a40k"
expect_error 414 URI_TOO_LONG "a 40 KB path"
req GET "/smila/?x=$a40k"
expect_error 414 URI_TOO_LONG "a 40 KB query"
req GET /smila/ -H "X-Big: $a40k"
expect_error 431 HEADERS_TOO_LARGE "a 40 KB header"
a100k=$(head -c 100000 /dev/zero | tr '\0' 'a')
req GET "/smila/$a100k"
expect_error 414 URI_TOO_LONG "a 100 KB path (past what is read)"
req GET /smila/ -H "X-Big: $a100k"
expect_error 431 HEADERS_TOO_LARGE "a 100 KB header (past what is read)"
# raw PORT REQUEST: "STATUS CODE" of each reply to a raw request (CODE:
# the error body's code, "-" for another JSON body, "nojson" otherwise).
raw() {
    python3 - "$1" "$2" <<'PY'
import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(sys.argv[2].encode("latin-1").decode("unicode_escape").encode("latin-1"))
out = b""
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
except OSError:
    pass
res = []
while out.startswith(b"HTTP/1.1 "):
    head, _, rest = out.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    hdr = {k.strip().lower(): v.strip() for k, _, v in (l.partition(b":") for l in lines[1:])}
    n = int(hdr.get(b"content-length", b"0"))
    body, out = rest[:n], rest[n:]
    try:
        j = json.loads(body)
        code = j["error"]["code"] if "error" in j else "-"
    except Exception:
        code = "nojson"
    res.append("%s %s" % (lines[0].split(b" ")[1].decode(), code))
print(" ".join(res) if res else "none")
PY
}
port=${BASE##*:}
# rawcheck REQUEST EXPECTED WHAT
rawcheck() {
    st=$(raw "$port" "$1")
    [ "$st" = "$2" ] && ok "$3: $2" || fail "$3 gave '$st', not '$2'"
}
rawcheck 'POST /smila/jobmanager/buckets HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n' \
    "400 INVALID_INPUT" "a Content-Length that is no number"
rawcheck 'POST /smila/jobmanager/buckets HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n' \
    "413 TOO_LARGE" "a Content-Length over 2^64"
rawcheck 'POST /smila/jobmanager/buckets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n' \
    "400 INVALID_INPUT" "bad chunk syntax"
rawcheck 'BREW /smila/ HTTP/1.1\r\nHost: x\r\n\r\n' "400 INVALID_INPUT" "an unknown method"
rawcheck 'GET /smila/ HTTP/9\r\nHost: x\r\n\r\n' "400 INVALID_INPUT" "a broken request line"
rawcheck 'GET /smila/ HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n' "400 INVALID_INPUT" "a header line without a colon"
rawcheck 'GET /smila/ HTTP/1.1\r\nHost: x\r\n\r\nGET /smila/nothere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' \
    "200 - 404 NOT_FOUND" "two pipelined requests"
rawcheck 'GET /smila/ HTTP/1.0\r\n\r\n' "200 -" "HTTP/1.0 without Host"
rawcheck "GET /smila/ HTTP/1.1\\r\\nHost: x\\r\\n$(printf 'a: b\\r\\n%.0s' $(seq 1 1100))\\r\\n" \
    "431 HEADERS_TOO_LARGE" "1,100 short headers"
rawcheck 'PUT /smila/store/s/o HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 999999999999\r\n\r\n' \
    "413 TOO_LARGE" "Expect: 100-continue with a body over the limit (no 100 first)"
rawcheck 'HEAD /smila/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' "200 nojson" "HEAD (no body)"
req GET /smila/
expect_status 200 "the server answers after the framing errors"

# ---- E: idle half-open connections from one address
python3 - "$port" >"$TMP/idle.out" 2>&1 <<'PY' &
import socket, sys, time
port = int(sys.argv[1])
held = []
for i in range(300):
    try:
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /smila/ HTTP/1.1\r\nHost: x\r\n")  # never ends
        held.append(s)
    except OSError:
        pass
print("opened", len(held), flush=True)
time.sleep(1.0)
t0 = time.time()
closed = 0
for s in held:
    try:
        s.settimeout(max(0.1, 6 - (time.time() - t0)))
        s.recv(100)
        closed += 1  # b"" (closed) or a reply: the slot is free again
    except socket.timeout:
        pass  # still held by the server
    except OSError:
        closed += 1  # reset: refused over the per-address limit
print("closed", closed, "of", len(held), flush=True)
PY
idle=$!
for i in $(seq 1 50); do grep -q opened "$TMP/idle.out" && break; sleep 0.1; done
t0=$(date +%s%N)
req GET /smila/ --max-time 3
t1=$(date +%s%N)
expect_status 200 "a request from 127.0.0.1 while 300 idle connections from 127.0.0.2 are held"
[ $(( (t1 - t0) / 1000000 )) -lt 2000 ] && ok "answered in $(( (t1 - t0) / 1000000 )) ms" \
    || fail "answered only after $(( (t1 - t0) / 1000000 )) ms"
wait "$idle"
cat "$TMP/idle.out"
read -r _ closed _ held < <(grep closed "$TMP/idle.out")
[ "${held:-0}" -gt 0 ] && [ "$closed" = "$held" ] \
    && ok "the server closed all $held idle connections after the timeout" \
    || fail "idle connections: $(cat "$TMP/idle.out")"
grep -q "opened" "$TMP/idle.out" && ok "$(grep opened "$TMP/idle.out") (connects beyond the per-address limit are refused or closed)"

req GET /smila/
expect_status 200 "the server is alive at the end"
stop_server

# ---- F: a handler that works longer than requestTimeoutSeconds (2 s)
# still sends its reply: the idle timeout is for clients, not for us
SLUICE_TEST_DELAY=http.handler=3000 start_server --config "$TMP/config.json" --data-dir "$TMP/data"
req GET /smila/
expect_status 200 "a reply that took 3 s with requestTimeoutSeconds 2"
stop_server
finish
