/*
 * File paths in records (builtin.h, builtin_int.h): the escaping of names
 * that are not valid UTF-8 (docs/workers.md "fileCrawler"), which the
 * fileCrawler writes and the fileFetcher and the fileExtractor read back,
 * and the check that a path is under rootFolder (the fileCrawler's link
 * check, the fileFetcher's check of the file it opened).
 */
#include <string.h>

#include "builtin/builtin_int.h"

char *
sl_worker_path_escape(const char *raw)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)raw;
    size_t n = strlen(raw);
    char *out = sl_malloc(n * 4 + 1);
    size_t o = 0;
    size_t i = 0;

    while (i < n) {
        size_t len = s[i] == '\\' ? 0 : sl_utf8_len(s + i, n - i);

        if (len == 0) {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[s[i] >> 4];
            out[o++] = hex[s[i] & 0xfu];
            i++;
            continue;
        }
        memcpy(out + o, s + i, len);
        o += len;
        i += len;
    }
    out[o] = '\0';
    return out;
}

static int
hexval(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

char *
sl_worker_path_unescape(const char *esc)
{
    size_t n = strlen(esc);
    char *out = sl_malloc(n + 1);
    size_t o = 0;
    size_t i = 0;

    while (i < n) {
        if (esc[i] == '\\' && i + 3 < n && esc[i + 1] == 'x' &&
            hexval(esc[i + 2]) >= 0 && hexval(esc[i + 3]) >= 0) {
            out[o++] = (char)(hexval(esc[i + 2]) * 16 + hexval(esc[i + 3]));
            i += 4;
            continue;
        }
        out[o++] = esc[i++];
    }
    out[o] = '\0';
    return out;
}

int
sl__bi_path_under(const char *root, const char *path)
{
    size_t n = strlen(root);

    return n > 0 && strncmp(path, root, n) == 0 &&
           (path[n] == '\0' || path[n] == '/' || (n == 1 && root[0] == '/'));
}
