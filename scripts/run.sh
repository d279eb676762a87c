#!/bin/sh
# `make run`: start the server with the default configuration in the
# foreground.  Stop it with Ctrl-C (SIGINT); it shuts down cleanly.
set -eu
bin=${1:-build/sluice}
cd "$(dirname "$0")/.."
echo "Starting Sluice: $bin serve (config/sluice.json). Try:"
echo "  curl -s http://127.0.0.1:8080/smila/"
echo "  curl -s -X PUT http://127.0.0.1:8080/smila/store/demo/"
echo "  curl -s -T README.md http://127.0.0.1:8080/smila/store/demo/readme"
exec "$bin" serve
