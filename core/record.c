/*
 * Records: a jansson metadata object plus an ordered list of named binary
 * attachments.  Attachments are few per record, so a small array with
 * linear lookup is the simplest structure that is fast enough.
 */
#include <string.h>

#include "core/sl.h"

struct attachment {
    char *name;
    void *data;
    size_t len;
};

struct sl_record {
    json_t *meta;            /* object with a string "_recordid" */
    struct attachment *atts; /* insertion order */
    size_t natts;
    size_t cap;
};

struct sl_record *
sl_record_new(const char *id)
{
    struct sl_record *rec = sl_calloc(1, sizeof(*rec));

    rec->meta = json_object();
    if (rec->meta == NULL ||
        json_object_set_new(rec->meta, "_recordid", json_string(id)) != 0) {
        sl_panic("sl_record_new: out of memory or invalid UTF-8 id");
    }
    return rec;
}

int
sl_record_from_json_new(json_t *meta,
                        struct sl_record **out,
                        struct sl_err *err)
{
    struct sl_record *rec = NULL;
    json_t *id = NULL;

    *out = NULL;
    if (!json_is_object(meta)) {
        json_decref(meta);
        return sl_err_set(err, SL_EINVAL, "", "a record must be a JSON object");
    }
    id = json_object_get(meta, "_recordid");
    if (!json_is_string(id) || json_string_length(id) == 0) {
        json_decref(meta);
        return sl_err_set(err,
                          SL_EINVAL,
                          "_recordid",
                          "a record needs a non-empty string _recordid");
    }
    rec = sl_calloc(1, sizeof(*rec));
    rec->meta = meta;
    *out = rec;
    return 0;
}

void
sl_record_free(struct sl_record *rec)
{
    size_t i = 0;

    if (rec == NULL) {
        return;
    }
    for (i = 0; i < rec->natts; i++) {
        sl_free(rec->atts[i].name);
        sl_free(rec->atts[i].data);
    }
    sl_free(rec->atts);
    json_decref(rec->meta);
    sl_free(rec);
}

const char *
sl_record_id(const struct sl_record *rec)
{
    return json_string_value(json_object_get(rec->meta, "_recordid"));
}

json_t *
sl_record_meta(const struct sl_record *rec)
{
    return rec->meta;
}

static struct attachment *
find(const struct sl_record *rec, const char *name)
{
    size_t i = 0;

    for (i = 0; i < rec->natts; i++) {
        if (strcmp(rec->atts[i].name, name) == 0) {
            return &rec->atts[i];
        }
    }
    return NULL;
}

int
sl_record_attachment_set_new(struct sl_record *rec,
                             const char *name,
                             void *data,
                             size_t len)
{
    struct attachment *a = NULL;
    size_t nlen = strlen(name);

    if (nlen == 0 || nlen > SL_ATTACHMENT_NAME_MAX) {
        sl_free(data);
        return SL_EINVAL;
    }
    a = find(rec, name);
    if (a != NULL) {
        sl_free(a->data);
        a->data = data;
        a->len = len;
        return 0;
    }
    if (rec->natts == rec->cap) {
        rec->cap = rec->cap ? rec->cap * 2 : 4;
        rec->atts = sl_realloc(rec->atts, rec->cap * sizeof(*rec->atts));
    }
    a = &rec->atts[rec->natts++];
    a->name = sl_strdup(name);
    a->data = data;
    a->len = len;
    return 0;
}

int
sl_record_attachment_set(struct sl_record *rec,
                         const char *name,
                         const void *data,
                         size_t len)
{
    void *copy = sl_malloc(len);

    if (len > 0) {
        memcpy(copy, data, len);
    }
    return sl_record_attachment_set_new(rec, name, copy, len);
}

size_t
sl_record_attachment_count(const struct sl_record *rec)
{
    return rec->natts;
}

int
sl_record_attachment_at(const struct sl_record *rec,
                        size_t i,
                        const char **name,
                        const void **data,
                        size_t *len)
{
    if (i >= rec->natts) {
        return SL_ENOENT;
    }
    *name = rec->atts[i].name;
    *data = rec->atts[i].data;
    *len = rec->atts[i].len;
    return 0;
}

int
sl_record_attachment_get(const struct sl_record *rec,
                         const char *name,
                         const void **data,
                         size_t *len)
{
    const struct attachment *a = find(rec, name);

    if (a == NULL) {
        return SL_ENOENT;
    }
    *data = a->data;
    *len = a->len;
    return 0;
}

int
sl_record_attachment_remove(struct sl_record *rec, const char *name)
{
    struct attachment *a = find(rec, name);
    size_t i = 0;

    if (a == NULL) {
        return SL_ENOENT;
    }
    i = (size_t)(a - rec->atts);
    sl_free(a->name);
    sl_free(a->data);
    memmove(&rec->atts[i],
            &rec->atts[i + 1],
            (rec->natts - i - 1) * sizeof(*rec->atts));
    rec->natts--;
    return 0;
}
