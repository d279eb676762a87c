#!/bin/bash
# with-s3rver.sh [--tls | --signed] COMMAND [ARGS...]: runs COMMAND beside a real S3 server,
# s3rver (npm; scripts/install-deps.sh installs it under tests/s3), on
# 127.0.0.1 at a port the kernel picks, with a data directory of its own
# under $TMPDIR.  COMMAND finds it in the environment:
#   SL_TEST_S3_ENDPOINT  http://127.0.0.1:PORT
#   SL_TEST_S3_KEY, SL_TEST_S3_SECRET  its credentials (S3RVER, S3RVER)
#   SL_TEST_S3_DIR  its data directory (the objects are files below it)
#   SL_TEST_S3_VHOST_ENDPOINT  http://s3.localhost:PORT, for virtual-host
#       requests (BUCKET.s3.localhost: curl resolves *.localhost to the
#       loopback itself; s3rver's service endpoint is "localhost")
#   SL_TEST_S3_LOG  its log: a line per request, with the path as sent
# With --tls it serves https with a certificate for 127.0.0.1 made here
# (openssl), whose CA file is SL_TEST_S3_CA.
# With --signed COMMAND talks to s3_proxy.py --verify in front of it, which
# checks every request's Signature V4 with botocore (s3rver checks only the
# key id) and logs the requests (SL_TEST_S3_PROXY_LOG); COMMAND fails when
# a signature did not match or no request was checked.
# The server is stopped when COMMAND ends; COMMAND's status is returned.
# Node.js 20 runs s3rver 3.7 with the legacy OpenSSL provider: s3rver's
# continuation tokens use a cipher OpenSSL 3 only has there.
set -u
here=$(cd "$(dirname "$0")" && pwd)
js="$here/node_modules/s3rver/bin/s3rver.js"
if [ ! -f "$js" ] || ! command -v node >/dev/null; then
    echo "with-s3rver.sh: s3rver is not installed (scripts/install-deps.sh runs npm ci in tests/s3)" >&2
    exit 1
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/s3rver.XXXXXX")
scheme=http
tls=()
signed=""
if [ "${1:-}" = --signed ]; then
    shift
    signed=1
elif [ "${1:-}" = --tls ]; then
    shift
    scheme=https
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=IP:127.0.0.1" -keyout "$dir/key.pem" -out "$dir/cert.pem" \
        >/dev/null 2>&1 || { echo "with-s3rver.sh: openssl could not make a certificate" >&2; exit 1; }
    tls=(--key "$dir/key.pem" --cert "$dir/cert.pem")
    export SL_TEST_S3_CA="$dir/cert.pem"
fi
# keep-dirs.js: s3rver removes empty directories racing with PUTs there
NODE_OPTIONS=--openssl-legacy-provider node -r "$here/keep-dirs.js" "$js" -a 127.0.0.1 -p 0 -d "$dir/data" --service-endpoint localhost "${tls[@]}" \
    >"$dir/log" 2>&1 &
pid=$!
stop() {
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap stop EXIT
port=""
for _ in $(seq 1 200); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/log" | head -1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
done
if [ -z "$port" ]; then
    echo "with-s3rver.sh: s3rver did not start: $(head -c 2000 "$dir/log")" >&2
    exit 1
fi
export SL_TEST_S3_ENDPOINT="$scheme://127.0.0.1:$port"
export SL_TEST_S3_KEY=S3RVER SL_TEST_S3_SECRET=S3RVER
export SL_TEST_S3_DIR="$dir/data"
export SL_TEST_S3_VHOST_ENDPOINT="$scheme://s3.localhost:$port"
export SL_TEST_S3_LOG="$dir/log"
if [ -z "$signed" ]; then
    "$@"
    exit
fi
export SL_TEST_S3_PROXY_LOG="$dir/proxy.log"
: >"$SL_TEST_S3_PROXY_LOG"
# botocore: Debian's python3-botocore, or the python3 on PATH has its own
py=python3
python3 -c 'import botocore' 2>/dev/null || py=/usr/bin/python3
"$py" "$here/s3_proxy.py" --upstream "$SL_TEST_S3_ENDPOINT" --verify S3RVER:S3RVER \
    --log "$SL_TEST_S3_PROXY_LOG" >"$dir/proxy.port" 2>"$dir/proxy.err" &
proxy=$!
for _ in $(seq 1 200); do [ -s "$dir/proxy.port" ] && break; sleep 0.05; done
pport=$(head -1 "$dir/proxy.port")
if [ -z "$pport" ]; then
    echo "with-s3rver.sh: s3_proxy.py did not start: $(cat "$dir/proxy.err")" >&2
    kill "$proxy" 2>/dev/null
    exit 1
fi
export SL_TEST_S3_ENDPOINT="http://127.0.0.1:$pport"
export SL_TEST_S3_VHOST_ENDPOINT="http://s3.localhost:$pport"
"$@"
rc=$?
kill "$proxy" 2>/dev/null
wait "$proxy" 2>/dev/null
checked=$(grep -c ' sig=ok$' "$SL_TEST_S3_PROXY_LOG")
bad=$(grep -c '^BADSIG' "$SL_TEST_S3_PROXY_LOG")
if [ "$bad" != 0 ] || [ "$checked" = 0 ] || [ -s "$dir/proxy.err" ]; then
    echo "with-s3rver.sh --signed: $bad signatures did not match, $checked matched:" >&2
    grep '^BADSIG' "$SL_TEST_S3_PROXY_LOG" | head -5 >&2
    head -c 2000 "$dir/proxy.err" >&2
    exit 1
fi
echo "with-s3rver.sh --signed: $checked signatures checked, every one matched"
exit $rc
