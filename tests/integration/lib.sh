# Shared helpers for the integration tests: start the real `sluice serve`
# on a free loopback port with a temporary data dir, send requests with
# curl, check statuses and JSON bodies with jq.  Source it from bash.
set -euo pipefail

SLUICE=${SLUICE:?set SLUICE to the sluice binary}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sluice-it.XXXXXX")
SERVER_PID=""
BASE=""
STATUS=""
BODY="$TMP/body"
HEADERS="$TMP/headers"
FAILS=0
PASSES=0

# cleanup [RC]: a trap that runs other commands first passes the status
# it was called with: trap 'rc=$?; kill ...; cleanup $rc' EXIT.
cleanup() {
    local rc=${1:-$?}
    if [ "$rc" -ne 0 ] && [ -s "$TMP/server.log" ]; then
        # what the server said last, before the evidence is removed
        echo "# exit status $rc; the last lines of the server's log:" >&2
        tail -n 40 "$TMP/server.log" | sed 's/^/#   /' >&2
    fi
    if [ "$rc" -ne 0 ] && [ -n "${SL_TEST_KEEP:-}" ]; then
        # SL_TEST_KEEP=DIR: keep a failed test's files for a post-mortem
        mkdir -p "$SL_TEST_KEEP" && cp -a "$TMP" "$SL_TEST_KEEP/" 2>/dev/null || true
        echo "# kept in $SL_TEST_KEEP/$(basename "$TMP")" >&2
    fi
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
    chmod -R u+w "$TMP" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

# skip WHY: the test cannot run here (it needs root, a mount, namespaces):
# exit 77, which ctest shows as skipped; with CI=true (CI runs as root and
# must run it) a failure instead.
skip() {
    if [ "${CI:-}" = true ]; then
        echo "FAIL - $1 (CI runs as root and must run this test)"
        exit 1
    fi
    echo "SKIP: $1"
    exit 77
}

# s3_request METHOD PATH: a signed request to the S3 server of
# tests/s3/with-s3rver.sh (its CA with --tls); prints the HTTP status.
s3_request() {
    curl -sS -o /dev/null -w '%{http_code}' -X "$1" ${SL_TEST_S3_CA:+--cacert "$SL_TEST_S3_CA"} \
        --aws-sigv4 "aws:amz:us-east-1:s3" --user "$SL_TEST_S3_KEY:$SL_TEST_S3_SECRET" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$SL_TEST_S3_ENDPOINT/$2"
}

# write_config FILE [jq-filter applied to the defaults]
# With SLUICE_TEST_ON_S3=1 (and the S3 server of tests/s3/with-s3rver.sh)
# the object store is that server's bucket "sluice-it" (made here).
write_config() {
    local file=$1 filter=${2:-.}
    jq "$filter" <<'JSON' >"$file"
{"listen": "127.0.0.1:0", "dataDir": "./data", "log": {"level": "info"},
 "http": {"threads": 4, "shutdownGraceSeconds": 10}}
JSON
    if [ "${SLUICE_TEST_ON_S3:-}" = 1 ]; then
        s3_request PUT sluice-it >/dev/null
        jq --arg e "$SL_TEST_S3_ENDPOINT" --arg k "$SL_TEST_S3_KEY" --arg s "$SL_TEST_S3_SECRET" \
            --arg p "$(basename "$TMP")/" \
            '.objectstore = {backend: "s3", s3: {endpoint: $e, bucket: "sluice-it", prefix: $p,
                accessKeyId: $k, secretAccessKey: $s}}' "$file" >"$file.s3"
        mv "$file.s3" "$file"
    fi
}

# start_server [serve args...]: starts the server, sets SERVER_PID and BASE.
start_server() {
    local log="$TMP/server.log" i port
    : >"$log"
    "$SLUICE" serve "$@" 2>"$log" &
    SERVER_PID=$!
    for i in $(seq 1 200); do
        port=$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\)/.*|\1|p' "$log" | head -1)
        if [ -n "$port" ]; then
            BASE="http://127.0.0.1:$port"
            if [ "${SLUICE_TEST_ON_S3:-}" = 1 ] && ! grep -q "object store: S3 at" "$log"; then
                echo "SLUICE_TEST_ON_S3: the server does not store on S3" >&2
                return 1
            fi
            return 0
        fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "server exited early:" >&2
            cat "$log" >&2
            return 1
        fi
        sleep 0.05
    done
    echo "server did not start:" >&2
    cat "$log" >&2
    return 1
}

# stop_server: SIGTERM, wait, require exit status 0.
stop_server() {
    local rc=0
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID" || rc=$?
    SERVER_PID=""
    if [ "$rc" -ne 0 ]; then
        echo "server exited with status $rc" >&2
        cat "$TMP/server.log" >&2
        return 1
    fi
}

server_peak_rss_kib() {
    sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$SERVER_PID/status"
}

# req METHOD PATH [curl args...]: sets STATUS, body in $BODY.
req() {
    local method=$1 path=$2
    shift 2
    local verb=(-X "$method")
    if [ "$method" = HEAD ]; then verb=(-I); fi
    STATUS=$(curl -sS --path-as-is -o "$BODY" -D "$HEADERS" -w '%{http_code}' \
        "${verb[@]}" "$@" "$BASE$path") || STATUS="curl-failed"
}

ok() { PASSES=$((PASSES + 1)); echo "ok - $*"; }
fail() { FAILS=$((FAILS + 1)); echo "FAIL - $*"; }

# expect_status WANT DESCRIPTION
expect_status() {
    if [ "$STATUS" = "$1" ]; then
        ok "$2 (status $1)"
    else
        fail "$2: status $STATUS, want $1; body: $(head -c 400 "$BODY")"
    fi
}

# expect_jq FILTER DESCRIPTION: the filter must print true for the body.
expect_jq() {
    if [ "$(jq -e "$1" "$BODY" 2>/dev/null)" = "true" ]; then
        ok "$2"
    else
        fail "$2: '$1' is not true for body: $(head -c 400 "$BODY")"
    fi
}

# expect_error STATUS CODE DESCRIPTION: the error body of docs/rest-api.md with that code.
expect_error() {
    expect_status "$1" "$3"
    expect_jq ".error.code == \"$2\" and (.error.message | length > 0)" \
        "$3 (error body code $2)"
}

finish() {
    echo "$PASSES passed, $FAILS failed"
    [ "$FAILS" -eq 0 ]
}
