/*
 * Questions other layers ask about the active runs before they remove
 * something a run may use: here whether an action of a worker resolves a
 * parameter to a value (the HTTP layer asks it for the indexWriter's
 * index before deleting an index).  The jobmanager knows no concrete
 * worker: the caller names worker, parameter and its default.
 */
#include <stdio.h>
#include <string.h>

#include "jobmanager/engine_int.h"

/* Does action @act of run @r, of worker @worker, resolve @param to
 * @value (an unset parameter counting as @dflt)?  jm->mu held. */
static int
action_uses(const struct run *r,
            const json_t *act,
            const char *worker,
            const char *param,
            const char *dflt,
            const char *value)
{
    const char *w = json_string_value(json_object_get(act, "worker"));
    json_t *params = NULL;
    const json_t *v = NULL;
    const char *s = NULL;
    int used = 0;

    if (w == NULL || strcmp(w, worker) != 0) {
        return 0;
    }
    params = sl__jm_task_params(r->jobdef, r->wfdef, act);
    v = json_object_get(params, param);
    s = v == NULL ? dflt : json_string_value(v);
    used = s != NULL && strcmp(s, value) == 0;
    json_decref(params);
    return used;
}

int
sl_jm_param_in_use(struct sl_jm *jm,
                   const char *worker,
                   const char *param,
                   const char *dflt,
                   const char *value,
                   char job[SL_NAME_MAX + 1])
{
    const struct run *r = NULL;
    const json_t *act = NULL;
    int used = 0;
    int i = 0;

    (void)pthread_mutex_lock(&jm->mu);
    for (r = jm->runs; r != NULL && !used; r = r->next) {
        for (i = 0; !used && (act = sl__jm_action(r, i)) != NULL; i++) {
            used = action_uses(r, act, worker, param, dflt, value);
        }
        if (used && job != NULL) {
            (void)snprintf(job, SL_NAME_MAX + 1, "%s", r->job);
        }
    }
    (void)pthread_mutex_unlock(&jm->mu);
    return used;
}
