#!/bin/bash
# Definitions that catch mistakes (docs/jobmanager-definitions.md "Checks
# that catch mistakes"), against the real server with the repository's
# config/ and workflows/: every case seen accepted before (typos in job
# parameters, nested ones included, a workflow whose action reads a bucket
# nothing writes, a jobToPushTo naming no job, a bad regex, "10k" as a
# size) is a 400 naming the field, with the closest declared name; the
# same checks on predefined files at start; a worker that declares "any
# further parameters" takes unknown keys.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

write_config "$TMP/config.json" ".jobmanager = {\"configDir\": \"$ROOT/config\", \"workflowsDir\": \"$ROOT/workflows\"}"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

# crawl_job PARAMS-JSON: POST a fileCrawling job "c" with the base
# parameters of config/jobs.json's crawlFilesystem, @p merged in.
crawl_job() {
    local params
    params=$(jq -cn --argjson extra "$1" \
        '{dataSource: "file", rootFolder: "/tmp", jobToPushTo: "indexUpdate"} + $extra')
    req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
        -d "{\"name\": \"c\", \"workflow\": \"fileCrawling\", \"parameters\": $params}"
}

# The predefined definitions loaded: the checks did not break them.
req GET /smila/jobmanager/jobs/crawlFilesystem/
expect_status 200 "predefined crawlFilesystem still loads"
req GET /smila/jobmanager/jobs/crawlWeb/
expect_status 200 "predefined crawlWeb still loads"

# 1. Nested typos in filters, as reported.
crawl_job '{"filters": {"maxFileSise": 10, "filePaterns": {"exclude": ["\\.gz$"]}}}'
expect_error 400 INVALID_DEFINITION "filters.maxFileSise is refused"
expect_jq '.error.field == "parameters.filters.maxFileSise"' "field names filters.maxFileSise"
expect_jq '.error.message | contains("did you mean '"'"'filters.maxFileSize'"'"'?")' \
    "suggests filters.maxFileSize"
crawl_job '{"filters": {"filePaterns": {"exclude": ["\\.gz$"]}}}'
expect_error 400 INVALID_DEFINITION "filters.filePaterns is refused"
expect_jq '.error.field == "parameters.filters.filePaterns" and (.error.message | contains("filters.filePatterns"))' \
    "field filters.filePaterns, suggests filters.filePatterns"
crawl_job '{"filters": {"filePatterns": {"exclud": ["\\.gz$"]}}}'
expect_jq '.error.field == "parameters.filters.filePatterns.exclud" and (.error.message | contains("filters.filePatterns.exclude"))' \
    "third level: filters.filePatterns.exclud"

# A dataSource the delta service would refuse at the run's first call.
crawl_job '{"dataSource": "sites/docs"}'
expect_error 400 INVALID_DEFINITION "a dataSource with '/' is refused"
expect_jq '.error.field == "parameters.dataSource"' "field parameters.dataSource"

# 2. Top-level typos.
crawl_job '{"deltaImportStrategie": "full"}'
expect_error 400 INVALID_DEFINITION "deltaImportStrategie is refused"
expect_jq '.error.field == "parameters.deltaImportStrategie" and (.error.message | contains("did you mean '"'"'deltaImportStrategy'"'"'?"))' \
    "suggests deltaImportStrategy"
crawl_job '{"maxFilesPerBulck": 10}'
expect_jq '.error.field == "parameters.maxFilesPerBulck" and (.error.message | contains("did you mean '"'"'maxFilesPerBulk'"'"'?"))' \
    "suggests maxFilesPerBulk"
crawl_job '{"fileCrawler.maxFilesPerBulck": 10}'
expect_jq '.error.field == "parameters.fileCrawler.maxFilesPerBulck" and (.error.message | contains("did you mean '"'"'fileCrawler.maxFilesPerBulk'"'"'?"))' \
    "worker-prefixed key: suggests fileCrawler.maxFilesPerBulk"
crawl_job '{"somethingElse": 1}'
expect_error 400 INVALID_DEFINITION "a key no worker declares is refused"
expect_jq '(.error.message | contains("did you mean")) | not' "no suggestion when nothing is close"

