/*
 * Crash tests for the delta service: a child process writes (or scans) and
 * is killed with SIGKILL; the parent reopens the service and checks that
 *  - every mark_updated batch the child reported as written (through a
 *    pipe, after the call returned) is there,
 *  - every shard opens and a full cursor scan of both databases works,
 *  - an obsolete scan killed between callback and removal leaves the
 *    entries, and a scan killed anywhere only lost entries whose delete it
 *    had reported as sent,
 *  - every link of a visit batch the child reported as returned is still
 *    visited in that run (a new visit is not first).
 * Kill moments come from a fixed seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <lmdb.h>

#include "deltaservice/deltaservice.h"
#include "delta_fixture.h"

#define SRC       "crash"
#define BATCH     200
#define OBS_COUNT 5000
#define ROUNDS    5

static int
setup(void **state)
{
    return delta_setup(state, "delta-crash-", 0);
}

static struct sl_delta *
open_delta(const char *path)
{
    struct sl_delta *d = NULL;
    struct sl_err err;

    if (sl_delta_open(path, 16, SL_DURABILITY_PROCESS, 0, &d, &err) != 0) {
        fail_msg("open: %s", err.message);
    }
    return d;
}

/* Open one environment with LMDB directly and walk every database. */
static uint64_t
scan_env(const char *dir, const char *const *names, int n)
{
    MDB_env *env = NULL;
    MDB_txn *txn = NULL;
    uint64_t total = 0;
    int i = 0;

    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 4), 0);
    assert_int_equal(mdb_env_open(env, dir, MDB_NOTLS, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    for (i = 0; i < n; i++) {
        MDB_dbi dbi = 0;
        MDB_cursor *cur = NULL;
        MDB_val k;
        MDB_val v;
        int rc = 0;

        assert_int_equal(mdb_dbi_open(txn, names[i], 0, &dbi), 0);
        assert_int_equal(mdb_cursor_open(txn, dbi, &cur), 0);
        while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
            assert_true(k.mv_size > 0);
            total++;
        }
        assert_int_equal(rc, MDB_NOTFOUND);
        mdb_cursor_close(cur);
    }
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return total;
}

/* Every shard and the meta environment open and scan cleanly. */
static void
verify_envs(const char *path)
{
    static const char *const shard_dbs[] = {"entries", "elements", "visited"};
    static const char *const meta_dbs[] = {"config", "runs"};
    char dir[700];
    int i = 0;

    (void)snprintf(dir, sizeof(dir), "%s/meta", path);
    assert_true(scan_env(dir, meta_dbs, 2) >= 1);
    for (i = 0; i < 16; i++) {
        (void)snprintf(dir, sizeof(dir), "%s/shard-%02d", path, i);
        (void)scan_env(dir, shard_dbs, 3);
    }
}

/*
 * The kill of a crash test is meant for the operations, not for the first
 * creation of the shards: on a loaded machine that can outlast the
 * shortest delay and leave a shard without its databases, which the raw
 * scan of verify_envs calls corrupt (opening again creates them).  The
 * child writes -1 to the pipe once the service is open; the parent waits
 * for it before its delay starts.
 */
static void
child_opened(int wfd)
{
    int opened = -1;

    if (sl_write_all(wfd, &opened, sizeof(opened)) != 0) {
        _exit(4);
    }
}

static void
wait_opened(int rfd)
{
    int b = 0;

    assert_int_equal(read(rfd, &b, sizeof(b)), (ssize_t)sizeof(b));
    assert_int_equal(b, -1);
}

static void
batch_recs(int round,
           int b,
           char ids[BATCH][48],
           struct sl_delta_rec recs[BATCH])
{
    int i = 0;

    for (i = 0; i < BATCH; i++) {
        (void)snprintf(ids[i], sizeof(ids[i]), "r%d/b%06d/%d", round, b, i);
        memset(&recs[i], 0, sizeof(recs[i]));
        recs[i].id = ids[i];
        recs[i].hash = "hash";
        /* Every tenth record is an element of a per-batch compound. */
        if (i % 10 == 1) {
            recs[i].compound_id = ids[0];
        }
        recs[i].is_compound = i == 0;
    }
}

/* Child: mark batches until killed; report each after it returned. */
static _Noreturn void
child_mark(const char *path, int round, int wfd)
{
    static char ids[BATCH][48];
    static struct sl_delta_rec recs[BATCH];
    struct sl_delta *d = open_delta(path);
    struct sl_err err;
    int b = 0;

    child_opened(wfd);
    for (b = 0;; b++) {
        batch_recs(round, b, ids, recs);
        if (sl_delta_mark_updated(d, SRC, 1, recs, BATCH, &err) != 0) {
            _exit(3);
        }
        if (sl_write_all(wfd, &b, sizeof(b)) != 0) {
            _exit(4);
        }
    }
}

