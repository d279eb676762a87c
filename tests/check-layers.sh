#!/bin/sh
# Fails when a component includes the header of a component it may not
# use (docs/architecture.md "Components and their floors"): data flows one
# way, and a lower layer never includes a higher one.  The table lists,
# for each component, the components it may include; an include of any
# other component's header is printed and fails the check.  Tests, benches
# and the fuzz harnesses may include anything.
set -u
root=${1:-.}
cd "$root" || exit 2

allowed() {
    case "$1" in
    core) echo "" ;;
    objectstore) echo "core" ;;
    deltaservice) echo "core" ;;
    index) echo "core" ;;
    web) echo "core" ;;
    text) echo "core web" ;;
    jobmanager) echo "core objectstore" ;;
    bulkbuilder) echo "core objectstore jobmanager" ;;
    workers) echo "core objectstore jobmanager" ;;
    builtin) echo "core objectstore deltaservice index web text jobmanager bulkbuilder workers" ;;
    http) echo "core objectstore deltaservice index jobmanager bulkbuilder" ;;
    cli) echo "core objectstore deltaservice index web text jobmanager bulkbuilder workers builtin http" ;;
    converters) echo "" ;;
    *) echo "?" ;;
    esac
}

bad=0
checked=0
for dir in core objectstore deltaservice index web text jobmanager bulkbuilder workers builtin http cli converters; do
    [ -d "$dir" ] || continue
    ok=$(allowed "$dir")
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -f "$f" ] || continue
        checked=$((checked + 1))
        # '#include "<component>/<header>"' lines
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$f" |
            sed 's|^\([0-9]*\):.*include[[:space:]]*"\([a-z_]*\)/.*|\1 \2|' |
            while read -r line comp; do
                [ "$comp" = "$dir" ] && continue
                case " $ok " in
                *" $comp "*) ;;
                *) echo "$f:$line: $dir may not include $comp/" ;;
                esac
            done >"${TMPDIR:-/tmp}/check-layers.$$"
        if [ -s "${TMPDIR:-/tmp}/check-layers.$$" ]; then
            cat "${TMPDIR:-/tmp}/check-layers.$$"
            bad=1
        fi
        rm -f "${TMPDIR:-/tmp}/check-layers.$$"
    done
done
if [ "$bad" -ne 0 ]; then
    echo "check-layers: includes against the layers (see docs/architecture.md)" >&2
    exit 1
fi
echo "check-layers: $checked files include only the components below them"