# 3. jobToPushTo must name a defined job (running is checked at start).
crawl_job '{"jobToPushTo": "indexUpdat"}'
expect_error 400 INVALID_DEFINITION "jobToPushTo naming no job is refused"
expect_jq '.error.field == "parameters.jobToPushTo" and (.error.message | contains("did you mean '"'"'indexUpdate'"'"'?"))' \
    "field jobToPushTo, suggests indexUpdate"

# 4. Semantic checks of the worker at definition time.
crawl_job '{"filters": {"filePatterns": {"exclude": ["(unclosed"]}}}'
expect_error 400 INVALID_DEFINITION "a bad regex is refused at definition"
expect_jq '.error.field == "parameters.filters.filePatterns.exclude[0]" and (.error.message | contains("regular expression"))' \
    "field names the regex element"
crawl_job '{"filters": {"maxFileSize": "10k"}}'
expect_error 400 INVALID_DEFINITION "maxFileSize 10k is refused at definition"
expect_jq '.error.field == "parameters.filters.maxFileSize" and (.error.message | contains("10k"))' \
    "field names filters.maxFileSize"
crawl_job '{"maxFilesPerBulk": 0}'
expect_jq '.error.field == "parameters.maxFilesPerBulk"' "maxFilesPerBulk below its minimum"
crawl_job '{"filters": {"followSymbolicLinks": "yes"}}'
expect_jq '.error.field == "parameters.filters.followSymbolicLinks" and (.error.message | contains("boolean"))' \
    "a boolean that is not one"

# A correct job with every kind of key still goes in.
crawl_job '{"deltaImportStrategy": "full", "maxFilesPerBulk": "100", "tempStore": "temp", "fileCrawler.entriesPerTask": 10, "filters": {"maxFileSize": 104857600, "followSymbolicLinks": false, "filePatterns": {"include": [], "exclude": ["^\\."]}}, "mapping": {"fileName": "title"}}'
expect_status 200 "a correct job is accepted"

# 5. A workflow whose action reads a bucket nothing writes.
req POST /smila/jobmanager/workflows/ -H 'Content-Type: application/json' -d '{
  "name": "orphanRead", "modes": ["runOnce"], "parameters": {"tempStore": "temp"},
  "startAction": {"worker": "fileCrawler", "input": {"directoriesToCrawl": "dirs"},
                  "output": {"directoriesToCrawl": "dirs", "filesToCrawl": "files"}},
  "actions": [{"worker": "fileFetcher", "input": {"filesToFetch": "fetchMe"},
               "output": {"files": "fetched"}}]}'
expect_error 400 INVALID_DEFINITION "an input bucket nothing writes is refused"
expect_jq '.error.field == "actions[0].input.filesToFetch" and (.error.message | contains("fileFetcher")) and (.error.message | contains("fetchMe"))' \
    "names the action, its worker and the bucket"
req POST /smila/jobmanager/workflows/ -H 'Content-Type: application/json' -d '{
  "name": "typoWf", "parameters": {"tempStore": "temp", "tmpStore": "x"},
  "startAction": {"worker": "fileCrawler", "input": {"directoriesToCrawl": "dirs"},
                  "output": {"directoriesToCrawl": "dirs", "filesToCrawl": "files"}},
  "actions": [{"worker": "fileFetcher", "parameters": {"maxFileSise": 1},
               "input": {"filesToFetch": "files"}, "output": {"files": "fetched"}}]}'
expect_jq '.error.field == "parameters.tmpStore" and (.error.message | contains("tempStore"))' \
    "workflow parameters: tmpStore suggests tempStore"
req POST /smila/jobmanager/workflows/ -H 'Content-Type: application/json' -d '{
  "name": "typoWf", "parameters": {"tempStore": "temp"},
  "startAction": {"worker": "fileCrawler", "input": {"directoriesToCrawl": "dirs"},
                  "output": {"directoriesToCrawl": "dirs", "filesToCrawl": "files"}},
  "actions": [{"worker": "fileFetcher", "parameters": {"maxFileSise": 1},
               "input": {"filesToFetch": "files"}, "output": {"files": "fetched"}}]}'
expect_jq '.error.field == "actions[0].parameters.maxFileSise" and (.error.message | contains("action 1 (fileFetcher)")) and (.error.message | contains("maxFileSize"))' \
    "action parameters: checked against that worker"
stop_server

