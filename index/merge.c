/*
 * Embedded full-text index, merging when idle (docs/index.md "Segments"):
 * FTS5 keeps a shard's index as segments, b-trees written by each
 * transaction and merged into bigger ones level by level.  Writes merge
 * in big steps (automerge 16, schema.c): a level holds up to 15 segments,
 * and a query reads each of them, merging their lists of a word.  Once a
 * shard has had no write for set->idle_ms, a thread of the set runs FTS5's
 * 'merge' command on it in steps of MERGE_PAGES pages, each step its own
 * transaction under the shard's lock, until a step finds nothing to merge
 * (no level with usermerge, 4, segments or more) or a write comes: the
 * write goes first (a writer waiting for the lock ends the merge after
 * the step in progress: the lock is not fair, so the merger's next step
 * would otherwise take it again and again), and the merge starts again
 * after the next quiet time.
 * On the benchmark's index of 162,000 documents this took 15 segments per
 * shard to 3 and a word in most documents from 55 to 32 ms
 * (docs/performance.md).
 *
 * A merge interrupted by a crash is no loss: FTS5 keeps a merge in
 * progress in the index structure and the next step goes on with it.  A
 * shard is due when it is opened (a merge left over from the last
 * process, or an index written by an older one) and after every write.
 *
 * Threads: one merger thread per set, started by sl_index_set_idle_merge,
 * stopped by sl_index_close.  Locks: the merger takes set->mu (to pick a
 * shard and count itself a user of it) and ix->mu (a step) never at once;
 * set->merge_mu is a leaf lock guarding the wake-up flag.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "index/index_int.h"

#define MERGE_PAGES    "200" /* FTS5 pages written per step: about 12 ms */
#define WRITER_WAIT_MS 50    /* a shard a writer waits for: looked at again */

/* Wake the merger (a shard became due, or the set closes). */
static void
kick(struct sl_index_set *set)
{
    (void)pthread_mutex_lock(&set->merge_mu);
    set->merge_kick = 1;
    (void)pthread_cond_signal(&set->merge_cv);
    (void)pthread_mutex_unlock(&set->merge_mu);
}

void
sl__index_merge_due(struct sl__index *ix)
{
    struct sl_index_set *set = ix->set;

    if (set->idle_ms == 0) {
        return;
    }
    atomic_store(&ix->merge_due, sl_mono_ms() + (int64_t)set->idle_ms);
    if (set->merging) {
        kick(set);
    }
}

/* The shard due first (its time in *due), counted as a user; or NULL and
 * *due the earliest time one will be due (0: none). */
static struct sl__index *
pick(struct sl_index_set *set, int64_t now, int64_t *due)
{
    struct sl__index *best = NULL;
    struct sl__index *ix = NULL;

    *due = 0;
    (void)pthread_mutex_lock(&set->mu);
    for (ix = set->head; ix != NULL; ix = ix->next) {
        int64_t d = atomic_load(&ix->merge_due);

        if (d != 0 && atomic_load(&ix->writers) > 0) {
            d = now + WRITER_WAIT_MS; /* its write goes first */
        }
        if (d != 0 && !sl__index_dropping(set, ix->name) &&
            (*due == 0 || d < *due)) {
            *due = d;
            best = ix;
        }
    }
    if (best != NULL && *due <= now) {
        best->users++;
    } else {
        best = NULL;
    }
    (void)pthread_mutex_unlock(&set->mu);
    return best;
}

/* Keep merging @ix? (no stop, no drop of it, no write since @due). */
static int
go_on(struct sl__index *ix, int64_t due)
{
    struct sl_index_set *set = ix->set;
    int yes = 0;

    (void)pthread_mutex_lock(&set->mu);
    yes = !atomic_load(&set->merge_stop) &&
          !sl__index_dropping(set, ix->name) &&
          atomic_load(&ix->merge_due) == due && atomic_load(&ix->writers) == 0;
    (void)pthread_mutex_unlock(&set->mu);
    return yes;
}

/* One step on @ix: 1 when there is more to merge, 0 when done (or it
 * failed: logged, and tried again after the next write). */
