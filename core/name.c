/*
 * Name validation (docs/rest-api.md "Conventions"): entity names, store names
 * and object ids.  Every failure is SL_EBADNAME with a message that says what
 * is wrong and where (byte offsets are 0-based, segments 1-based).  The
 * checks never echo the offending bytes, which may be control characters
 * or invalid UTF-8.
 */
#include <string.h>

#include "core/sl.h"

/* The characters of ^[a-zA-Z0-9-]$; entity names also allow '_' and '.'. */
static int
is_alnum_dash(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '-';
}

/*
 * Shared by the entity and store checks, which differ only in the allowed
 * characters and the word used in messages.
 */
static int
check_simple(const char *name,
             const char *what,
             int allow_underscore_dot,
             struct sl_err *err)
{
    size_t i = 0;

    if (name == NULL) {
        return sl_err_set(err, SL_EBADNAME, NULL, "%s is missing", what);
    }
    if (name[0] == '\0') {
        return sl_err_set(err, SL_EBADNAME, NULL, "%s is empty", what);
    }
    for (i = 0; name[i] != '\0'; i++) {
        unsigned char c = (unsigned char)name[i];

        if (i >= SL_NAME_MAX) {
            return sl_err_set(err,
                              SL_EBADNAME,
                              NULL,
                              "%s is %zu bytes long, at most %d allowed",
                              what,
                              strlen(name),
                              SL_NAME_MAX);
        }
        if (is_alnum_dash(c)) {
            continue;
        }
        if (allow_underscore_dot && (c == '_' || c == '.')) {
            continue;
        }
        return sl_err_set(err,
                          SL_EBADNAME,
                          NULL,
                          "%s has invalid character 0x%02x at offset %zu "
                          "(allowed: %s)",
                          what,
                          (unsigned)c,
                          i,
                          allow_underscore_dot ? "a-z A-Z 0-9 - _ ."
                                               : "a-z A-Z 0-9 -");
    }
    return 0;
}

int
sl_name_check_entity(const char *name, struct sl_err *err)
{
    return check_simple(name, "name", 1, err);
}

int
sl_name_check_store(const char *name, struct sl_err *err)
{
    return check_simple(name, "store name", 0, err);
}

/*
 * The one UTF-8 decoder (RFC 3629).  The byte ranges that make a form
 * overlong (C0, C1, E0 80-9F, F0 80-8F), a surrogate (ED A0-BF) or a code
 * point above U+10FFFF (F4 90-BF, F5-FF) are checked on the lead and the
 * second byte, so the value needs no check afterwards.
 */
int
sl_utf8_decode(const void *data, size_t n, uint32_t *cp)
{
    const unsigned char *s = data;
    unsigned char lo = 0x80;
    unsigned char hi = 0xbf;
    uint32_t v = 0;
    size_t len = 0;
    size_t i = 0;

    if (n == 0) {
        return 0;
    }
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        v = s[0] & 0x1fu;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        v = s[0] & 0x0fu;
        lo = s[0] == 0xe0 ? 0xa0 : 0x80;
        hi = s[0] == 0xed ? 0x9f : 0xbf;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        v = s[0] & 0x07u;
        lo = s[0] == 0xf0 ? 0x90 : 0x80;
        hi = s[0] == 0xf4 ? 0x8f : 0xbf;
    } else {
        return 0;
    }
    for (i = 1; i < len; i++) {
        if (i >= n) {
            return -1; /* continuation bytes so far, fewer than needed */
        }
        if ((s[i] & 0xc0) != 0x80 ||
            (i == 1 && n >= len && (s[1] < lo || s[1] > hi))) {
            return 0; /* a cut sequence is judged when it is complete */
        }
        v = (v << 6) | (s[i] & 0x3fu);
    }
    *cp = v;
    return (int)len;
}

static size_t
utf8_len(const unsigned char *s, size_t n)
{
    uint32_t cp = 0;
    int len = sl_utf8_decode(s, n, &cp);

    return len > 0 ? (size_t)len : 0;
}

/* sl_utf8_valid, and with @head a sequence cut by the end is valid too. */
static int
utf8_check(const unsigned char *s, size_t n, int head)
{
    size_t i = 0;
    size_t len = 0;

    while (i < n) {
        uint64_t word = 0;

        /* Eight ASCII bytes at a time: the common case of extracted text. */
        if (n - i >= sizeof(word)) {
            memcpy(&word, s + i, sizeof(word));
            if ((word & UINT64_C(0x8080808080808080)) == 0) {
                i += sizeof(word);
                continue;
            }
        }
        len = utf8_len(s + i, n - i);
        if (len == 0) {
            uint32_t cp = 0;

            return head && sl_utf8_decode(s + i, n - i, &cp) < 0;
        }
        i += len;
    }
    return 1;
}