# 6. Predefined files with mistakes: logged with file, entity and field;
# the rest loads.  A worker declaring "<...>" takes any key.
CFG="$TMP/cfg"
mkdir -p "$CFG/workflows"
cp "$ROOT"/workflows/*.json "$CFG/workflows/"
cat >"$CFG/workers.json" <<'JSON'
{"workers": [
  {"name": "pipelet", "parameters": [{"name": "<any>", "optional": true, "type": "any"}],
   "input": [{"name": "in", "type": "recordBulks"}]},
  {"name": "strict", "parameters": [{"name": "level", "optional": true, "type": "integer"}],
   "input": [{"name": "in", "type": "recordBulks"}]}]}
JSON
cat >"$CFG/workflows/zz_pipelets.json" <<'JSON'
{"workflows": [
  {"name": "viaPipelet", "parameters": {"tempStore": "temp"},
   "startAction": {"worker": "bulkbuilder", "output": {"insertedRecords": "recs"}},
   "actions": [{"worker": "pipelet", "input": {"in": "recs"}}]},
  {"name": "viaStrict", "parameters": {"tempStore": "temp"},
   "startAction": {"worker": "bulkbuilder", "output": {"insertedRecords": "recs"}},
   "actions": [{"worker": "strict", "input": {"in": "recs"}}]},
  {"name": "badWf", "parameters": {"tempStore": "temp"},
   "startAction": {"worker": "bulkbuilder", "output": {"insertedRecords": "recs"}},
   "actions": [{"worker": "strict", "input": {"in": "nobodyWrites"}}]}]}
JSON
jq '.jobs += [
  {"name": "typoJob", "workflow": "fileCrawling",
   "parameters": {"dataSource": "f", "rootFolder": "/tmp", "jobToPushTo": "indexUpdate",
                  "filters": {"maxFileSise": 1}}},
  {"name": "pushesLater", "workflow": "fileCrawling",
   "parameters": {"dataSource": "g", "rootFolder": "/tmp", "jobToPushTo": "zLater"}},
  {"name": "zLater", "workflow": "indexUpdate", "parameters": {"index": "other"}},
  {"name": "anyKeys", "workflow": "viaPipelet", "parameters": {"whatever": {"x": 1}}}]' \
    "$ROOT/config/jobs.json" >"$CFG/jobs.json"
write_config "$TMP/config2.json" ".jobmanager = {\"configDir\": \"$CFG\", \"workflowsDir\": \"$CFG/workflows\"}"
start_server --config "$TMP/config2.json" --data-dir "$TMP/data2"
if grep -q "jobs.json: job 'typoJob': .*unknown parameter 'filters.maxFileSise'.*(field parameters.filters.maxFileSise)" "$TMP/server.log"; then
    ok "a predefined job with a typo is logged with file, job and field"
else
    fail "no log line for typoJob: $(grep -i typoJob "$TMP/server.log")"
fi
if grep -q "zz_pipelets.json: workflow 'badWf': .*nobodyWrites.*(field actions\[0\].input.in)" "$TMP/server.log"; then
    ok "a predefined workflow reading an unwritten bucket is logged"
else
    fail "no log line for badWf: $(grep -i badWf "$TMP/server.log")"
fi
req GET /smila/jobmanager/jobs/typoJob/
expect_status 404 "the bad predefined job is not loaded"
req GET /smila/jobmanager/jobs/crawlFilesystem/
expect_status 200 "the good predefined jobs still load"
req GET /smila/jobmanager/jobs/pushesLater/
expect_status 200 "a job pushing to a job later in the file loads"
req GET /smila/jobmanager/jobs/anyKeys/
expect_status 200 "a worker declaring <...> takes any key"
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d '{"name": "strictJob", "workflow": "viaStrict", "parameters": {"levl": 1}}'
expect_error 400 INVALID_DEFINITION "a worker without <...> refuses unknown keys"
expect_jq '.error.field == "parameters.levl" and (.error.message | contains("did you mean '"'"'level'"'"'?"))' \
    "external worker declarations are used too"
req POST /smila/jobmanager/jobs/ -H 'Content-Type: application/json' \
    -d '{"name": "strictJob", "workflow": "viaStrict", "parameters": {"level": "high"}}'
expect_jq '.error.field == "parameters.level" and (.error.message | contains("unsigned integer"))' \
    "the definition check reads an external worker's integer"
stop_server
finish
