/*
 * A finished task's outputs in the object store: which exist, and the
 * removal of a failed attempt's.  Both run without jm->mu (they only
 * touch the object store); see engine_int.h.
 */
#include <string.h>

#include "jobmanager/engine_int.h"

struct found_ctx {
    json_t *list;
    const char *bucket;
    const char *store;
};

static int
found_one(void *ctx, const struct sl_obj_info *info)
{
    struct found_ctx *c = ctx;

    (void)json_array_append_new(c->list,
                                json_pack("{s:s, s:s, s:s, s:I}",
                                          "bucket",
                                          c->bucket,
                                          "store",
                                          c->store,
                                          "id",
                                          info->id,
                                          "size",
                                          (json_int_t)info->size));
    return 0;
}

int
sl__jm_outputs_find(struct sl_jm *jm,
                    const json_t *outputs,
                    json_t **found_out,
                    struct sl_err *err)
{
    json_t *found = json_object();
    const char *slot = NULL;
    json_t *bulks = NULL;
    struct sl_err e = {0};
    int rc = 0;

    json_object_foreach((json_t *)outputs, slot, bulks)
    {
        json_t *b = json_array_get(bulks, 0);
        const char *store = json_string_value(json_object_get(b, "store"));
        const char *id = json_string_value(json_object_get(b, "id"));
        const char *bucket = json_string_value(json_object_get(b, "bucket"));
        size_t idlen = strlen(id);
        struct found_ctx c = {json_array(), bucket, store};
        struct sl_obj_info info;

        if (idlen > 2 && strcmp(id + idlen - 2, "/0") == 0) {
            char *prefix = sl_strndup(id, idlen - 1);

            rc = sl_obj_list(jm->cfg.store, store, prefix, found_one, &c, &e);
            sl_free(prefix);
        } else {
            rc = sl_obj_stat(jm->cfg.store, store, id, &info, &e);
            if (rc == 0) {
                info.id = id;
                (void)found_one(&c, &info);
            }
        }
        if (rc == SL_ENOENT) {
            rc = 0; /* the task wrote nothing there (or the store is gone) */
        }
        if (json_array_size(c.list) > 0) {
            (void)json_object_set_new(found, slot, c.list);
        } else {
            json_decref(c.list);
        }
        if (rc != 0) {
            break;
        }
    }
    if (rc != 0) {
        /* Never "not written" for "could not look": that drops a bulk
         * the task did write (issue 28: a store answering 503). */
        int busy = rc == SL_EUPSTREAM || rc == SL_EIO || rc == SL_ENOTREADY ||
                   sl_err_nospace(rc);

        json_decref(found);
        found = NULL;
        /* a store that is busy or down: the worker tries again; another
         * error (access denied) refuses the finish as it is */
        rc = sl_err_set(err,
                        busy ? SL_ENOTREADY : rc,
                        slot,
                        "cannot see the outputs of the task (%s)%s",
                        e.message,
                        busy ? "; finish it again" : "");
    }
    *found_out = found;
    return rc;
}

void
sl__jm_outputs_discard(struct sl_jm *jm, const json_t *found)
{
    const char *slot = NULL;
    json_t *bulks = NULL;

    json_object_foreach((json_t *)found, slot, bulks)
    {
        size_t i = 0;
        json_t *b = NULL;

        json_array_foreach(bulks, i, b)
        {
            (void)sl_obj_delete(jm->cfg.store,
                                json_string_value(json_object_get(b, "store")),
                                json_string_value(json_object_get(b, "id")),
                                NULL);
        }
    }
}