static void
test_delta_crash_mark_updated(void **state)
{
    struct fixture *f = *state;
    static char ids[BATCH][48];
    static struct sl_delta_rec recs[BATCH];
    unsigned seed = 42;
    int reported_total = 0;
    int round = 0;

    for (round = 0; round < ROUNDS; round++) {
        struct sl_delta *d = NULL;
        struct sl_err err;
        int fds[2];
        int status = 0;
        int b = 0;
        int n = 0;
        pid_t pid = 0;

        assert_int_equal(pipe(fds), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            (void)close(fds[0]);
            child_mark(f->path, round, fds[1]);
        }
        (void)close(fds[1]);
        wait_opened(fds[0]);
        (void)usleep(20000 + (useconds_t)(rand_r(&seed) % 200) * 1000);
        assert_int_equal(kill(pid, SIGKILL), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status));
        verify_envs(f->path);
        d = open_delta(f->path);
        while (read(fds[0], &b, sizeof(b)) == (ssize_t)sizeof(b)) {
            int i = 0;

            batch_recs(round, b, ids, recs);
            assert_int_equal(sl_delta_check(d, SRC, 1, recs, BATCH, &err), 0);
            for (i = 0; i < BATCH; i++) {
                assert_int_equal(recs[i].result, SL_DELTA_UPTODATE);
            }
            n++;
        }
        (void)close(fds[0]);
        sl_delta_close(d);
        reported_total += n;
    }
    assert_true(reported_total > 0);
}

/* ------------------------------------------------------------------------
 * Visited links
 * --------------------------------------------------------------------- */

static void
batch_links(int round,
            int b,
            char urls[BATCH][48],
            struct sl_delta_link links[BATCH])
{
    int i = 0;

    for (i = 0; i < BATCH; i++) {
        (void)snprintf(urls[i],
                       sizeof(urls[i]),
                       "http://h%d/r%d/b%06d/%d",
                       i % 9,
                       round,
                       b,
                       i);
        memset(&links[i], 0, sizeof(links[i]));
        links[i].url = urls[i];
    }
}

/* Child: visit batches of new links until killed; report each after the
 * call returned with every link first. */
static _Noreturn void
child_visit(const char *path, int round, int wfd)
{
    static char urls[BATCH][48];
    static struct sl_delta_link links[BATCH];
    struct sl_delta *d = open_delta(path);
    struct sl_err err;
    int b = 0;
    int i = 0;

    child_opened(wfd);
    for (b = 0;; b++) {
        batch_links(round, b, urls, links);
        if (sl_delta_visit(d, SRC, 1, 0, links, BATCH, &err) != 0) {
            _exit(3);
        }
        for (i = 0; i < BATCH; i++) {
            if (links[i].first != 1) {
                _exit(5);
            }
        }
        if (sl_write_all(wfd, &b, sizeof(b)) != 0) {
            _exit(4);
        }
    }
}

