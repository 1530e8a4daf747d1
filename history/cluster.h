/*
 * cluster.h - a throwaway PostgreSQL cluster, for tests, benchmarks and `swf dev`.
 *
 * swf_history_cluster_start() runs initdb into a fresh temporary directory,
 * starts a server listening only on a Unix socket inside that directory (no
 * TCP: listen_addresses = ''), and hands back a libpq conninfo string for it.
 * swf_history_cluster_stop() stops the server and removes the directory.
 * In between, swf_history_cluster_down() and swf_history_cluster_up() stop
 * and start the server in place (same data, socket and conninfo), so tests
 * can prove that the daemons ride out a database restart: clients see their
 * connections closed (SQLSTATE 57P01), then refused, then accepted again.
 * fsync stays on, so benchmarks against such a cluster are honest.
 *
 * PostgreSQL refuses to run as root: when the process runs as root, initdb
 * and the server run as the `postgres` user (SWF_PG_USER overrides the name)
 * and the directory is handed to that user. The server binaries are looked
 * up in SWF_PG_BINDIR, then /usr/lib/postgresql/15/bin, then the newest
 * /usr/lib/postgresql/N/bin, then PATH; a missing one is named in the error.
 * The directory goes under SWF_PG_TMPDIR (default /tmp), which must be short
 * (under 40 bytes) and free of quotes, backslashes, `$`, backquotes and
 * commas; a space is fine (the conninfo quotes the host then).
 *
 * Ownership: the cluster handle owns its directory and server; the conninfo
 * string lives as long as the handle. Thread-safety: start and stop fork and
 * wait for children; call them from one thread.
 */
#ifndef SWF_HISTORY_CLUSTER_H
#define SWF_HISTORY_CLUSTER_H

#include "protocol/error.h"

typedef struct swf_history_cluster swf_history_cluster_t;

/* Creates and starts a cluster. On failure nothing is left behind and the
 * error's cause holds the tail of the server or initdb log. */
swf_error_t *swf_history_cluster_start(swf_history_cluster_t **out);

/* The libpq conninfo of the running cluster ("host=/tmp/swf-pg-... port=5432
 * user=postgres dbname=postgres"). */
const char *swf_history_cluster_conninfo(const swf_history_cluster_t *cluster);

/* The cluster's directory (socket, data/ and server.log live here). */
const char *swf_history_cluster_dir(const swf_history_cluster_t *cluster);

/* Stops the server with a fast shutdown (open transactions roll back,
 * every connection is closed) and waits until it is down; the data and the
 * directory stay. Down twice is fine. */
swf_error_t *swf_history_cluster_down(swf_history_cluster_t *cluster);

/* Starts the server again on the same data directory and socket, and waits
 * until it accepts connections. Up while up is fine. */
swf_error_t *swf_history_cluster_up(swf_history_cluster_t *cluster);

/* Down, then up. */
swf_error_t *swf_history_cluster_restart(swf_history_cluster_t *cluster);

/* Stops the server (fast shutdown) and removes the directory; NULL does
 * nothing. */
void swf_history_cluster_stop(swf_history_cluster_t *cluster);

#endif
