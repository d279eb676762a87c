/*
 * Events: prerequisite events of tasks (sl_jm_event_begin and
 * sl_jm_event_complete).
 */
#include <string.h>

#include "jobmanager/engine_int.h"

int
sl_jm_event_name_check(const char *name, const char *field, struct sl_err *err)
{
    size_t len = name != NULL ? strlen(name) : 0;
    size_t i = 0;

    if (len == 0 || len > SL_NAME_MAX) {
        return sl_err_set(err,
                          SL_EINVAL,
                          field,
                          "an event name must have 1 to %d bytes, not %zu",
                          SL_NAME_MAX,
                          len);
    }
    for (i = 0; i < len; i++) {
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) {
            return sl_err_set(err,
                              SL_EINVAL,
                              field,
                              "an event name cannot hold the control "
                              "character 0x%02x (offset %zu)",
                              (unsigned)(unsigned char)name[i],
                              i);
        }
    }
    if (!sl_utf8_valid(name, len)) {
        return sl_err_set(err, SL_EINVAL, field, "an event name must be UTF-8");
    }
    return 0;
}

int
sl_jm_event_begin(struct sl_jm *jm, const char *name, struct sl_err *err)
{
    int began = 0;
    uint64_t seq = 0;
    int rc = sl_jm_event_name_check(name, "event", err);

    if (rc != 0) {
        return rc;
    }
    (void)pthread_mutex_lock(&jm->mu);
    if (json_object_get(jm->events, name) == NULL) {
        (void)json_object_set_new(jm->events, name, json_true());
        (void)sl__jm_store_put(
            jm->st, SL__JM_DB_EVENTS, name, strlen(name), "", 0);
        began = 1;
    }
    seq = sl__jm_store_last(jm->st);
    (void)pthread_mutex_unlock(&jm->mu);
    rc = sl__jm_store_wait(jm->st, seq, err);
    return rc != 0 ? rc : began;
}

int
sl_jm_event_complete(struct sl_jm *jm, const char *name, struct sl_err *err)
{
    uint64_t seq = 0;

    if (sl_jm_event_name_check(name, "event", err) != 0) {
        return SL_EINVAL;
    }
    (void)pthread_mutex_lock(&jm->mu);
    sl__jm_wake_all(jm); /* waiting tasks may be eligible now */
    (void)json_object_del(jm->events, name);
    seq = sl__jm_store_del(jm->st, SL__JM_DB_EVENTS, name, strlen(name));
    (void)pthread_mutex_unlock(&jm->mu);
    return sl__jm_store_wait(jm->st, seq, err);
}