static void
test_delta_crash_visit(void **state)
{
    struct fixture *f = *state;
    static char urls[BATCH][48];
    static struct sl_delta_link links[BATCH];
    unsigned seed = 4242;
    int reported_total = 0;
    int round = 0;

    for (round = 0; round < ROUNDS; round++) {
        struct sl_delta *d = NULL;
        struct sl_err err;
        uint64_t n = 0;
        int fds[2];
        int status = 0;
        int b = 0;
        int count = 0;
        pid_t pid = 0;

        assert_int_equal(pipe(fds), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            (void)close(fds[0]);
            child_visit(f->path, round, fds[1]);
        }
        (void)close(fds[1]);
        wait_opened(fds[0]);
        (void)usleep(20000 + (useconds_t)(rand_r(&seed) % 200) * 1000);
        assert_int_equal(kill(pid, SIGKILL), 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        verify_envs(f->path);
        d = open_delta(f->path);
        while (read(fds[0], &b, sizeof(b)) == (ssize_t)sizeof(b)) {
            int i = 0;

            batch_links(round, b, urls, links);
            assert_int_equal(sl_delta_visit(d, SRC, 1, 0, links, BATCH, &err),
                             0);
            for (i = 0; i < BATCH; i++) {
                assert_int_equal(links[i].result, 0);
                assert_int_equal(links[i].first, 0); /* still visited */
            }
            count++;
        }
        (void)close(fds[0]);
        reported_total += count;
        assert_int_equal(sl_delta_visited_count(d, SRC, &n, NULL, &err), 0);
        assert_true(n >= (uint64_t)reported_total * BATCH);
        sl_delta_close(d);
    }
    assert_true(reported_total > 0);
}

/* ------------------------------------------------------------------------
 * Obsolete scan
 * --------------------------------------------------------------------- */

static void
mark_obsolete_set(const char *path)
{
    struct sl_delta_rec *recs = sl_calloc(OBS_COUNT, sizeof(*recs));
    char(*ids)[16] = sl_calloc(OBS_COUNT, sizeof(*ids));
    struct sl_delta *d = open_delta(path);
    struct sl_err err;
    int i = 0;

    for (i = 0; i < OBS_COUNT; i++) {
        (void)snprintf(ids[i], sizeof(ids[i]), "o-%05d", i);
        recs[i].id = ids[i];
        recs[i].hash = "h";
    }
    assert_int_equal(sl_delta_mark_updated(d, SRC, 1, recs, OBS_COUNT, &err),
                     0);
    sl_delta_close(d);
    sl_free(ids);
    sl_free(recs);
}

static int
die_in_callback(void *ctx, const struct sl_delta_obsolete *e, size_t n)
{
    (void)ctx;
    (void)e;
    (void)n;
    (void)raise(SIGKILL); /* deletes "sent", removal never happens */
    return 0;
}

static int
report_ids(void *ctx, const struct sl_delta_obsolete *e, size_t n)
{
    int fd = *(int *)ctx;
    size_t i = 0;

    for (i = 0; i < n; i++) {
        char rec[16];

        memset(rec, 0, sizeof(rec));
        (void)snprintf(rec, sizeof(rec), "%s", e[i].id);
        if (sl_write_all(fd, rec, sizeof(rec)) != 0) {
            return SL_EIO;
        }
    }
    return 0;
}

static _Noreturn void
child_scan(const char *path, int fd, int die)
{
    struct sl_delta *d = open_delta(path);
    struct sl_err err;
    unsigned i = 0;

    for (i = 0; i < 16; i++) {
        if (sl_delta_obsolete_scan(d,
                                   SRC,
                                   2,
                                   i,
                                   100,
                                   die ? die_in_callback : report_ids,
                                   &fd,
                                   NULL,
                                   &err) != 0) {
            _exit(3);
        }
    }
    _exit(0);
}

static void
test_delta_crash_between_callback_and_removal(void **state)
{
    struct fixture *f = *state;
    struct sl_delta *d = NULL;
    struct sl_err err;
    uint64_t n = 0;
    int status = 0;
    pid_t pid = 0;

    mark_obsolete_set(f->path);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        child_scan(f->path, -1, 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    verify_envs(f->path);
    d = open_delta(f->path);
    assert_int_equal(sl_delta_count(d, SRC, &n, NULL, &err), 0);
    assert_int_equal(n, OBS_COUNT);
    sl_delta_close(d);
}

static void
test_delta_crash_during_scan(void **state)
{
    struct fixture *f = *state;
    unsigned seed = 7;
    char *sent = sl_calloc(OBS_COUNT, 1);
    int round = 0;

    for (round = 0; round < ROUNDS; round++) {
        struct sl_delta *d = NULL;
        struct sl_err err;
        char rec[16];
        int fds[2];
        int status = 0;
        int i = 0;
        pid_t pid = 0;

        mark_obsolete_set(f->path); /* every entry back, visited 1 */
        memset(sent, 0, OBS_COUNT);
        assert_int_equal(pipe(fds), 0);
        (void)fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            (void)close(fds[0]);
            child_scan(f->path, fds[1], 0);
        }
        (void)close(fds[1]);
        (void)usleep((useconds_t)(rand_r(&seed) % 60) * 1000);
        (void)kill(pid, SIGKILL);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        while (read(fds[0], rec, sizeof(rec)) == (ssize_t)sizeof(rec)) {
            i = (int)strtol(rec + 2, NULL, 10);
            assert_true(i >= 0 && i < OBS_COUNT);
            sent[i] = 1;
        }
        (void)close(fds[0]);
        verify_envs(f->path);
        d = open_delta(f->path);
        for (i = 0; i < OBS_COUNT; i++) {
            struct sl_delta_rec r;
            char id[16];

            (void)snprintf(id, sizeof(id), "o-%05d", i);
            memset(&r, 0, sizeof(r));
            r.id = id;
            r.hash = "other";
            assert_int_equal(sl_delta_check(d, SRC, 3, &r, 1, &err), 0);
            if (r.result == SL_DELTA_NEW) {
                assert_true(sent[i]); /* removed only after "sent" */
            } else {
                assert_int_equal(r.result, SL_DELTA_CHANGED);
            }
        }
        sl_delta_close(d);
    }
    sl_free(sent);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_delta_crash_mark_updated, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_crash_between_callback_and_removal, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_crash_during_scan, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_delta_crash_visit, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