static int
step(struct sl__index *ix, int64_t due)
{
    int64_t before = 0;
    int src = SQLITE_OK;
    int more = 0;

    (void)pthread_mutex_lock(&ix->mu);
    if (atomic_load(&ix->merge_due) != due || atomic_load(&ix->writers) > 0) {
        (void)pthread_mutex_unlock(&ix->mu); /* a write comes first */
        return 0;
    }
    before = sqlite3_total_changes64(ix->db);
    src = sqlite3_exec(ix->db,
                       "INSERT INTO documents_fts(documents_fts, rank)"
                       " VALUES('merge', " MERGE_PAGES ")",
                       NULL,
                       NULL,
                       NULL);
    /* FTS5: fewer than two rows changed means nothing was left to do */
    more = src == SQLITE_OK && sqlite3_total_changes64(ix->db) - before >= 2;
    if (src != SQLITE_OK) {
        SL_WARN("index '%s' shard %u: merging segments: %s",
                ix->name,
                ix->shard,
                sqlite3_errmsg(ix->db));
    }
    if (!more) {
        int64_t d = due;
        int busy = (src & 0xff) == SQLITE_BUSY || (src & 0xff) == SQLITE_LOCKED;

        /* done, or failed: tried again after the next write; a database
         * another process holds is tried again after a quiet time */
        (void)atomic_compare_exchange_strong(
            &ix->merge_due,
            &d,
            busy ? sl_mono_ms() + (int64_t)ix->set->idle_ms : 0);
    }
    (void)pthread_mutex_unlock(&ix->mu);
    return more;
}

/* Wait until @until (sl_mono_ms; 0: a kick) unless kicked or stopped. */
static void
nap(struct sl_index_set *set, int64_t until)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    if (until != 0) {
        int64_t ms = until - sl_mono_ms();

        ms = ms < 1 ? 1 : ms;
        ts.tv_sec += (time_t)(ms / 1000);
        ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    } else {
        ts.tv_sec += 3600;
    }
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    (void)pthread_mutex_lock(&set->merge_mu);
    while (!set->merge_kick && !atomic_load(&set->merge_stop) &&
           pthread_cond_timedwait(&set->merge_cv, &set->merge_mu, &ts) !=
               ETIMEDOUT) {
    }
    set->merge_kick = 0;
    (void)pthread_mutex_unlock(&set->merge_mu);
}

static void *
merger_main(void *arg)
{
    struct sl_index_set *set = arg;

    while (!atomic_load(&set->merge_stop)) {
        int64_t due = 0;
        struct sl__index *ix = pick(set, sl_mono_ms(), &due);

        if (ix == NULL) {
            nap(set, due);
            continue;
        }
        while (go_on(ix, due) && step(ix, due)) {
        }
        sl__index_unref(ix);
    }
    return NULL;
}

int
sl_index_set_idle_merge(struct sl_index_set *set, unsigned idle_ms)
{
    pthread_condattr_t ca;

    if (set->merging || idle_ms == 0) {
        set->idle_ms = idle_ms;
        return 0;
    }
    set->idle_ms = idle_ms;
    (void)pthread_mutex_init(&set->merge_mu, NULL);
    (void)pthread_condattr_init(&ca);
    (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    (void)pthread_cond_init(&set->merge_cv, &ca);
    (void)pthread_condattr_destroy(&ca);
    if (pthread_create(&set->merger, NULL, merger_main, set) != 0) {
        (void)pthread_cond_destroy(&set->merge_cv);
        (void)pthread_mutex_destroy(&set->merge_mu);
        set->idle_ms = 0;
        return SL_EINTERNAL;
    }
    set->merging = 1;
    return 0;
}

void
sl__index_merger_stop(struct sl_index_set *set)
{
    if (!set->merging) {
        return;
    }
    atomic_store(&set->merge_stop, 1);
    kick(set);
    (void)pthread_join(set->merger, NULL);
    (void)pthread_cond_destroy(&set->merge_cv);
    (void)pthread_mutex_destroy(&set->merge_mu);
    set->merging = 0;
}
