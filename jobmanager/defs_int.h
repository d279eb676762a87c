/*
 * Private to the definitions registry (defs.c, defs_workers.c,
 * defs_check.c): the registry's state and the helpers its files share.
 * Everything here runs under the registry's lock (see defs.c) or is pure.
 */
#ifndef SL_JM_DEFS_INT_H_INCLUDED
#define SL_JM_DEFS_INT_H_INCLUDED

#include "jobmanager/jobmanager_int.h"

#define NKINDS    3
#define FIELD_MAX 128 /* sizeof(struct sl_err.field) */
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

struct sl__jm_defs {
    pthread_rwlock_t lock;          /* guards every field below */
    json_t *defs[NKINDS];           /* per kind: name -> stored definition */
    json_t *dots;                   /* array of the data object types */
    struct sl__jm_worker **workers; /* sorted by name, never removed */
    size_t nworkers;
    sl__jm_def_check_fn check; /* the workers' definition check or NULL */
    void *check_arg;
};

/* "bucket", "workflow", "job" by enum sl__jm_kind, for messages. */
extern const char *const sl__jm_kind_names[NKINDS];

/*
 * Bounded formatting of field paths and messages: truncation is fine for
 * these (they are capped at their buffer), so the result is not checked.
 */
void sl__jm_fmt(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The string member @p key of @p obj, or NULL; borrowed. */
static inline const char *
sl__jm_str(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* The number of actions of workflow @p wf, the start action included. */
static inline size_t
sl__jm_wf_nactions(const json_t *wf)
{
    return 1 + json_array_size(json_object_get(wf, "actions"));
}

/* Action @p i of @p wf: 0 is the start action, then actions[i - 1];
 * borrowed. */
static inline const json_t *
sl__jm_wf_action(const json_t *wf, size_t i)
{
    if (i == 0) {
        return json_object_get(wf, "startAction");
    }
    return json_array_get(json_object_get(wf, "actions"), i - 1);
}

/* ------------------------------------------------------------------------
 * Helpers of defs.c.
 * --------------------------------------------------------------------- */

/* 1 if @p type names a known data object type. */
int sl__jm_dot_known(const char *type);
/* Worker @p name or NULL (unlocked); borrowed. */
const struct sl__jm_worker *sl__jm_find_worker(const struct sl__jm_defs *d,
                                               const char *name);
/* Data object type @p type or NULL (unlocked); borrowed. */
const json_t *sl__jm_find_dot(const struct sl__jm_defs *d, const char *type);
/* The field path ("startAction", "actions[3]") and the message label
 * ("start action", "action 4") of action @p i. */
void sl__jm_action_names(
    size_t i, char *path, size_t pcap, char *label, size_t lcap);
/* 1 if any action of @p wf reads or writes bucket @p name. */
int sl__jm_wf_uses_bucket(const json_t *wf, const char *name);
/* The DOT of transient bucket @p b of @p wf: the type of the slots it is
 * connected to, or NULL; borrowed. */
const char *sl__jm_transient_type(const struct sl__jm_defs *d,
                                  const json_t *wf,
                                  const char *b);
/* sl__jm_bucket_resolve without the lock, for validation under the write
 * lock. */
int sl__jm_bucket_resolve_locked(const struct sl__jm_defs *d,
                                 const json_t *job,
                                 const json_t *wf,
                                 const char *bucket,
                                 struct sl__jm_bucket_info *out,
                                 struct sl_err *err);

/* ------------------------------------------------------------------------
 * Worker descriptions (defs_workers.c).
 * --------------------------------------------------------------------- */

/* Slot @p name of @p slots or NULL; borrowed. */
const struct sl__jm_slot *
sl__jm_find_slot(const struct sl__jm_slot *slots, size_t n, const char *name);

/* ------------------------------------------------------------------------
 * Validation (defs_check.c), under the registry's write lock.
 * --------------------------------------------------------------------- */

/* Definition @p def of @p kind against the registry as it is now;
 * SL__JM_PUT_LENIENT in @p flags turns the mistake checks into warnings.
 * 0 or SL_EINVALDEF naming the field. */
int sl__jm_defs_validate(const struct sl__jm_defs *d,
                         enum sl__jm_kind kind,
                         const json_t *def,
                         unsigned flags,
                         struct sl_err *err);
/* After bucket or workflow @p name changed, what depends on it is still
 * valid; else fails with @p code naming the first that is not. */
int sl__jm_defs_check_dependents(const struct sl__jm_defs *d,
                                 enum sl__jm_kind kind,
                                 const char *name,
                                 int code,
                                 struct sl_err *err);

#endif
