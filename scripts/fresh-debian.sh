#!/bin/sh
# fresh-debian.sh - runs a command of this repository in a fresh Debian 12, as
# a newcomer would: a root made by `debootstrap --variant=minbase bookworm`
# (nothing else installed), the repository copied in with ../shared beside it
# (the conformance corpus), and COMMAND run there as root, from the
# repository's folder, with a login's bare environment. Whatever the command
# needs must come from the repository's own scripts (scripts/install-deps.sh).
#
# usage: scripts/fresh-debian.sh 'COMMAND'      (root only)
#   e.g. scripts/fresh-debian.sh scripts/run-example.sh
#
# The copy is the working tree: tracked files and untracked ones git does not
# ignore, as they are now (no build folders, no node_modules). The machine's
# own certificate authorities (/usr/local/share/ca-certificates) go in too,
# where a machine of ours has them; installing ca-certificates (install-deps.sh
# does) adds them to the root's trust store.
#
# The pristine root is cached as a tarball (SWF_FRESH_DEBIAN_CACHE, default
# /var/cache/swf-fresh-debian; SWF_FRESH_DEBIAN_CACHE=none: no cache) so that
# runs after the first skip debootstrap; each run unpacks a new root, and
# removes it, with its mounts and whatever still runs in it, on exit. The
# exit status is COMMAND's.
set -eu
if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: scripts/fresh-debian.sh 'COMMAND'" >&2
    exit 2
fi
if [ "$(id -u)" != 0 ]; then
    echo "fresh-debian.sh: needs root (debootstrap, chroot, mount)" >&2
    exit 2
fi
command=$1
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$repo/.." && pwd)/shared
mirror=${SWF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${SWF_FRESH_DEBIAN_CACHE:-/var/cache/swf-fresh-debian}
tarball=$cache/bookworm-minbase.tar

if ! command -v debootstrap >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

work=$(mktemp -d /var/tmp/swf-fresh-debian-XXXXXX)
root=$work/root
# Every mount point under the root, deepest first.
mounts() { awk -v r="$root/" 'index($2 "/", r) == 1 { print $2 }' /proc/mounts | sort -r; }
cleanup() {
    status=$?
    set +e
    # What still runs in the root (a server the command left behind) holds
    # its mounts: stop it first.
    for sig in TERM KILL; do
        found=
        for p in /proc/[0-9]*; do
            [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] || continue
            kill -s "$sig" "${p#/proc/}" 2>/dev/null && found=1
        done
        [ -z "$found" ] || sleep 2
    done
    for m in $(mounts); do umount "$m" 2>/dev/null || umount -l "$m"; done
    # Never remove a root that still has something mounted in it (/dev!).
    if [ -z "$(mounts)" ]; then
        rm -rf --one-file-system "$work"
    else
        echo "fresh-debian.sh: $root still has mounts; left in place" >&2
    fi
    exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir "$root"
if [ "$cache" != none ] && [ -s "$tarball" ]; then
    echo "fresh-debian.sh: Debian 12 minbase from $tarball"
    tar -C "$root" --numeric-owner -xpf "$tarball"
else
    echo "fresh-debian.sh: debootstrap --variant=minbase bookworm $mirror"
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
        tail -20 "$work/debootstrap.log" >&2
        exit 1
    }
    if [ "$cache" != none ]; then
        mkdir -p "$cache"
        part=$(mktemp "$tarball.XXXXXX")
        tar -C "$root" --numeric-owner -cpf "$part" . && mv "$part" "$tarball"
    fi
fi

# The network as the host sees it, and the host's own certificate authorities.
cp /etc/resolv.conf "$root/etc/resolv.conf"
if [ -d /usr/local/share/ca-certificates ]; then
    mkdir -p "$root/usr/local/share/ca-certificates"
    cp -R /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
fi

# The repository (its working tree) and ../shared beside it.
name=$(basename "$repo")
mkdir -p "$root/src/$name"
if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$repo" && git ls-files -z --cached --others --exclude-standard |
        xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
        tar --null -T - -cf -) | tar -C "$root/src/$name" -xf -
else
    # Not a git checkout (an unpacked tarball): everything but build output.
    tar -C "$repo" --exclude='./build*' --exclude=node_modules -cf - . |
        tar -C "$root/src/$name" -xf -
fi
if [ -d "$shared" ]; then
    cp -R "$shared" "$root/src/shared"
    chmod -R u+w "$root/src/shared"
fi

echo "fresh-debian.sh: in /src/$name: $command"
# The mounts are made in a mount namespace of their own: none can leak into
# the host's (a shared /dev would carry them there), and all of them go when
# the last process in the root ends, whatever stops this script.
# In the background, so that a signal to this script is handled at once
# (cleanup stops what runs in the root); stdin passed on explicitly.
exec 3<&0
unshare --mount --propagation private /bin/sh -euc '
    root=$1
    mount -t proc proc "$root/proc"
    mount -t sysfs sysfs "$root/sys"
    mount --rbind /dev "$root/dev"
    mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"
    exec chroot "$root" /usr/bin/env -i HOME=/root TERM="$2" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/sh -c "cd \"\$0\" && $3" "$4"' sh "$root" "${TERM:-dumb}" "$command" "/src/$name" \
    0<&3 3<&- &
set +e
wait $!
status=$?
set -e
echo "fresh-debian.sh: '$command' exited with status $status"
exit $status
