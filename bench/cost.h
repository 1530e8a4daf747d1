/*
 * cost.h - what a run cost, in figures a loaded machine bends little: the
 * CPU time of this process's threads (grouped by name: librdkafka's
 * threads are "rdk:...", the rest, deciders, swf-history's and the
 * worker's, carry the program's name) and of PostgreSQL's processes (the
 * postmaster and its children: backends, WAL writer, checkpointer), read
 * from /proc; the WAL written (bytes, from the WAL insert position) and
 * the transactions that wrote (transaction ids assigned, from the next
 * one), both exact at once. A benchmark takes a sample before and after
 * and prints the difference per step.
 *
 * With SWF_BENCH_COST_STATS=1 also PostgreSQL's cumulative counters: WAL
 * records (pg_stat_wal), rows inserted, updated, deleted
 * (pg_stat_database). A backend publishes those late (when idle, up to
 * 10 s after its last flush), so each sample then waits 10.5 s for them
 * (the wait is in neither sample's CPU).
 * Same machine only (PostgreSQL's processes are read from this machine's
 * /proc). On any failure the figures are left at 0 and the line says so; a
 * measurement never stops a benchmark.
 */
#ifndef SWF_BENCH_COST_H
#define SWF_BENCH_COST_H

#include <dirent.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_COST_GROUPS 8

typedef struct bench_cost {
    bool pg_ok, stats;
    double pg_cpu_s; /* the postmaster and its children */
    double wal_bytes, xids, wal_records, inserted, updated, deleted;
    int ngroups; /* this process's threads, by name */
    char group[BENCH_COST_GROUPS][20];
    double group_s[BENCH_COST_GROUPS];
} bench_cost_t;

/* utime + stime (seconds) and the parent's pid of /proc/PATH/stat; the
 * name (comm) into name when not NULL. False when unreadable. */
static inline bool bench_cost_stat(const char *path, double *cpu_s, long *ppid, char *name,
                                   size_t cap)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (open == NULL || close == NULL)
        return false;
    if (name != NULL) {
        size_t len = (size_t)(close - open - 1) < cap - 1 ? (size_t)(close - open - 1) : cap - 1;
        memcpy(name, open + 1, len);
        name[len] = '\0';
        if (strncmp(name, "rdk:", 4) == 0)
            name[4] = '\0'; /* every librdkafka thread in one group */
    }
    unsigned long long ut, st;
    char state;
    if (sscanf(close + 2, "%c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state, ppid, &ut,
               &st) != 4)
        return false;
    *cpu_s = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    return true;
}

/* The counters PostgreSQL publishes late (SWF_BENCH_COST_STATS=1), after
 * the wait for them. */
static inline void bench_cost_stats(PGconn *conn, bench_cost_t *c)
{
    usleep(10500000);
    PGresult *r = PQexec(conn, "SELECT w.wal_records, sum(d.tup_inserted), sum(d.tup_updated),"
                               " sum(d.tup_deleted) FROM pg_stat_wal w, pg_stat_database d"
                               " GROUP BY w.wal_records");
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        double *v[4] = {&c->wal_records, &c->inserted, &c->updated, &c->deleted};
        for (int k = 0; k < 4; k++)
            *v[k] = atof(PQgetvalue(r, 0, k));
        c->stats = true;
    }
    PQclear(r);
}

/* A sample; `end` says it ends the run: the slow counters' wait then comes
 * after the CPU is read, not before, so that no sample counts it. */
static inline void bench_cost_take(const char *conninfo, bool end, bench_cost_t *c)
{
    memset(c, 0, sizeof(*c));
    const char *st = getenv("SWF_BENCH_COST_STATS");
    bool stats = st != NULL && strcmp(st, "1") == 0;
    PGconn *conn = PQconnectdb(conninfo);
    if (PQstatus(conn) == CONNECTION_OK && stats && !end)
        bench_cost_stats(conn, c);
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[300], name[20];
        double s;
        long pp;
        snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
        if (e->d_name[0] == '.' || !bench_cost_stat(path, &s, &pp, name, sizeof(name)))
            continue;
        int g = 0;
        while (g < c->ngroups && strcmp(c->group[g], name) != 0)
            g++;
        if (g == c->ngroups && c->ngroups < BENCH_COST_GROUPS)
            snprintf(c->group[c->ngroups++], sizeof(c->group[0]), "%s", name);
        if (g < c->ngroups)
            c->group_s[g] += s;
    }
    if (d != NULL)
        closedir(d);
    PGresult *r = PQstatus(conn) == CONNECTION_OK
                      ? PQexec(conn, "SELECT pg_backend_pid(),"
                                     " pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0'),"
                                     " pg_snapshot_xmax(pg_current_snapshot())::text::numeric")
                      : NULL;
    if (r != NULL && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        c->wal_bytes = atof(PQgetvalue(r, 0, 1));
        c->xids = atof(PQgetvalue(r, 0, 2));
        /* The backend's parent is the postmaster; its children are
         * PostgreSQL's processes (this connection's own included: it
         * exists in both samples). */
        char path[64];
        double s;
        long postmaster = 0, pp;
        snprintf(path, sizeof(path), "/proc/%s/stat", PQgetvalue(r, 0, 0));
        if (bench_cost_stat(path, &s, &postmaster, NULL, 0) && postmaster > 1 &&
            (d = opendir("/proc")) != NULL) {
            c->pg_ok = true;
            while ((e = readdir(d)) != NULL) {
                snprintf(path, sizeof(path), "/proc/%.20s/stat", e->d_name);
                if (e->d_name[0] >= '0' && e->d_name[0] <= '9' &&
                    bench_cost_stat(path, &s, &pp, NULL, 0) &&
                    (pp == postmaster || atol(e->d_name) == postmaster))
                    c->pg_cpu_s += s;
            }
            closedir(d);
        }
    }
    PQclear(r);
    if (PQstatus(conn) == CONNECTION_OK && stats && end)
        bench_cost_stats(conn, c);
    PQfinish(conn);
}

/* One line per step: each thread group's CPU, PostgreSQL's, its WAL and
 * rows. A connection that closed between the samples took its CPU with it
 * (bench_steps' connections live the whole run). */
static inline void bench_cost_print(const bench_cost_t *a, const bench_cost_t *b, double steps)
{
    if (steps <= 0)
        return;
    printf("  cost a step (CPU ms):");
    for (int g = 0; g < b->ngroups; g++) {
        double before = 0;
        for (int k = 0; k < a->ngroups; k++)
            if (strcmp(a->group[k], b->group[g]) == 0)
                before = a->group_s[k];
        printf(" %s %.3f,", b->group[g], (b->group_s[g] - before) * 1000 / steps);
    }
    if (!a->pg_ok || !b->pg_ok) {
        printf(" PostgreSQL not measured\n");
        return;
    }
    printf(" PostgreSQL %.3f; WAL %.0f bytes, %.2f writing transactions",
           (b->pg_cpu_s - a->pg_cpu_s) * 1000 / steps, (b->wal_bytes - a->wal_bytes) / steps,
           (b->xids - a->xids) / steps);
    if (a->stats && b->stats)
        printf("; WAL records %.1f, rows %.2f inserted %.2f updated %.2f deleted",
               (b->wal_records - a->wal_records) / steps, (b->inserted - a->inserted) / steps,
               (b->updated - a->updated) / steps, (b->deleted - a->deleted) / steps);
    printf("\n");
}

#endif
