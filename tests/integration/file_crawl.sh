#!/bin/bash
# The built-in fileCrawler and fileFetcher in-process (sluice-test serve):
# a runOnce job crawls a generated tree of a few hundred files in nested
# folders (fileCrawler -> itself for sub-directories, -> fileFetcher for
# files) into the persistent bucket "fetched".  Every regular file must
# come out exactly once with its size and a fileContent attachment of that
# length; the FIFO is skipped; the run counters add up.  The workflow and
# bucket are in tests/integration/file_crawl/; the job is written below
# because it names the generated tree.
SLUICE=${SLUICE_TEST:?set SLUICE_TEST to the sluice-test binary}
. "$(dirname "$0")/lib.sh"

JM="$TMP/jm"
mkdir -p "$JM"
cp -r "$(dirname "$0")/file_crawl/." "$JM/"

# ---- the tree: 4 x 3 x 2 folders, files of assorted sizes, an empty
# file, a unicode name, a FIFO.
mkdir -p "$TMP/tree"
TREE=$(realpath "$TMP/tree")
n=0
for a in 0 1 2 3; do
    for b in 0 1 2; do
        for c in 0 1; do
            d="$TREE/a$a/b$b/c$c"
            mkdir -p "$d"
            for i in $(seq 1 10); do
                n=$((n + 1))
                head -c $(((n * 7919) % 20000)) /dev/urandom >"$d/f$i.dat"
            done
        done
        head -c 100 /dev/urandom >"$TREE/a$a/b$b/top$b.txt"
    done
done
for i in $(seq 1 40); do
    echo "root file $i" >"$TREE/r$i.txt"
done
: >"$TREE/empty.txt"
echo unicode >"$TREE/a0/ünïcödé-日本.txt"
mkfifo "$TREE/a1/fifo"
FILES=$(find "$TREE" -type f | wc -l)
DIRS=$(find "$TREE" -type d | wc -l)

jq -n --arg root "$TREE" '{"jobs": [{"name": "crawlFs", "workflow": "fileCrawling",
  "parameters": {"dataSource": "fs", "rootFolder": $root, "maxFilesPerBulk": 25, "entriesPerTask": 0}}]}' \
    >"$JM/jobs.json"

write_config "$TMP/config.json" ".jobmanager = {\"configDir\": \"$JM\", \"workflowsDir\": \"$JM/workflows\"} | .workers = {\"threads\": 2}"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"
req PUT /smila/store/persist/
expect_status 201 "create the persistent store"
req GET /smila/jobmanager/workers/fileCrawler/
expect_jq '.name == "fileCrawler" and .taskGenerator == "runOnceTrigger"' "fileCrawler is built in"

req POST /smila/jobmanager/jobs/crawlFs/ -d '{"mode": "runOnce"}'
expect_status 200 "start crawlFs"
RUN=$(jq -r .jobId "$BODY")
for i in $(seq 1 600); do
    req GET "/smila/jobmanager/jobs/crawlFs/$RUN/"
    case "$(jq -r .state "$BODY")" in
    SUCCEEDED | FAILED | CANCELED) break ;;
    esac
    sleep 0.1
done
expect_jq '.state == "SUCCEEDED"' "crawlFs SUCCEEDED"
cp "$BODY" "$TMP/run.json"
expect_jq ".worker[\"0_fileCrawler\"][\"files.records\"] == $FILES and .worker[\"0_fileCrawler\"][\"output.filesToCrawl.recordCount\"] == $FILES" "crawler wrote $FILES file records"
expect_jq ".worker[\"0_fileCrawler\"][\"directories.crawled\"] == $DIRS and .worker[\"0_fileCrawler\"][\"directories.records\"] == $DIRS - 1" "crawler listed $DIRS directories, one task each (entriesPerTask 0)"
expect_jq '.worker["0_fileCrawler"]["files.skipped.special"] == 1' "the FIFO is skipped"
expect_jq '.worker["0_fileCrawler"]["output.filesToCrawl.dataObjectCount"] >= 13' "files split into bulks of at most 25"
expect_jq ".worker[\"1_fileFetcher\"][\"files.fetched\"] == $FILES and .worker[\"1_fileFetcher\"][\"output.files.recordCount\"] == $FILES" "fetcher wrote $FILES records"
expect_jq ".worker[\"1_fileFetcher\"][\"files.bytes\"] == $(find "$TREE" -type f -printf '%s\n' | awk '{s += $1} END {print s}')" "fetcher read every byte"

# ---- every file exactly once, with its size and content length
req GET "/smila/store/persist/?prefix=fetched/&limit=100000"
expect_jq '.objectCount >= 1' "output bulks in the persistent bucket"
: >"$TMP/got.jsonl"
for id in $(jq -r '.objects[].id' "$BODY"); do
    curl -sS -o "$TMP/bulk" "$BASE/smila/store/persist/$id"
    "$SLUICE" bulk cat "$TMP/bulk" >>"$TMP/got.jsonl"
done
jq -r '[._recordid, .filePath, .fileSize, ._attachments.fileContent.size, ._source] | @tsv' \
    "$TMP/got.jsonl" | sort >"$TMP/got.tsv"
find "$TREE" -type f -printf '%p\t%p\t%s\t%s\tfs\n' | sort >"$TMP/want.tsv"
if cmp -s "$TMP/got.tsv" "$TMP/want.tsv"; then
    ok "all $FILES files exactly once, with size and content length"
else
    fail "records differ: $(diff "$TMP/want.tsv" "$TMP/got.tsv" | head -10)"
fi

stop_server && ok "server stopped" || fail "server stop"
finish
