/*
 * cluster.c - a throwaway PostgreSQL cluster in a temporary directory.
 *
 * Everything goes through initdb and pg_ctl run as child processes, so the
 * cluster is a real server configured like production, not a mock: tests
 * that pass here pass against any PostgreSQL 15. The server listens on a
 * Unix socket in its own directory only, which keeps parallel test binaries
 * from colliding on ports and keeps the cluster unreachable from outside.
 *
 * When we run as root the children drop to the postgres user before exec
 * (PostgreSQL refuses root), and the directory is chowned to that user; root
 * can still reach the socket. Removal walks the directory with nftw.
 *
 * pg_ctl leaves the server running as a daemon, so a process that dies
 * without stopping its cluster (SIGKILL, a crash, a test runner's timeout)
 * would leave a server and its folder behind. A reaper child watches for
 * that (see reaper_start) and cleans up after it.
 */
#define _XOPEN_SOURCE 700
#include "history/cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <glob.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct swf_history_cluster {
    char dir[64];
    char bindir[512];
    char conninfo[256];
    uid_t uid; /* the user the server runs as */
    gid_t gid;
    bool drop; /* run children as uid/gid */
    bool started;
    pid_t reaper;  /* 0: none */
    int reaper_fd; /* the write end of its pipe */
};

/* The newest /usr/lib/postgresql/N/bin holding initdb (Debian's layout:
 * one folder per major version, none of them on PATH), into out. */
static bool find_debian_bindir(char *out, size_t size)
{
    glob_t g;
    int best = 0;
    if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) != 0)
        return false;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        int v = atoi(g.gl_pathv[i] + strlen("/usr/lib/postgresql/"));
        if (v > best && access(g.gl_pathv[i], X_OK) == 0) {
            best = v;
            snprintf(out, size, "/usr/lib/postgresql/%d/bin/", v);
        }
    }
    globfree(&g);
    return best > 0;
}

/* The folder of the initdb that PATH finds, symlinks resolved (initdb
 * looks for postgres beside its real self), into out. */
static bool find_path_bindir(char *out, size_t size)
{
    const char *env = getenv("PATH");
    while (env != NULL && *env != '\0') {
        const char *end = strchr(env, ':');
        size_t len = end ? (size_t)(end - env) : strlen(env);
        char path[1024], real[PATH_MAX];
        snprintf(path, sizeof(path), "%.*s/initdb", (int)len, len ? env : ".");
        if (access(path, X_OK) == 0 && realpath(path, real) != NULL) {
            strrchr(real, '/')[1] = '\0';
            int w = snprintf(out, size, "%s", real);
            return w > 0 && (size_t)w < size;
        }
        env = end ? end + 1 : NULL;
    }
    return false;
}

/* The folder of the server programs, ending in '/': SWF_PG_BINDIR, else
 * Debian's, else initdb's on PATH; empty when there is none. */
static void find_bindir(char *out, size_t size)
{
    const char *env = getenv("SWF_PG_BINDIR");
    if (env != NULL && env[0] != '\0') {
        snprintf(out, size, "%s/", env);
        return;
    }
    if (access("/usr/lib/postgresql/15/bin/initdb", X_OK) == 0) {
        snprintf(out, size, "/usr/lib/postgresql/15/bin/");
        return;
    }
    if (find_debian_bindir(out, size) || find_path_bindir(out, size))
        return;
    out[0] = '\0';
}

/* Whether bindir holds prog, ready to run. */
static bool have_program(const char *bindir, const char *prog)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s%s", bindir, prog);
    return bindir[0] != '\0' && access(path, X_OK) == 0;
}

/* In a child of run(): says why it gives up on stderr (the log, which
 * becomes the error's cause) and exits. Only write(2): the parent may have
 * threads. */
static void child_fail(int status, const char *a, const char *b, const char *c)
{
    const char *parts[] = {a, b, c, "\n"};
    for (int i = 0; i < 4; i++) {
        if (write(2, parts[i], strlen(parts[i])) < 0)
            break;
    }
    _exit(status);
}

/* Runs bindir/prog with args as the server user, output appended to log.
 * Returns the exit status, or -1 when it could not run. */
