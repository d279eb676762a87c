/*
 * Parameter helpers shared by the built-in workers (builtin_int.h):
 * include and exclude regex lists of `filters` (POSIX extended regexes,
 * compiled as the definition check compiles them), flags given as true
 * or "true", and `maxTextBytes` (the textExtractor's and the
 * webCrawler's).
 */
#include <string.h>

#include "builtin/builtin_int.h"
#include "text/text.h"

int
sl__bi_json_true(const json_t *v)
{
    return json_is_true(v) ||
           (json_is_string(v) && strcmp(json_string_value(v), "true") == 0);
}

void
sl__bi_patterns_free(struct sl__bi_patterns *p)
{
    size_t i = 0;

    for (i = 0; i < p->n_include; i++) {
        regfree(&p->include[i]);
    }
    for (i = 0; i < p->n_exclude; i++) {
        regfree(&p->exclude[i]);
    }
    p->n_include = p->n_exclude = 0;
}

/* Compile the list @key ("include"/"exclude") of @spec into @re. */
static int
compile_list(struct sl_task_ctx *ctx,
             const json_t *spec,
             const char *what,
             const char *key,
             regex_t *re,
             size_t *n)
{
    const json_t *list = json_object_get(spec, key);
    const json_t *v = NULL;
    size_t i = 0;
    int rc = 0;

    if (list == NULL) {
        return 0;
    }
    if (!json_is_array(list) || json_array_size(list) > SL__BI_MAX_PATTERNS) {
        sl_task_set_message(ctx,
                            "filters.%s.%s: an array of at most %u regexes",
                            what,
                            key,
                            SL__BI_MAX_PATTERNS);
        return SL_EINVAL;
    }
    json_array_foreach(list, i, v)
    {
        if (!json_is_string(v)) {
            sl_task_set_message(ctx, "filters.%s.%s: not a string", what, key);
            return SL_EINVAL;
        }
        rc = sl_worker_regex_compile(&re[*n], json_string_value(v));
        if (rc != 0) {
            sl_task_set_message(ctx,
                                "filters.%s.%s[%zu]: bad regex '%s'",
                                what,
                                key,
                                i,
                                json_string_value(v));
            return SL_EINVAL;
        }
        (*n)++;
    }
    return 0;
}

int
sl__bi_patterns_init(struct sl_task_ctx *ctx,
                     const json_t *filters,
                     const char *what,
                     struct sl__bi_patterns *p)
{
    const json_t *spec = json_object_get(filters, what);
    int rc = 0;

    if (spec == NULL) {
        return 0;
    }
    if (!json_is_object(spec)) {
        sl_task_set_message(ctx, "filters.%s: not an object", what);
        return SL_EINVAL;
    }
    rc = compile_list(ctx, spec, what, "include", p->include, &p->n_include);
    if (rc == 0) {
        rc =
            compile_list(ctx, spec, what, "exclude", p->exclude, &p->n_exclude);
    }
    return rc;
}

/* 1 when @s passes: some include matches (or there is none) and no
 * exclude matches. */
int
sl__bi_patterns_pass(const struct sl__bi_patterns *p, const char *s)
{
    size_t i = 0;
    int in = p->n_include == 0;

    for (i = 0; !in && i < p->n_include; i++) {
        in = regexec(&p->include[i], s, 0, NULL, 0) == 0;
    }
    for (i = 0; in && i < p->n_exclude; i++) {
        in = regexec(&p->exclude[i], s, 0, NULL, 0) != 0;
    }
    return in;
}

int
sl__bi_max_text(struct sl_task_ctx *ctx, uint64_t *out)
{
    /* The text goes into the record metadata, which readers limit to
     * SL_BULK_DEFAULT_MAX_META (64 MiB); JSON escaping at most doubles
     * it: SL_TEXT_MAX_LIMIT is well below. */
    if (sl_task_param_u64(ctx, "maxTextBytes", SL_TEXT_MAX_DEFAULT, out) != 0 ||
        *out > SL_TEXT_MAX_LIMIT) {
        sl_task_set_message(ctx,
                            "maxTextBytes: not a number up to %llu",
                            (unsigned long long)SL_TEXT_MAX_LIMIT);
        return SL_EINVAL;
    }
    return 0;
}
