#!/bin/sh
# Checks docker/ without a Docker engine: the compose file is valid
# (docker-compose config -q), and every RUN step of the Dockerfile calls only
# scripts of this repository that exist and are executable, and every file it
# COPYs exists. Run by scripts/test.sh; exits non-zero on the first problem.
set -eu
cd "$(dirname "$0")/.."
status=0

if command -v docker-compose >/dev/null 2>&1; then
    compose="docker-compose"
elif command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then
    compose="docker compose"
else
    echo "check-docker: neither docker-compose nor docker compose is installed (scripts/install-deps.sh)" >&2
    exit 1
fi
if $compose -f docker/compose.yaml config -q; then
    echo "docker/compose.yaml: valid ($compose config)"
else
    echo "docker/compose.yaml: invalid" >&2
    status=1
fi

# The Dockerfile's instructions, continuation lines joined, comments dropped.
steps=$(sed -e '/^[[:space:]]*#/d' docker/Dockerfile | sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta')

# RUN steps: every scripts/NAME they mention must exist and be executable.
runs=$(printf '%s\n' "$steps" | grep -E '^[[:space:]]*RUN[[:space:]]' || true)
[ -n "$runs" ] || { echo "docker/Dockerfile: no RUN step" >&2; status=1; }
for s in $(printf '%s\n' "$runs" | grep -oE '(\./)?scripts/[A-Za-z0-9._/-]+' | sed 's|^\./||' | sort -u); do
    if [ ! -f "$s" ]; then
        echo "docker/Dockerfile: RUN calls $s, which does not exist" >&2
        status=1
    elif [ ! -x "$s" ]; then
        echo "docker/Dockerfile: RUN calls $s, which is not executable" >&2
        status=1
    else
        echo "docker/Dockerfile: RUN $s exists"
    fi
done

# COPY steps with a path of the repository (not ".") as the source.
printf '%s\n' "$steps" | grep -E '^[[:space:]]*COPY[[:space:]]' | while read -r _ src _; do
    case "$src" in
    --* | . | ./) continue ;;
    esac
    if [ ! -e "$src" ]; then
        echo "docker/Dockerfile: COPY $src, which does not exist" >&2
        exit 1
    fi
done || status=1

exit $status