static int run(const swf_history_cluster_t *c, const char *log, char *const argv[])
{
    /* The full path goes in argv[0] too: PostgreSQL's programs find each
     * other (initdb its postgres, pg_ctl its postgres) from their own
     * argv[0], through PATH when it has no slash, and Debian keeps them
     * off PATH. */
    char prog[600];
    snprintf(prog, sizeof(prog), "%s%s", c->bindir, argv[0]);
    char *args[16];
    size_t n = 0;
    args[n++] = prog;
    while (argv[n] != NULL && n < sizeof(args) / sizeof(args[0]) - 1) {
        args[n] = argv[n];
        n++;
    }
    args[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            if (c->drop && fchown(fd, c->uid, c->gid) != 0)
                _exit(126);
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) {
            dup2(null, 0);
            close(null);
        }
        if (c->drop && (setgroups(0, NULL) != 0 || setgid(c->gid) != 0 || setuid(c->uid) != 0))
            child_fail(126, "cannot switch to the server's user to run ", argv[0], "");
        if (chdir(c->dir) != 0)
            child_fail(126, "cannot enter ", c->dir,
                       c->drop ? " as the server's user: every folder above it must let it "
                                 "through (SWF_PG_TMPDIR)"
                               : "");
        execv(prog, args);
        child_fail(127, "cannot run ", prog, "");
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The last few hundred bytes of a log, for error causes. */
static void log_tail(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        long from = end > (long)size - 1 ? end - ((long)size - 1) : 0;
        if (fseek(f, from, SEEK_SET) == 0) {
            size_t n = fread(buf, 1, size - 1, f);
            buf[n] = '\0';
        }
    }
    fclose(f);
}

/* pg_ctl start, waiting (60 s at most) until the server accepts connections. */
static swf_error_t *server_start(swf_history_cluster_t *c)
{
    char data[128], log[128];
    snprintf(data, sizeof(data), "%s/data", c->dir);
    snprintf(log, sizeof(log), "%s/server.log", c->dir);
    char *start[] = {"pg_ctl", "-D", data, "-l", log, "-w", "-t", "60", "start", NULL};
    if (run(c, log, start) != 0) {
        /* pg_ctl gave up (its time ran out, or it was interrupted: Ctrl-C
         * reaches it too), but the server it launched runs in a session of
         * its own and may be up or coming up: stop it, or it would outlive
         * its folder. Without a postmaster.pid this fails at once. */
        char *kill[] = {"pg_ctl", "-D", data, "-m", "immediate", "-w", "stop", NULL};
        run(c, log, kill);
        return swf_error_new(SWF_E_IO, NULL, "the PostgreSQL server in %s did not start", c->dir);
    }
    c->started = true;
    return NULL;
}

/* pg_ctl stop in fast mode (immediate when that fails), waiting until the
 * server is gone. */
static swf_error_t *server_stop(swf_history_cluster_t *c)
{
    char data[128], log[128];
    snprintf(data, sizeof(data), "%s/data", c->dir);
    snprintf(log, sizeof(log), "%s/server.log", c->dir);
    char *stop[] = {"pg_ctl", "-D", data, "-m", "fast", "-w", "-t", "60", "stop", NULL};
    if (run(c, log, stop) != 0) {
        char *kill[] = {"pg_ctl", "-D", data, "-m", "immediate", "-w", "stop", NULL};
        if (run(c, log, kill) != 0)
            return swf_error_new(SWF_E_IO, NULL, "the PostgreSQL server in %s did not stop",
                                 c->dir);
    }
    c->started = false;
    return NULL;
}

/*
 * The reaper: a child that blocks reading a pipe whose only write end this
 * process holds (close-on-exec, so pg_ctl and the servers do not keep it).
 * A byte means "stopped cleanly, go"; end of file means this process died:
 * it then sends SIGQUIT to the postmaster named in postmaster.pid
 * (immediate shutdown), waits for it to go, and removes the folder. It
 * leaves our process group (a runner may kill the group whole) and closes
 * every other descriptor it inherited, so no socket of ours stays open in
 * it. Only async-signal-safe calls after the fork: the parent may have
 * threads.
 */
