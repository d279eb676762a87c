/*
 * How parameter values are read (workers.h, "Parameter values"): counts
 * given as JSON integers or decimal strings, and regexes (POSIX
 * extended, no sub-matches).  The definition check (params.c) reads a
 * job's values with these functions, and so do the workers at run time,
 * so a value a task would refuse is refused when the job is defined.
 */
#include "workers/workers.h"

int
sl_worker_json_u64(const json_t *v, uint64_t def, uint64_t *out)
{
    if (v == NULL || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (json_is_string(v)) {
        return sl_parse_u64(json_string_value(v), out);
    }
    return SL_EINVAL;
}

int
sl_worker_regex_compile(regex_t *re, const char *pattern)
{
    return regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
}
