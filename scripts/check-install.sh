#!/bin/sh
# check-install.sh - checks `cmake --install`: installs build/ (scripts/build.sh
# builds it) into a temporary prefix, and there checks the programs run, the
# docs are in share/doc/swf, and the example C worker
# (worker/examples/c/worker.c, installed as share/doc/swf/examples/c/worker.c)
# compiles and links against the installed worker library through pkg-config
# alone. CI runs it.
#
# usage: scripts/check-install.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ -n "${1:-}" ] || scripts/build.sh
prefix=$(mktemp -d /tmp/swf-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
status=0
for p in swf swf-decider swf-history swf-worker; do
    [ -x "$prefix/bin/$p" ] || { echo "check-install: no bin/$p" >&2; status=1; }
done
"$prefix/bin/swf" help >/dev/null || { echo "check-install: bin/swf help failed" >&2; status=1; }
for d in README.md protocol/README.md protocol/KAFKA.md protocol/schemas docker/README.md; do
    [ -e "$prefix/share/doc/swf/$d" ] || { echo "check-install: no share/doc/swf/$d" >&2; status=1; }
done
# Only the programs: no test, benchmark or example binary.
extra=$(find "$prefix/bin" -type f ! -name swf ! -name 'swf-*')
[ -z "$extra" ] || { echo "check-install: unexpected programs: $extra" >&2; status=1; }
pc=$(find "$prefix" -name swf-worker.pc)
if [ -z "$pc" ]; then
    echo "check-install: no swf-worker.pc" >&2
    exit 1
fi
export PKG_CONFIG_PATH="$(dirname "$pc")"
# shellcheck disable=SC2046 # pkg-config's flags are words
if ${CC:-cc} -Wall -Wextra -o "$prefix/example-worker" "$prefix/share/doc/swf/examples/c/worker.c" \
    $(pkg-config --cflags --libs swf-worker); then
    echo "check-install: worker/examples/c/worker.c builds with pkg-config swf-worker $(pkg-config --modversion swf-worker)"
else
    echo "check-install: worker/examples/c/worker.c does not build against the installed library" >&2
    status=1
fi
[ $status = 0 ] && echo "check-install: the programs, the worker library and the docs are installed"
exit $status
