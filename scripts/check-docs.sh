#!/bin/bash
# check-docs.sh: the documents speak of the product only. Fails (exit 1), printing file:line: text,
# on any line of docs/, scripts/, README.md or CHANGELOG.md that speaks of how the work was organised
# (sessions, work periods, the tools and time it ran on, issue numbers as history) or names an
# absolute path of a build machine. This file is left out: it has to spell the patterns.
# Run by `make check-docs`, a prerequisite of `make test`.
set -u
cd "$(dirname "$0")/.."

# How the work was organised: never a subject of the documents.
organisation='\bsessions?\b|work periods?|devic[e] tool|devic[e] time|devic[e] machine|devic[e] run [0-9]|time allowance|carry limit|remote machine|\bthe lead\b|\blead'"'"'s\b|other (agents|engineers)|\bworktree|\bissue [0-9]+'
# Absolute paths of a build machine.
paths='/wor[k]/|/root/|/home/[a-z]'

files=()
while IFS= read -r -d '' f; do
    [ "$f" = scripts/check-docs.sh ] || files+=("$f")
done < <(find docs scripts -type f -print0 | sort -z)
files+=(README.md)
[ -e CHANGELOG.md ] && files+=(CHANGELOG.md)

status=0
# -I skips binary files; -H and -n give file:line.
if grep -HnIiE "$organisation" "${files[@]}"; then
    echo "check-docs: the lines above speak of how the work was organised; say what holds instead" >&2
    status=1
fi
if grep -HnIE "$paths" "${files[@]}"; then
    echo "check-docs: the lines above name an absolute path of a build machine" >&2
    status=1
fi
[ "$status" -eq 0 ] && echo "check-docs: ${#files[@]} files, no banned words, no build-machine paths"
exit "$status"