static void reaper_main(int fd, const char *dir, const char *pidfile)
{
    setsid();
    for (int i = 0; i < 1024; i++) {
        if (i != fd)
            close(i);
    }
    char byte;
    ssize_t n;
    while ((n = read(fd, &byte, 1)) < 0 && errno == EINTR)
        ;
    if (n == 1)
        _exit(0);
    int pf = open(pidfile, O_RDONLY);
    long pm = 0;
    if (pf >= 0) {
        char buf[32];
        ssize_t got = read(pf, buf, sizeof(buf) - 1);
        for (ssize_t i = 0; i < got && buf[i] >= '0' && buf[i] <= '9'; i++)
            pm = pm * 10 + (buf[i] - '0');
        close(pf);
    }
    if (pm > 0 && kill((pid_t)pm, SIGQUIT) == 0) {
        struct timespec tick = {0, 100000000};
        for (int i = 0; i < 100 && kill((pid_t)pm, 0) == 0; i++)
            nanosleep(&tick, NULL);
    }
    char *const rm[] = {"rm", "-rf", (char *)dir, NULL};
    execv("/bin/rm", rm);
    _exit(1);
}

static void reaper_start(swf_history_cluster_t *c)
{
    int fds[2];
    if (pipe(fds) != 0)
        return; /* no reaper: a stop still cleans up */
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    char pidfile[128];
    snprintf(pidfile, sizeof(pidfile), "%s/data/postmaster.pid", c->dir);
    pid_t pid = fork();
    if (pid == 0)
        reaper_main(fds[0], c->dir, pidfile);
    close(fds[0]);
    if (pid < 0) {
        close(fds[1]);
        return;
    }
    c->reaper = pid;
    c->reaper_fd = fds[1];
}

/* Tells the reaper all is clean, and waits for it. */
static void reaper_stop(swf_history_cluster_t *c)
{
    if (c->reaper <= 0)
        return;
    char byte = 'x';
    ssize_t n;
    while ((n = write(c->reaper_fd, &byte, 1)) < 0 && errno == EINTR)
        ;
    close(c->reaper_fd);
    while (waitpid(c->reaper, NULL, 0) < 0 && errno == EINTR)
        ;
    c->reaper = 0;
}

