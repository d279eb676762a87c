#!/bin/bash
# The Debian package (docs/operations.md "The Debian package"):
# dpkg-buildpackage builds it from a copy of the source tree, lintian
# finds no error in it, it holds the binaries, the configuration (as
# conffiles), the unit and the manual pages.  Where the test runs as root
# with apt-get (CI does), the package is installed for real: the user
# sluice exists, the installed server runs as that user with the installed
# configuration; an upgrade to a newer version keeps a locally changed
# conffile; a purge removes the files, the configuration and the data.
# systemd does not run here, so the service itself is not started
# (tests/integration/install.sh checks the unit and the readiness).
SLUICE=${SLUICE:?set SLUICE to the sluice binary}
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

for t in dpkg-buildpackage dh lintian; do
    command -v "$t" >/dev/null || { fail "$t is missing (scripts/install-deps.sh installs it)"; finish; exit 1; }
done
mkdir -p "$TMP/src"
tar -C "$SRC" --exclude='./build*' --exclude=./.git --exclude=./Testing --exclude=./data \
    --exclude='./obj-*' --exclude=./debian/sluice --exclude=./debian/.debhelper -cf - . | tar -C "$TMP/src" -xf -
if (cd "$TMP/src" && dpkg-buildpackage -b -us -uc >"$TMP/build.log" 2>&1); then
    ok "dpkg-buildpackage -b builds the package"
else
    fail "dpkg-buildpackage: $(tail -20 "$TMP/build.log")"
    finish
    exit 1
fi
deb=$(ls "$TMP"/sluice_*.deb)
version=$(dpkg-deb -f "$deb" Version)
lintian --fail-on error "$deb" >"$TMP/lintian.log" 2>&1 && sed -n 's/^W: /# lintian warning: /p' "$TMP/lintian.log" &&
    ok "lintian finds no error ($(grep -c '^W:' "$TMP/lintian.log") warnings)" || fail "lintian: $(grep '^E:' "$TMP/lintian.log")"
dpkg-deb -c "$deb" | awk '{print $6}' >"$TMP/files"
missing=""
for f in ./usr/bin/sluice ./usr/bin/sluice-pdf ./etc/sluice/sluice.json ./etc/sluice/jobs.json \
    ./etc/sluice/workflows/fileCrawling.json ./usr/lib/systemd/system/sluice.service \
    ./usr/lib/sysusers.d/sluice.conf ./usr/share/man/man1/sluice.1.gz ./usr/share/man/man5/sluice.json.5.gz; do
    grep -qx "$f" "$TMP/files" || missing="$missing $f"
done
[ -z "$missing" ] && ok "the package holds the binaries, /etc/sluice, the unit, the sysusers entry and the manual pages" ||
    fail "not in the package:$missing"
dpkg-deb -I "$deb" conffiles | grep -qx /etc/sluice/sluice.json && ok "/etc/sluice/sluice.json is a conffile" ||
    fail "conffiles: $(dpkg-deb -I "$deb" conffiles 2>&1)"

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    skip "not root with apt-get: the package was built and checked ($PASSES checks), not installed"
fi
if dpkg-query -W sluice >/dev/null 2>&1; then
    fail "a package sluice is installed already; this test installs and purges its own"
    finish
    exit 1
fi
apt() { DEBIAN_FRONTEND=noninteractive apt-get -y -q --no-install-recommends "$@" >>"$TMP/apt.log" 2>&1; }
trap 'rc=$?; apt purge sluice || true; cleanup $rc' EXIT
apt install "$deb" && ok "apt-get install ./sluice_${version}_*.deb" || fail "install: $(tail -5 "$TMP/apt.log")"
{ /usr/bin/sluice --version | grep -q "^sluice " && getent passwd sluice >/dev/null; } &&
    ok "installed: /usr/bin/sluice, and the system user sluice" || fail "installed: $(getent passwd sluice)"

# the installed server as its user, with the installed configuration
chmod o+x "$TMP"
mkdir -p "$TMP/pkgdata" && chown sluice: "$TMP/pkgdata"
printf '#!/bin/sh\nexec setpriv --reuid=sluice --regid=sluice --init-groups /usr/bin/sluice "$@"\n' >"$TMP/as-sluice"
chmod +x "$TMP/as-sluice"
SLUICE="$TMP/as-sluice" start_server --config-dir /etc/sluice --data-dir "$TMP/pkgdata" --listen 127.0.0.1:0
grep -q "configuration: /etc/sluice (--config-dir); .* 3 job(s)" "$TMP/server.log" &&
    /usr/bin/sluice job list --server "$BASE" | grep -q '^indexUpdate  running' &&
    ok "the installed server runs as sluice with /etc/sluice: its jobs are there" ||
    fail "server: $(grep configuration "$TMP/server.log")"
stop_server

# an upgrade keeps a locally changed conffile
jq '.http.maxConnections = 100' /etc/sluice/sluice.json >"$TMP/s.json" && cp "$TMP/s.json" /etc/sluice/sluice.json
mkdir -p "$TMP/repack"
dpkg-deb -R "$deb" "$TMP/repack/p"
sed -i "s/^Version: .*/Version: ${version}+1/" "$TMP/repack/p/DEBIAN/control"
dpkg-deb -b "$TMP/repack/p" "$TMP/repack/sluice_${version}+1.deb" >/dev/null
apt -o Dpkg::Options::=--force-confold install "$TMP/repack/sluice_${version}+1.deb" &&
    [ "$(dpkg-query -W -f '${Version}' sluice)" = "${version}+1" ] &&
    [ "$(jq .http.maxConnections /etc/sluice/sluice.json)" = 100 ] &&
    ok "upgrade to ${version}+1: the changed /etc/sluice/sluice.json is kept" ||
    fail "upgrade: $(dpkg-query -W sluice) $(jq -c .http /etc/sluice/sluice.json)"

mkdir -p /var/lib/sluice && touch /var/lib/sluice/marker
apt purge sluice && ! dpkg-query -W -f '${Status}' sluice 2>/dev/null | grep -q installed &&
    [ ! -e /usr/bin/sluice ] && [ ! -e /etc/sluice ] && [ ! -e /var/lib/sluice ] &&
    ok "purge: the binaries, /etc/sluice and /var/lib/sluice are gone" ||
    fail "purge: $(ls -d /usr/bin/sluice /etc/sluice /var/lib/sluice 2>&1)"
finish
