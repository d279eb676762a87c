#!/bin/sh
# Installs every Debian 12 package Sluice needs to build, test and run,
# the converters the textExtractor runs by default among them (catdoc:
# catdoc, xls2csv; recollcmd: Recoll's ppt-dump.py for .ppt;
# libimage-exiftool-perl: exiftool, the metadata of .doc, .xls, .ppt and
# RTF; libpoppler-glib-dev for the sluice-pdf Sluice builds;
# poppler-utils: pdftotext and pdfinfo, the benchmarks' baseline;
# libsystemd-dev: sd_notify, the readiness of the systemd service;
# debhelper and lintian: `make deb` and its test).
# Idempotent: packages already present are skipped, and apt-get runs only
# when something is missing.  Must run as root (or via sudo) on Debian 12.
set -eu

PKGS="build-essential cmake pkg-config curl ca-certificates \
libuv1-dev liblmdb-dev lmdb-utils libjansson-dev libcurl4-openssl-dev \
libarchive-dev libssl-dev libcmocka-dev libhttp-parser-dev libsqlite3-dev libicu-dev \
libxml2-dev libmagic-dev libuchardet-dev libgmime-3.0-dev libpoppler-glib-dev zlib1g-dev libdeflate-dev clang-format \
libsystemd-dev debhelper lintian \
clang libclang-rt-14-dev llvm \
jq zip openssl nginx-light prometheus chromium chromium-driver python3-selenium \
python3 python3-botocore gzip bzip2 xz-utils \
poppler-utils catdoc recollcmd libimage-exiftool-perl"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done

if [ -n "$missing" ]; then
    echo "install-deps: installing:$missing" >&2
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        SUDO="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -q --no-install-recommends $missing
fi

# The S3 server the tests start (tests/s3): s3rver from the npm registry,
# at the version of tests/s3/package-lock.json, with the machine's Node.js
# (Debian's nodejs and npm when there is none).
s3dir=$(cd "$(dirname "$0")/../tests/s3" && pwd)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "install-deps: installing nodejs npm" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi
if [ ! -f "$s3dir/node_modules/s3rver/bin/s3rver.js" ] ||
    [ "$s3dir/package-lock.json" -nt "$s3dir/node_modules/.package-lock.json" ]; then
    echo "install-deps: npm ci in tests/s3 (s3rver)" >&2
    (cd "$s3dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
