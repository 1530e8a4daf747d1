# throwaway-pg.sh - sourced by the bench scripts: starts a throwaway
# PostgreSQL 15 server (fsync on, Unix socket only) in a fresh folder and
# stops and removes it when the script exits. Sets $bindir, $dir and $conn.
# Runs as root too: the server then runs as the postgres user.
bindir=${SWF_PG_BINDIR:-/usr/lib/postgresql/15/bin}
[ -x "$bindir/initdb" ] || bindir=$(dirname "$(command -v initdb)")
dir=$(mktemp -d /tmp/swf-bench-XXXXXX)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$dir"
cleanup() {
    as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

as_pg "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale -N >/dev/null
cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
fsync = on
CONF
as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
conn="host=$dir port=5432 user=postgres dbname=postgres"