int
sl_utf8_valid(const void *data, size_t n)
{
    return utf8_check(data, n, 0);
}

int
sl_utf8_valid_head(const void *data, size_t n)
{
    return utf8_check(data, n, 1);
}

size_t
sl_utf8_len(const void *data, size_t n)
{
    return n == 0 ? 0 : utf8_len(data, n);
}

size_t
sl_utf8_escape(char *dst, size_t cap, const char *src)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)src;
    size_t n = strlen(src);
    size_t i = 0;
    size_t o = 0;

    if (cap == 0) {
        return 0;
    }
    while (i < n) {
        size_t len = utf8_len(s + i, n - i);

        if (len == 0) {
            if (o + 4 >= cap) {
                break;
            }
            dst[o++] = '\\';
            dst[o++] = 'x';
            dst[o++] = hex[s[i] >> 4];
            dst[o++] = hex[s[i] & 0xfu];
            i++;
            continue;
        }
        if (o + len >= cap) {
            break;
        }
        memcpy(dst + o, s + i, len);
        o += len;
        i += len;
    }
    dst[o] = '\0';
    return o;
}

/* Checks one segment once its end is known: not "." or "..", not too long. */
static int
check_segment(const char *seg, size_t len, int index, struct sl_err *err)
{
    if (len > SL_OBJECT_SEGMENT_MAX) {
        return sl_err_set(err,
                          SL_EBADNAME,
                          NULL,
                          "object id segment %d is %zu bytes long, at most "
                          "%d allowed",
                          index,
                          len,
                          SL_OBJECT_SEGMENT_MAX);
    }
    if ((len == 1 && seg[0] == '.') ||
        (len == 2 && seg[0] == '.' && seg[1] == '.')) {
        return sl_err_set(err,
                          SL_EBADNAME,
                          NULL,
                          "object id segment %d is '%.*s'",
                          index,
                          (int)len,
                          seg);
    }
    return 0;
}

int
sl_name_check_object_id(const char *id, struct sl_err *err)
{
    const unsigned char *s = (const unsigned char *)id;
    size_t len = 0;
    size_t i = 0;
    size_t seg_start = 0;
    int seg_index = 1;
    int rc = 0;

    if (id == NULL) {
        return sl_err_set(err, SL_EBADNAME, NULL, "object id is missing");
    }
    len = strlen(id);
    if (len == 0) {
        return sl_err_set(err, SL_EBADNAME, NULL, "object id is empty");
    }
    if (len > SL_OBJECT_ID_MAX) {
        return sl_err_set(err,
                          SL_EBADNAME,
                          NULL,
                          "object id is %zu bytes long, at most %d allowed",
                          len,
                          SL_OBJECT_ID_MAX);
    }
    if (id[0] == '/') {
        return sl_err_set(err, SL_EBADNAME, NULL, "object id starts with '/'");
    }
    if (id[len - 1] == '/') {
        return sl_err_set(err, SL_EBADNAME, NULL, "object id ends with '/'");
    }
    while (i < len) {
        unsigned char c = s[i];
        size_t n = 0;

        if (c == '/') {
            if (i == seg_start) {
                return sl_err_set(err,
                                  SL_EBADNAME,
                                  NULL,
                                  "object id has an empty segment ('//') at "
                                  "offset %zu",
                                  i - 1);
            }
            rc = check_segment(id + seg_start, i - seg_start, seg_index, err);
            if (rc != 0) {
                return rc;
            }
            seg_index++;
            seg_start = i + 1;
            i++;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            return sl_err_set(err,
                              SL_EBADNAME,
                              NULL,
                              "object id has control character 0x%02x at "
                              "offset %zu",
                              (unsigned)c,
                              i);
        }
        if (c == '\\') {
            return sl_err_set(err,
                              SL_EBADNAME,
                              NULL,
                              "object id has a backslash at offset %zu",
                              i);
        }
        n = utf8_len(s + i, len - i);
        if (n == 0) {
            return sl_err_set(err,
                              SL_EBADNAME,
                              NULL,
                              "object id has invalid UTF-8 at offset %zu",
                              i);
        }
        i += n;
    }
    return check_segment(id + seg_start, len - seg_start, seg_index, err);
}
