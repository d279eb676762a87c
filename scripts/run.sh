#!/bin/sh
# `make run`: start the server with the default configuration
# (config/sluice.json, config/jobs.json, workflows/), crawl a folder into
# the embedded index (the repository's docs/ unless DIR=... is given),
# show a search, and keep the server running until Ctrl-C.
set -eu
bin=${1:-build/sluice}
cd "$(dirname "$0")/.."
bin=$(realpath "$bin")
dir=$(realpath "${DIR:-docs}")
port=${PORT:-8080}
server="http://127.0.0.1:$port"
mkdir -p data

if curl -fsS -o /dev/null "$server/smila/" 2>/dev/null; then
    echo "run: something already answers on $server; stop it or set PORT=..." >&2
    exit 1
fi
echo "Starting Sluice on $server (log: data/sluice.log)"
"$bin" serve --listen "127.0.0.1:$port" >>data/sluice.log 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; exit 0' INT TERM
i=0
until curl -fsS -o /dev/null "$server/smila/" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 100 ] || ! kill -0 $pid 2>/dev/null; then
        echo "run: the server did not start; see data/sluice.log:" >&2
        tail -n 20 data/sluice.log >&2
        exit 1
    fi
    sleep 0.1
done

# The demo crawl job: the fileCrawling workflow over $dir, pushing into
# the processing job indexUpdate (config/jobs.json, started automatically).
job=$(printf '{"name": "crawlDemo", "workflow": "fileCrawling",
  "parameters": {"dataSource": "demo", "rootFolder": "%s",
                 "jobToPushTo": "indexUpdate"}}' "$dir")
curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' \
    -d "$job" "$server/smila/jobmanager/jobs/"
echo "Crawling $dir (job crawlDemo) ..."
"$bin" job start crawlDemo --wait --server "$server"
echo
echo "Indexed: $(curl -fsS "$server/smila/index/default/")"
echo "Search example: $bin search --server $server 'incremental crawl'"
"$bin" search --server "$server" --limit 5 'incremental crawl' || true
echo
echo "The server keeps running (Ctrl-C stops it). Try:"
echo "  $bin job start crawlDemo --wait --server $server   # re-crawl: incremental"
echo "  $bin job status crawlDemo --server $server"
echo "  curl -s '$server/smila/index/default/search?q=workflow' | jq ."
echo "  docs/tutorial.md: your own crawl job with curl"
wait $pid
