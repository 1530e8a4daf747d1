#!/bin/sh
# check-format.sh - checks that every tracked C file (.c, .h) is formatted as
# .clang-format says: prints each file clang-format would change, and the
# count. Exit status 0 when none would change. CI runs it.
#
# usage: scripts/check-format.sh [FILE...]     (default: every tracked .c and .h)
# Fix a file with: clang-format -i FILE
set -eu
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
command -v "$CLANG_FORMAT" >/dev/null 2>&1 || {
    echo "check-format: $CLANG_FORMAT is not installed (scripts/install-deps.sh)" >&2
    exit 2
}
list=$(mktemp)
trap 'rm -f "$list"' EXIT
if [ $# -gt 0 ]; then printf '%s\n' "$@" >"$list"; else git ls-files -- '*.c' '*.h' >"$list"; fi
bad=0
total=0
while IFS= read -r f; do
    total=$((total + 1))
    # --style=file: the .clang-format above the file; the output compared
    # byte for byte with the file.
    if ! "$CLANG_FORMAT" --style=file "$f" | cmp -s - "$f"; then
        echo "$f"
        bad=$((bad + 1))
    fi
done <"$list"
if [ "$bad" -gt 0 ]; then
    echo "check-format: $bad of $total files differ from .clang-format ($CLANG_FORMAT -i FILE)" >&2
    exit 1
fi
echo "check-format: $total files follow .clang-format"
