#!/bin/bash
# The S3 object store over https (issue 28), run through
# `tests/s3/with-s3rver.sh --tls` (a certificate for 127.0.0.1 that no
# system CA signed):
# 1. without objectstore.s3.caFile the start is refused, saying why (the
#    certificate cannot be verified);
# 2. with the certificate as caFile the server starts and a crawl on S3
#    indexes every file.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
: "${SL_TEST_S3_CA:?run me through tests/s3/with-s3rver.sh --tls}"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

T="$TMP/tree"
mkdir -p "$T"
T=$(realpath "$T")
for i in $(seq 1 20); do echo "secure file $i" >"$T/f$i.txt"; done
s3_request PUT sluice-tls >/dev/null
s3cfg() { # FILE CAFILE
    import_config "$1" ".objectstore = {backend: \"s3\", s3: {endpoint: \"$SL_TEST_S3_ENDPOINT\",
        bucket: \"sluice-tls\", accessKeyId: \"$SL_TEST_S3_KEY\", secretAccessKey: \"$SL_TEST_S3_SECRET\",
        caFile: \"$2\", maxRetries: 1}}"
}

s3cfg "$TMP/noca.json" ""
rc=0; timeout 30 "$SLUICE" serve --config "$TMP/noca.json" --data-dir "$TMP/d0" >"$TMP/out" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -qi "certificate" "$TMP/out" &&
    ok "without caFile the start is refused: the certificate cannot be verified" ||
    fail "no caFile: rc $rc, $(tail -3 "$TMP/out")"

s3cfg "$TMP/config.json" "$SL_TEST_S3_CA"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
grep -q "object store: S3 at https://" "$TMP/server.log" && ok "the server stores on S3 over https" ||
    fail "no https S3 line in the log"
define_crawl crawlTls "$T" tls
if crawl crawlTls; then ok "the crawl over https SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
req GET /smila/index/default/
expect_jq '.documentCount == 20' "the index holds the 20 files"
finish
