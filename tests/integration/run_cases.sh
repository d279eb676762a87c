#!/bin/bash
# Runs a case file against a fresh server.  A case file is a list of
# blocks; each starts with "== name" and has:
#   METHOD PATH           the request (first line after the name)
#   body TEXT             inline request body (optional)
#   header NAME: VALUE    extra request header (optional, repeatable)
#   status N              expected status
#   error CODE            the error body of docs/rest-api.md with this code
#   jq FILTER             must print true for the response body
#   allow TEXT            the Allow header must contain TEXT
# A line "config FILTER" before the first block is a jq filter applied to
# the server configuration; @DIR@ in it is the case file's folder.
# Usage: run_cases.sh SLUICE CASEFILE
SLUICE=$1
CASES=$2
. "$(dirname "$0")/lib.sh"

dir=$(cd "$(dirname "$CASES")" && pwd)
filter=$(sed -n 's/^config //p' "$CASES" | head -1)
write_config "$TMP/config.json" "${filter:-.}"
sed -i "s|@DIR@|$dir|g" "$TMP/config.json"
start_server --config "$TMP/config.json" --data-dir "$TMP/data"

name="" method="" path="" body="" have_body=0
declare -a hdrs=()
checks=()

run_case() {
    [ -n "$name" ] || return 0
    local args=()
    local h
    for h in "${hdrs[@]+"${hdrs[@]}"}"; do args+=(-H "$h"); done
    if [ "$have_body" -eq 1 ]; then args+=(--data-binary "$body"); fi
    req "$method" "$path" "${args[@]+"${args[@]}"}"
    local c
    for c in "${checks[@]}"; do
        case "$c" in
            status\ *) expect_status "${c#status }" "$name" ;;
            error\ *) expect_jq ".error.code == \"${c#error }\" and (.error.message|length>0)" \
                "$name (error ${c#error })" ;;
            jq\ *) expect_jq "${c#jq }" "$name: ${c#jq }" ;;
            allow\ *)
                if grep -qi "^Allow:.*${c#allow }" "$HEADERS"; then ok "$name: Allow has ${c#allow }"
                else fail "$name: Allow header lacks ${c#allow }"; fi ;;
        esac
    done
}

while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
        ''|'#'*|'config '*) continue ;;
        '== '*)
            run_case
            name=${line#== } method="" path="" body="" have_body=0
            hdrs=() checks=() ;;
        'body '*) body=${line#body }; have_body=1 ;;
        'header '*) hdrs+=("${line#header }") ;;
        'status '*|'error '*|'jq '*|'allow '*) checks+=("$line") ;;
        *)
            if [ -z "$method" ]; then
                method=${line%% *} path=${line#* }
            else
                echo "bad line in $CASES: $line" >&2; exit 2
            fi ;;
    esac
done <"$CASES"
run_case

stop_server
finish
