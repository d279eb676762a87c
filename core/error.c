/*
 * The one error-code space: names, texts, REST codes and HTTP statuses are
 * all generated from SL_ERRNO_MAP in sl.h.
 */
#include <stdio.h>
#include <string.h>

#include "core/sl.h"

const char *
sl_strerror(int code)
{
    switch (code) {
    case SL_OK:
        return "success";
#define XX(name, value, status, api, msg)                                      \
    case SL_##name:                                                            \
        return msg;
        SL_ERRNO_MAP(XX)
#undef XX
    default:
        return "unknown error";
    }
}

const char *
sl_errno_str(int errnum)
{
    static _Thread_local char buf[128];

    /* the GNU form (_GNU_SOURCE): returns buf or a static string */
    return strerror_r(errnum, buf, sizeof(buf));
}

const char *
sl_err_name(int code)
{
    switch (code) {
    case SL_OK:
        return "SL_OK";
#define XX(name, value, status, api, msg)                                      \
    case SL_##name:                                                            \
        return "SL_" #name;
        SL_ERRNO_MAP(XX)
#undef XX
    default:
        return "SL_UNKNOWN";
    }
}

const char *
sl_err_api_code(int code)
{
    switch (code) {
    case SL_OK:
        return "OK";
#define XX(name, value, status, api, msg)                                      \
    case SL_##name:                                                            \
        return api;
        SL_ERRNO_MAP(XX)
#undef XX
    default:
        return "INTERNAL_ERROR";
    }
}

int
sl_err_http_status(int code)
{
    switch (code) {
    case SL_OK:
        return 200;
#define XX(name, value, status, api, msg)                                      \
    case SL_##name:                                                            \
        return status;
        SL_ERRNO_MAP(XX)
#undef XX
    default:
        return 500;
    }
}

int
sl_err_from_errno(int errnum)
{
    switch (errnum) {
    case 0:
        return SL_OK;
    case ENOENT:
        return SL_ENOENT;
    case EINVAL:
        return SL_EINVAL;
    case EACCES:
    case EPERM:
        return SL_EACCES;
    case EEXIST:
        return SL_EEXIST;
    case ENOSPC:
    case EDQUOT:
        return SL_ENOSPC;
    case ENOTEMPTY:
        return SL_ENOTEMPTY;
    case EMFILE:
    case ENFILE:
        return SL_EMFILE;
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
        return SL_ECONFLICT;
    case ENAMETOOLONG:
        return SL_EBADNAME;
    default:
        return SL_EIO;
    }
}

int
sl_err_nospace(int code)
{
    return code == SL_ENOSPC || code == -EDQUOT;
}

int
sl_err_set(
    struct sl_err *err, int code, const char *field, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL) {
        return code;
    }
    err->code = code;
    if (field != NULL) {
        (void)snprintf(err->field, sizeof(err->field), "%s", field);
    } else {
        err->field[0] = '\0';
    }
    va_start(ap, fmt);
    (void)vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return code;
}

void
sl_err_clear(struct sl_err *err)
{
    if (err != NULL) {
        err->code = 0;
        err->field[0] = '\0';
        err->message[0] = '\0';
    }
}
