#!/bin/bash
# A file import on the S3 object store (issue 28), run through
# tests/s3/with-s3rver.sh (an S3 server on 127.0.0.1):
# 1. a start with a bucket that is not there, or a key the server does
#    not know, is refused with a message naming it;
# 2. the repository's fileCrawling into indexUpdate with every bucket on
#    S3 (objectstore.backend "s3", stores as prefixes of one bucket): the
#    run SUCCEEDS, the index holds every file and archive element, the
#    bulks are S3 objects (s3rver's files) and the data directory has no
#    store;
# 3. the same tree imported with the filesystem store gives the same
#    index (ids and text digests);
# 4. a changed, an added and a deleted file: the re-crawl on S3 brings
#    the index to the new tree.
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
: "${SL_TEST_S3_ENDPOINT:?run me through tests/s3/with-s3rver.sh}"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/import_lib.sh"

T="$TMP/tree"
mkdir -p "$T"
T=$(realpath "$T")
python3 - "$T" <<'PY'
import os, sys
root = sys.argv[1]
for i in range(240):
    d = os.path.join(root, "d%02d" % (i % 12), "e%d" % (i % 3))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%03d.txt" % i), "w") as f:
        f.write("file %d of the s3 import, word w%d\n" % (i, i) * 20)
PY
cp "$(dirname "$0")/../docs/sample.pdf" "$(dirname "$0")/../docs/sample.docx" "$T/"
(cd "$T/d00" && zip -qr "$T/pack.zip" e0)

expected() {
    { find "$T" -type f; unzip -Z1 "$T/pack.zip" | grep -v '/$' | sed "s|^|$T/pack.zip!/|"; } |
        LC_ALL=C sort
}

s3_config() { # FILE BUCKET [KEY]
    import_config "$1" ".objectstore = {backend: \"s3\", s3: {endpoint: \"$SL_TEST_S3_ENDPOINT\",
        bucket: \"$2\", prefix: \"sluice/\", accessKeyId: \"${3:-$SL_TEST_S3_KEY}\",
        secretAccessKey: \"$SL_TEST_S3_SECRET\", partSizeMB: 5}}"
}

# ---- 1. refused at start
s3_config "$TMP/nobucket.json" no-such-bucket
rc=0; timeout 30 "$SLUICE" serve --config "$TMP/nobucket.json" --data-dir "$TMP/d0" >"$TMP/out" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "NoSuchBucket" "$TMP/out" &&
    ok "a start with a missing bucket is refused, naming it" || fail "missing bucket: rc $rc, $(tail -3 "$TMP/out")"
[ "$(s3_request PUT sluice-data)" = 200 ] && ok "bucket sluice-data made" || fail "cannot make the bucket"
s3_config "$TMP/badkey.json" sluice-data NOT-A-KEY
rc=0; timeout 30 "$SLUICE" serve --config "$TMP/badkey.json" --data-dir "$TMP/d0" >"$TMP/out" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "check the credentials" "$TMP/out" &&
    ok "a start with an unknown key is refused, saying so" || fail "bad key: rc $rc, $(tail -3 "$TMP/out")"

# ---- 2. the import on S3
s3_config "$TMP/config.json" sluice-data
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
grep -q "object store: S3 at" "$TMP/server.log" && ok "the server says it stores on S3" ||
    fail "no S3 line in the log"
define_crawl crawlS3 "$T" s3src
if crawl crawlS3; then ok "the crawl on S3 SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
snapshot "$TMP/s3.snap"
expected >"$TMP/want"
ids "$TMP/s3.snap" | LC_ALL=C sort >"$TMP/got"
diff "$TMP/want" "$TMP/got" >"$TMP/diff" && ok "every file and element is in the index ($(wc -l <"$TMP/got"))" ||
    fail "index ids differ: $(head -c 600 "$TMP/diff")"
# (s3rver logs each object it stores: the bulks went through it)
puts=$(grep -c 'Stored object "sluice/.*" in bucket "sluice-data"' "$SL_TEST_S3_DIR/../log" || true)
[ "$puts" -ge 4 ] && ok "the bulks went through S3 ($puts objects stored)" ||
    fail "S3 objects stored: $puts"
[ ! -e "$TMP/data/store" ] && ok "the data directory holds no store" || fail "a store under dataDir"
stop_server

# ---- 3. the same import on the filesystem store
import_config "$TMP/fs.json"
start_server --config "$TMP/fs.json" --data-dir "$TMP/fsdata"
define_crawl crawlFs "$T" s3src
if crawl crawlFs; then ok "the crawl on the filesystem SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
snapshot "$TMP/fs.snap"
diff "$TMP/fs.snap" "$TMP/s3.snap" >"$TMP/diff" && ok "the index equals the filesystem store's" ||
    fail "indexes differ: $(head -c 600 "$TMP/diff")"
stop_server

# ---- 4. changes, re-crawled on S3
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
echo "changed text, word zulu" >"$T/d01/e1/f013.txt"
echo "a new file, word yankee" >"$T/d02/new.txt"
rm "$T/d03/e0/f003.txt"
if crawl crawlS3; then ok "the re-crawl on S3 SUCCEEDED"; else fail "crawl: $(cat "$TMP/crawl.err")"; fi
wait_indexed
snapshot "$TMP/s3b.snap"
expected >"$TMP/want"
ids "$TMP/s3b.snap" | LC_ALL=C sort >"$TMP/got"
diff "$TMP/want" "$TMP/got" >"$TMP/diff" && ok "the index follows the tree (one added, one deleted)" ||
    fail "index ids differ: $(head -c 600 "$TMP/diff")"
"$SLUICE" search --server "$BASE" zulu >"$TMP/hits" 2>/dev/null || true
grep -q "f013.txt" "$TMP/hits" && ok "the changed file has its new text" || fail "zulu: $(cat "$TMP/hits")"
finish