swf_error_t *swf_history_cluster_start(swf_history_cluster_t **out)
{
    *out = NULL;
    swf_history_cluster_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        abort();
    find_bindir(c->bindir, sizeof(c->bindir));
    /* initdb and pg_ctl find postgres beside themselves, not on PATH. */
    const char *progs[] = {"initdb", "pg_ctl", "postgres"};
    for (size_t i = 0; i < 3; i++) {
        if (!have_program(c->bindir, progs[i])) {
            swf_error_t *err = swf_error_new(
                SWF_E_IO, NULL,
                "no PostgreSQL server program %s in %s (install PostgreSQL 15 or newer, "
                "or set SWF_PG_BINDIR to the folder of initdb, pg_ctl and postgres)",
                progs[i], c->bindir[0] != '\0' ? c->bindir : "PATH");
            free(c);
            return err;
        }
    }
    const char *tmp = getenv("SWF_PG_TMPDIR");
    if (tmp == NULL || tmp[0] == '\0')
        tmp = "/tmp";
    /* Unix socket paths are short (108 bytes): keep the directory short too.
     * The folder name goes into postgresql.conf, pg_ctl's shell command and
     * the conninfo: refuse what one of them would misread (a space is fine). */
    if (strlen(tmp) >= 40 || strpbrk(tmp, "'\"\\$`,\n\r\t") != NULL) {
        free(c);
        return swf_error_new(SWF_E_IO, NULL,
                             "SWF_PG_TMPDIR \"%s\" must be shorter than 40 bytes and hold "
                             "none of ' \" \\ $ ` , or control characters",
                             tmp);
    }
    snprintf(c->dir, sizeof(c->dir), "%s/swf-pg-XXXXXX", tmp);
    if (mkdtemp(c->dir) == NULL) {
        swf_error_t *err =
            swf_error_new(SWF_E_IO, NULL, "cannot create %s: %s", c->dir, strerror(errno));
        free(c);
        return err;
    }
    reaper_start(c);
    if (geteuid() == 0) {
        const char *user = getenv("SWF_PG_USER");
        struct passwd *pw = getpwnam(user != NULL ? user : "postgres");
        if (pw == NULL) {
            reaper_stop(c);
            remove_tree(c->dir);
            free(c);
            return swf_error_new(SWF_E_IO, NULL,
                                 "running as root and there is no \"%s\" user to run PostgreSQL as",
                                 user != NULL ? user : "postgres");
        }
        c->uid = pw->pw_uid;
        c->gid = pw->pw_gid;
        c->drop = true;
        if (chown(c->dir, c->uid, c->gid) != 0) {
            swf_error_t *err =
                swf_error_new(SWF_E_IO, NULL, "chown %s: %s", c->dir, strerror(errno));
            reaper_stop(c);
            remove_tree(c->dir);
            free(c);
            return err;
        }
    }

    char data[128], log[128], conf[160];
    snprintf(data, sizeof(data), "%s/data", c->dir);
    snprintf(log, sizeof(log), "%s/server.log", c->dir);
    snprintf(conf, sizeof(conf), "%s/postgresql.conf", data);
    swf_error_t *err = NULL;
    char *initdb[] = {"initdb", "-D", data,   "-U",          "postgres", "-A",
                      "trust",  "-E", "UTF8", "--no-locale", "-N",       NULL};
    if (run(c, log, initdb) != 0) {
        err = swf_error_new(SWF_E_IO, NULL, "initdb failed in %s", c->dir);
        goto out;
    }
    /* Settings go in postgresql.conf rather than on the command line so that
     * nothing has to survive pg_ctl's shell quoting. */
    FILE *f = fopen(conf, "a");
    if (f == NULL) {
        err = swf_error_new(SWF_E_IO, NULL, "%s: %s", conf, strerror(errno));
        goto out;
    }
    fprintf(f,
            "\n# swf throwaway cluster\n"
            "listen_addresses = ''\n"
            "unix_socket_directories = '%s'\n"
            "port = 5432\n"
            "fsync = on\n"
            "max_connections = 200\n"
            "logging_collector = off\n",
            c->dir);
    fclose(f);
    err = server_start(c);
    if (err != NULL)
        goto out;
    /* A value with a space must be quoted for libpq (no quote or backslash
     * can be in it, see above). */
    const char *q = strchr(c->dir, ' ') != NULL ? "'" : "";
    snprintf(c->conninfo, sizeof(c->conninfo),
             "host=%s%s%s port=5432 user=postgres dbname=postgres", q, c->dir, q);
out:
    if (err != NULL) {
        char tail[512];
        log_tail(log, tail, sizeof(tail));
        swf_error_set_cause(err, tail);
        swf_history_cluster_stop(c);
        return err;
    }
    *out = c;
    return NULL;
}

const char *swf_history_cluster_conninfo(const swf_history_cluster_t *cluster)
{
    return cluster->conninfo;
}

const char *swf_history_cluster_dir(const swf_history_cluster_t *cluster)
{
    return cluster->dir;
}

/* The log tail goes into the error's cause, as for start. */
static swf_error_t *with_log_tail(swf_history_cluster_t *c, swf_error_t *err)
{
    if (err != NULL) {
        char log[128], tail[512];
        snprintf(log, sizeof(log), "%s/server.log", c->dir);
        log_tail(log, tail, sizeof(tail));
        swf_error_set_cause(err, tail);
    }
    return err;
}

swf_error_t *swf_history_cluster_down(swf_history_cluster_t *cluster)
{
    return cluster->started ? with_log_tail(cluster, server_stop(cluster)) : NULL;
}

swf_error_t *swf_history_cluster_up(swf_history_cluster_t *cluster)
{
    return cluster->started ? NULL : with_log_tail(cluster, server_start(cluster));
}

swf_error_t *swf_history_cluster_restart(swf_history_cluster_t *cluster)
{
    swf_error_t *err = swf_history_cluster_down(cluster);
    return err != NULL ? err : swf_history_cluster_up(cluster);
}

void swf_history_cluster_stop(swf_history_cluster_t *cluster)
{
    if (cluster == NULL)
        return;
    if (cluster->started)
        swf_error_free(server_stop(cluster));
    remove_tree(cluster->dir);
    reaper_stop(cluster);
    free(cluster);
}
