/*
 * The delta fields of a record (builtin_int.h): what the delta service
 * needs of it, read the same way by the deltaChecker (delta_checker.c),
 * the updatePusher (update_pusher.c) and its element checks
 * (element_check.c), from the decoded metadata or from the record's head;
 * and the strategy parameter all three and the fileCrawler's pre-check
 * read.
 */
#include <string.h>

#include "builtin/builtin_int.h"
#include "deltaservice/deltaservice.h"

const char *
sl__bi_delta_fields(const json_t *meta,
                    const struct sl_record_head *head,
                    struct sl_delta_rec *dr)
{
    memset(dr, 0, sizeof(*dr));
    if (meta == NULL) {
        dr->id = head->id;
        dr->compound_id = head->compound_id;
        dr->hash = head->delta_hash;
        dr->is_compound = (head->flags & SL_HEAD_COMPOUND) != 0;
        return head->source;
    }
    dr->id = json_string_value(json_object_get(meta, "_recordid"));
    dr->compound_id =
        json_string_value(json_object_get(meta, "_compoundRecordId"));
    dr->hash = json_string_value(json_object_get(meta, "_deltaHash"));
    dr->is_compound = json_is_true(json_object_get(meta, "_isCompound"));
    return json_string_value(json_object_get(meta, "_source"));
}

int
sl__bi_strategy(const json_t *params,
                enum sl_delta_strategy *out,
                struct sl_err *err)
{
    const char *s =
        json_string_value(json_object_get(params, "deltaImportStrategy"));

    *out = SL_DELTA_STRATEGY_FULL;
    return s != NULL ? sl_delta_strategy_parse(s, out, err) : 0;
}
