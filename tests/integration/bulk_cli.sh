#!/usr/bin/env bash
# Integration test for `sluice bulk` (cat, count, from-jsonl): builds a bulk
# from JSON lines with base64 and file attachments, checks cat (one and
# several files)/count, a
# truncated copy, a bad JSON line, and the usage/help exit codes.
# Usage: bulk_cli.sh PATH/TO/sluice
set -euo pipefail

sluice=${1:?usage: bulk_cli.sh PATH/TO/sluice}
sluice=$(cd "$(dirname "$sluice")" && pwd)/$(basename "$sluice")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bulk_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "bulk_cli: FAIL: $*" >&2
    exit 1
}

cd "$tmp"

# Attachment data: a 1 MiB file, an empty file and small inline data.
head -c 1048576 /dev/urandom >big.bin
: >empty.bin
printf 'hello' >hello.txt
hello_b64=$(base64 -w0 <hello.txt) # aGVsbG8=

cat >in.jsonl <<JSONL
{"_recordid":"r1","title":"first","n":1,"tags":["a","b"],"x":null,"_attachments":{"big.bin":{"file":"big.bin"},"hello":{"base64":"$hello_b64"}}}
{"_recordid":"r2","ok":true,"nested":{"k":1.5}}

{"_recordid":"r3","_attachments":{"empty":{"file":"empty.bin"},"nopad":{"base64":"aGk"},"zero":{"base64":""}}}
JSONL

"$sluice" bulk from-jsonl in.jsonl out.bulk
[ -f out.bulk ] || fail "from-jsonl wrote no output"
ls out.bulk.tmp.* >/dev/null 2>&1 && fail "temporary file left behind"

# count
[ "$("$sluice" bulk count out.bulk)" = 3 ] || fail "count is not 3"
[ "$("$sluice" bulk count - <out.bulk)" = 3 ] || fail "count from stdin"

# cat: one JSON line per record, attachments summarised.
"$sluice" bulk cat out.bulk >cat.out
[ "$(wc -l <cat.out)" -eq 3 ] || fail "cat printed $(wc -l <cat.out) lines"
jq -e -s '
  length == 3
  and .[0]._recordid == "r1" and .[0].title == "first" and .[0].n == 1
  and .[0].tags == ["a","b"] and .[0].x == null
  and .[0]._attachments == {"big.bin": {"size": 1048576}, "hello": {"size": 5}}
  and .[1] == {"_recordid":"r2","ok":true,"nested":{"k":1.5}}
  and .[2]._attachments == {"empty":{"size":0},"nopad":{"size":2},"zero":{"size":0}}
' cat.out >/dev/null || { cat cat.out >&2; fail "cat output"; }

# Round trip: feeding cat's output (minus _attachments) back gives the same
# metadata.
jq -c 'del(._attachments)' cat.out >meta.jsonl
"$sluice" bulk from-jsonl meta.jsonl meta.bulk
"$sluice" bulk cat meta.bulk | cmp - meta.jsonl || fail "metadata round trip"

# cat of several files: one after the other; the first that fails stops it
# (exit 1) after what came before.
"$sluice" bulk cat out.bulk meta.bulk | cmp - <(cat cat.out meta.jsonl) || fail "cat of two bulks"
set +e
"$sluice" bulk cat meta.bulk missing.bulk out.bulk >two.out 2>err.txt
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "cat with a missing second file exited $rc"
cmp -s two.out meta.jsonl || fail "cat printed $(wc -l <two.out) lines before the missing file"
grep -q "missing.bulk" err.txt || fail "message: $(cat err.txt)"

# The attachment bytes are stored raw: the 1 MiB file appears verbatim.
if command -v python3 >/dev/null 2>&1; then
    python3 - <<'PY' || fail "attachment bytes not found in the bulk"
data = open("out.bulk", "rb").read()
assert open("big.bin", "rb").read() in data
assert b"hello" in data
PY
fi

# A truncated copy: cat exits 1 and names the offset.
size=$(stat -c %s out.bulk)
for cut in 5 100 $((size / 2)) $((size - 16)) $((size - 1)); do
    head -c "$cut" out.bulk >trunc.bulk
    set +e
    "$sluice" bulk cat trunc.bulk >/dev/null 2>err.txt
    rc=$?
    set -e
    [ "$rc" -eq 1 ] || fail "cat of a bulk cut at $cut exited $rc"
    grep -q "offset" err.txt || fail "no offset in: $(cat err.txt)"
    grep -q "^sluice bulk: trunc.bulk: " err.txt || fail "message: $(cat err.txt)"
done

# A corrupted byte in the big attachment: checksum error, exit 1.  The
# byte is changed to another value (the attachment is random: writing a
# fixed one would leave it as it was once in 256 runs).
cp out.bulk bad.bulk
old=$(od -An -tu1 -j $((size / 2)) -N1 out.bulk | tr -d ' ')
# shellcheck disable=SC2059
printf "\\$(printf '%03o' $(((old + 1) % 256)))" |
    dd of=bad.bulk bs=1 seek=$((size / 2)) conv=notrunc status=none
cmp -s out.bulk bad.bulk && fail "the corrupted copy equals the original"
set +e
"$sluice" bulk count bad.bulk >/dev/null 2>err.txt
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "count of a corrupt bulk exited $rc"
grep -q "record 1 at offset 8: checksum mismatch" err.txt ||
    fail "message: $(cat err.txt)"

# A bad JSON line: exit 1, the line is named, no output file is left.
printf '{"_recordid":"ok"}\n{"_recordid": broken}\n' >bad.jsonl
set +e
"$sluice" bulk from-jsonl bad.jsonl badout.bulk 2>err.txt
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "from-jsonl with a bad line exited $rc"
grep -q "^sluice bulk: bad.jsonl: line 2: " err.txt || fail "message: $(cat err.txt)"
[ ! -e badout.bulk ] || fail "output left behind after an error"
ls badout.bulk.tmp.* >/dev/null 2>&1 && fail "temporary file left behind"

# Other line errors: missing _recordid, bad base64, missing file.
for line in '{"x":1}' '[1]' \
    '{"_recordid":"a","_attachments":{"n":{"base64":"@@@@"}}}' \
    '{"_recordid":"a","_attachments":{"n":{"file":"/nonexistent"}}}' \
    '{"_recordid":"a","_attachments":{"n":{"what":1}}}'; do
    printf '%s\n' "$line" >one.jsonl
    set +e
    "$sluice" bulk from-jsonl - one.bulk <one.jsonl 2>err.txt
    rc=$?
    set -e
    [ "$rc" -eq 1 ] || fail "from-jsonl accepted: $line"
    grep -q "line 1: " err.txt || fail "message: $(cat err.txt)"
    [ ! -e one.bulk ] || fail "output left behind for: $line"
done

# An existing OUT is left alone when from-jsonl fails.
cp out.bulk keep.bulk
set +e
"$sluice" bulk from-jsonl bad.jsonl keep.bulk 2>/dev/null
set -e
cmp -s out.bulk keep.bulk || fail "a failed from-jsonl changed OUT"

# Help and usage errors.
"$sluice" bulk --help | grep -q "from-jsonl IN OUT" || fail "--help"
"$sluice" bulk -h | grep -q "count FILE" || fail "-h"
"$sluice" bulk cat --help | grep -q -- "--help" || fail "cat --help"
for args in "" "nope" "cat" "count a b" "count --bogus x" "from-jsonl in"; do
    set +e
    # shellcheck disable=SC2086
    "$sluice" bulk $args >/dev/null 2>&1
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "'bulk $args' exited $rc, want 2"
done

echo "bulk_cli: all checks passed"
