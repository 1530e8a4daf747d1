#!/bin/sh
# Checks docker/ without a Docker engine: the compose file is valid
# (docker-compose config -q) and builds its image once (one service has
# `build:`, and every other service of that image waits for it), and every
# file a service mounts exists; the
# Dockerfile is multi-stage and its last stage (the image) installs no
# compiler, -dev package, Criterion or PostgreSQL server; every RUN step
# calls only scripts of this repository that exist and are executable, and
# every file it COPYs exists. Run by scripts/test.sh; exits non-zero when one
# check fails.
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

# One build of each image: with several services building one image name,
# current Compose fails on a clean machine. The others wait for the builder
# (depends_on, directly or through another service), so it exists first.
if ! $compose -f docker/compose.yaml config | python3 -c '
import sys, yaml
services = yaml.safe_load(sys.stdin)["services"]
ok = True
builders = {}
for name, s in services.items():
    if "build" in s:
        image = s.get("image")
        if image is None:
            print(f"docker/compose.yaml: {name} builds an image with no name", file=sys.stderr); ok = False
        elif image in builders:
            print(f"docker/compose.yaml: {name} and {builders[image]} both build {image}", file=sys.stderr); ok = False
        else:
            builders[image] = name
def waits_for(name, target, seen=()):
    deps = services[name].get("depends_on") or {}
    return target in deps or any(d not in seen and waits_for(d, target, seen + (name,)) for d in deps)
for name, s in services.items():
    image = s.get("image")
    if "build" not in s and image in builders and not waits_for(name, builders[image]):
        print(f"docker/compose.yaml: {name} runs {image} but does not wait for {builders[image]}, which builds it", file=sys.stderr); ok = False
for image, name in builders.items():
    if ok:
        print(f"docker/compose.yaml: {image} is built once, by {name}")
sys.exit(0 if ok else 1)
'; then
    status=1
fi

# Every file a service mounts from this repository exists (swf-api's
# credentials file, docker/api-credentials).
if ! $compose -f docker/compose.yaml config | python3 -c '
import os, sys, yaml
ok = True
for name, s in yaml.safe_load(sys.stdin)["services"].items():
    for v in s.get("volumes") or []:
        src = v.get("source") if isinstance(v, dict) else v.split(":")[0]
        if src and src.startswith("/") and not os.path.exists(src):
            print(f"docker/compose.yaml: {name} mounts {src}, which does not exist", file=sys.stderr); ok = False
        elif src and src.startswith("/"):
            print(f"docker/compose.yaml: {name} mounts {os.path.relpath(src)}")
sys.exit(0 if ok else 1)
'; then
    status=1
fi

# The Dockerfile's instructions, continuation lines joined, comments dropped.
steps=$(sed -e '/^[[:space:]]*#/d' docker/Dockerfile | sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta')

# Multi-stage: the last stage is the image, and holds no build tool.
stages=$(printf '%s\n' "$steps" | grep -cE '^[[:space:]]*FROM[[:space:]]' || true)
if [ "$stages" -lt 2 ]; then
    echo "docker/Dockerfile: one stage; the image would carry the build tools" >&2
    status=1
else
    last=$(printf '%s\n' "$steps" | awk 'toupper($1) == "FROM" { s = "" } { s = s $0 "\n" } END { printf "%s", s }')
    heavy=$(printf '%s\n' "$last" | grep -E '^[[:space:]]*RUN[[:space:]]' |
        grep -oE '(build-essential|[a-z0-9.+-]+-dev|gcc|g\+\+|clang|cmake|criterion|postgresql([[:space:]]|$)|postgresql-[0-9]+|install-deps\.sh)' |
        sort -u | tr '\n' ' ' || true)
    if [ -n "$heavy" ]; then
        echo "docker/Dockerfile: the runtime stage installs $heavy" >&2
        status=1
    else
        echo "docker/Dockerfile: $stages stages; the last one installs no build tool"
    fi
fi

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
