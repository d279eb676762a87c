/*
 * Private to the bulkbuilder (bulkbuilder.c, journal.c, committer.c): its
 * state and the functions its files share.  bulkbuilder.h describes the
 * model and the crash argument, docs/bulkbuilder.md the files.
 *
 * Threading: a job's journals are appended to by the threads that push
 * records, one at a time under the job's mu; the committer thread
 * (committer.c) seals by time and commits the sealed bulks; the life
 * cycle (bulkbuilder.c) starts and stops it.  Each field says what guards
 * it.
 */
#ifndef SL_BULKBUILDER_INT_H_INCLUDED
#define SL_BULKBUILDER_INT_H_INCLUDED

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "bulkbuilder/bulkbuilder.h"

#define NSLOTS 2

/* The output slots of the bulkbuilder worker: inserts, then deletes. */
extern const char *const sl__bb_slot_names[NSLOTS];

/* The open journal of one slot. */
struct sl__bb_journal {
    int fd; /* -1: none open */
    struct sl_sink sink;
    struct sl_bulk_writer *w;
    uint64_t count; /* complete records */
};

struct sl__bb_job {
    struct sl__bb_job *next;
    char *name;
    char *dir; /* <bb dir>/j.<name> */
    pthread_mutex_t mu;
    struct sl__bb_journal jr[NSLOTS];
    int64_t opened_ms; /* sl_mono_ms of the first open record, or 0 */
    uint64_t next_seq;
    /* every slot of the bulks below it is linked: sl__bb_seal links slot by
     * slot, and the committer must not take a bulk half linked (it would
     * commit slot 0 and remove a slot 1 linked after its copy) */
    atomic_uint_fast64_t sealed_below;
    /* statistics: accepted under mu, the others atomic */
    uint64_t accepted;
    atomic_uint_fast64_t committed; /* atomics: the committer never waits */
    atomic_uint_fast64_t pending;   /* sealed, not yet committed */
    int waiting;         /* the committer found the job not running */
    atomic_int draining; /* sl_bb_drain calls waiting: no max_active */
    /* committer only: the task of bulk cur_seq kept between attempts
     * (its lease renewed), so a failing copy never costs a new task */
    json_t *cur;
    uint64_t cur_seq;
    struct sl_backoff nospace; /* a full disk pauses the job's commits */
};

struct sl_bb {
    struct sl_bb_config cfg;
    char *dir;
    pthread_mutex_t vmu; /* epoch and counter */
    uint64_t epoch;      /* persisted; taken anew at start and on wrap */
    uint64_t counter;    /* records stamped in this epoch */
    struct sl_jm *jm;
    struct sl_obj *store;
    pthread_mutex_t mu; /* jobs list, stop, kick */
    pthread_cond_t cv;
    struct sl__bb_job *jobs;
    pthread_t thread;
    int started;
    int stop;
    int kick;
};

struct sl_bb_rec {
    struct sl_bb *bb;
    struct sl__bb_job *j;
    int slot;
    off_t start; /* journal size before the record */
};

/* ------------------------------------------------------------------------
 * Jobs and versions (bulkbuilder.c).
 * --------------------------------------------------------------------- */

/* The job @p name, created (with its directory) when missing; jobs are
 * never removed before sl_bb_close.  Takes bb->mu. */
int sl__bb_job_get(struct sl_bb *bb,
                   const char *name,
                   struct sl__bb_job **out,
                   struct sl_err *err);
/* The next `_version` of a record; takes bb->vmu. */
uint64_t sl__bb_next_version(struct sl_bb *bb);

/* ------------------------------------------------------------------------
 * Files and journals (journal.c).
 * --------------------------------------------------------------------- */

/* The file of slot @p slot of sealed bulk @p seq (new string). */
char *sl__bb_bulk_path(const struct sl__bb_job *j, uint64_t seq, int slot);
/* The task file of bulk @p seq (new string). */
char *sl__bb_task_path(const struct sl__bb_job *j, uint64_t seq);
/* The file that says the task of bulk @p seq is finished (new string). */
char *sl__bb_done_path(const struct sl__bb_job *j, uint64_t seq);
/* fsync directory @p dir in fsync durability mode: 0 or -errno. */
int sl__bb_sync_dir(const struct sl_bb *bb, const char *dir);
/* Seal the open journals of @p j into bulk number next_seq; j->mu held. */
int sl__bb_seal(struct sl_bb *bb, struct sl__bb_job *j, struct sl_err *err);
/* At start: turn the journals of @p j left by the last process into
 * bulks; takes j->mu. */
void sl__bb_recover_journals(struct sl_bb *bb, struct sl__bb_job *j);
/* Remove the spool files a crash left in @p dir. */
void sl__bb_sweep_spools(const char *dir);

/* ------------------------------------------------------------------------
 * The committer (committer.c).
 * --------------------------------------------------------------------- */

/* The task stored in task file @p path, or NULL. */
json_t *sl__bb_load_task(const char *path);
/* Sealed bulk numbers of @p j, ascending (new array of *n). */
uint64_t *sl__bb_sealed_seqs(const struct sl__bb_job *j, size_t *n);
/* Finish every todo task of the bulkbuilder empty. */
void sl__bb_sweep_orphans(struct sl_bb *bb);
/* The committer thread, started by sl_bb_start and joined by
 * sl_bb_close; @p arg is the bulkbuilder. */
void *sl__bb_committer_main(void *arg);

#endif /* SL_BULKBUILDER_INT_H_INCLUDED */
