/*
 * Private to the job schedules (sched_time.c: the calendar; sched.c: the
 * clock that starts, pauses and resumes runs), docs/jobmanager.md
 * "Schedules".  Pure data; no lock of its own.
 */
#ifndef SL_JM_SCHED_INT_H_INCLUDED
#define SL_JM_SCHED_INT_H_INCLUDED

#include <stdint.h>

#include <jansson.h>

#include "core/sl.h"

#define SL__JM_SCHED_MAX 32 /* start times of a job */

/* One start time: the values each field may take, as bit sets. */
struct sl__jm_sched_start {
    uint64_t minutes;  /* bit m: minute m, 0-59 */
    uint32_t hours;    /* bit h: 0-23 */
    uint32_t mdays;    /* bit d: 1-31 */
    uint16_t months;   /* bit m: 1-12 */
    uint8_t wdays;     /* bit d: 0 Sunday .. 6 Saturday */
    int64_t window_ms; /* how long a run may go on from it; 0: no limit */
};

/* A job's "schedule": the start times in a time zone, and what a run does
 * at the end of its window, and after a start missed while down. */
struct sl__jm_sched {
    char tz[64];
    char mode[16];     /* "runOnce", "standard" or "" (the workflow's first) */
    int finish_at_end; /* atWindowEnd "finish"; else "pause" */
    int run_missed;    /* runMissed */
    size_t n;
    struct sl__jm_sched_start s[SL__JM_SCHED_MAX];
};

/** Read the "schedule" of a job definition into @p out; 0, or
 * SL_EINVALDEF naming the key in @p err ("schedule"). */
int sl__jm_sched_parse(const json_t *sched,
                       struct sl__jm_sched *out,
                       struct sl_err *err);
/** The first start after @p after (ms since the epoch), and its window
 * (*@p window_ms, 0: none); -1 when there is none in eight years. */
int64_t sl__jm_sched_next(const struct sl__jm_sched *s,
                          int64_t after,
                          int64_t *window_ms);

/* A continuous run's intervals (continuous.c; docs/jobmanager.md
 * "Continuous crawling"): the job parameter "continuous". */
struct sl__jm_cont_cfg {
    int64_t check_ms;  /* checkSeconds: a pass starts this long after the
                          last one started */
    int64_t reseed_ms; /* reseedSeconds: a pass is a reseed this long
                          after the last reseed started */
    int64_t expiry_ms; /* expirySeconds: what no pass saw for this long
                          goes (read by the workers) */
};

/** Read the "continuous" parameter @p v (NULL: the defaults) into @p c;
 * 0 or SL_EINVALDEF naming "parameters.continuous[.key]". */
int sl__jm_continuous_parse(const json_t *v,
                            struct sl__jm_cont_cfg *c,
                            struct sl_err *err);

#endif /* SL_JM_SCHED_INT_H_INCLUDED */
