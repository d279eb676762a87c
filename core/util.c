/*
 * Small utilities: clocks, timestamps, UUIDs, number parsing, fd writes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "core/sl.h"

int64_t
sl_time_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
sl_mono_ms(void)
{
    return sl_mono_us() / 1000;
}

int64_t
sl_mono_us(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void
sl_backoff_init(struct sl_backoff *b, unsigned first_ms, unsigned max_ms)
{
    memset(b, 0, sizeof(*b));
    b->first_ms = first_ms != 0 ? first_ms : 1000;
    b->max_ms = max_ms >= b->first_ms ? max_ms : b->first_ms;
}

int
sl_backoff_fail(struct sl_backoff *b, int64_t now_ms)
{
    if (b->cur_ms != 0 && now_ms < b->until_ms) {
        return 0; /* the pause that is on */
    }
    if (b->cur_ms != 0 && now_ms - b->until_ms < (int64_t)b->cur_ms) {
        /* failing again soon after the last pause: pause longer */
        b->cur_ms = b->cur_ms > b->max_ms / 2 ? b->max_ms : b->cur_ms * 2;
    } else {
        b->cur_ms = b->first_ms;
    }
    b->until_ms = now_ms + (int64_t)b->cur_ms;
    return 1;
}

int64_t
sl_backoff_left(const struct sl_backoff *b, int64_t now_ms)
{
    return b->cur_ms != 0 && now_ms < b->until_ms ? b->until_ms - now_ms : 0;
}

void
sl_sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void
sl_test_delay(const char *point)
{
    const char *p = point[0] != '\0' ? getenv("SLUICE_TEST_DELAY") : NULL;
    size_t plen = strlen(point);

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char num[8];
        uint64_t ms = 0;

        if (len > plen + 1 && len - plen - 1 < sizeof(num) &&
            memcmp(p, point, plen) == 0 && p[plen] == '=') {
            memcpy(num, p + plen + 1, len - plen - 1);
            num[len - plen - 1] = '\0';
            if (sl_parse_u64(num, &ms) == 0 && ms <= 60000) {
                sl_sleep_ms(ms);
            }
            return;
        }
        p = end != NULL ? end + 1 : NULL;
    }
}

void
sl_time_format(int64_t ms, char *out, size_t cap)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    char base[24];

    (void)gmtime_r(&secs, &tm);
    (void)strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    (void)snprintf(out, cap, "%s.%03dZ", base, (int)(ms % 1000));
}

void
sl_uuid(char out[37])
{
    unsigned char b[16];
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;
    size_t j = 0;

    if (RAND_bytes(b, (int)sizeof(b)) != 1) {
        sl_panic("RAND_bytes failed");
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    for (i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) {
            out[j++] = '-';
        }
        out[j++] = hex[b[i] >> 4];
        out[j++] = hex[b[i] & 0x0f];
    }
    out[j] = '\0';
}

int
sl_parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;

    if (s == NULL || *s == '\0') {
        return SL_EINVAL;
    }
    for (; *s != '\0'; s++) {
        unsigned d = (unsigned)(*s - '0');

        if (d > 9) {
            return SL_EINVAL;
        }
        if (v > (UINT64_MAX - d) / 10) {
            return SL_EINVAL;
        }
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* mkdir one level; EEXIST is fine.  Fills @err for anything else. */
static int
mkdir_one(const char *path, struct sl_err *err)
{
    int e = 0;

    if (mkdir(path, 0755) == 0 || errno == EEXIST) {
        return 0;
    }
    e = errno;
    return sl_err_set(err,
                      sl_err_from_errno(e),
                      NULL,
                      "cannot create directory '%s': %s",
                      path,
                      sl_errno_str(e));
}

int
sl_mkdirs(const char *path, struct sl_err *err)
{
    char *p = sl_strdup(path);
    char *s = NULL;
    int rc = 0;

    for (s = p + 1; *s != '\0' && rc == 0; s++) {
        if (*s == '/') {
            *s = '\0';
            rc = mkdir_one(p, err);
            *s = '/';
        }
    }
    if (rc == 0) {
        rc = mkdir_one(p, err);
    }
    sl_free(p);
    return rc;
}

char *
sl_url_escape(const char *s, int keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(s);
    char *out = sl_malloc(n * 3 + 1);
    size_t j = 0;
    size_t i = 0;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
            c == '~' || (keep_slash && c == '/')) {
            out[j++] = (char)c;
        } else {
            out[j++] = '%';
            out[j++] = hex[c >> 4];
            out[j++] = hex[c & 15];
        }
    }
    out[j] = '\0';
    return out;
}

int
sl_disk_full(const char *path)
{
    struct statvfs st;

    return statvfs(path, &st) == 0 &&
           (uint64_t)st.f_bavail * st.f_frsize < SL_DISK_FULL_SLACK;
}

int
sl_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return sl_err_from_errno(errno);
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

long
sl_peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;

    if (f == NULL) {
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            char *end = NULL;

            kib = strtol(line + 6, &end, 10);
            break;
        }
    }
    (void)fclose(f);
    return kib;
}

static int
fd_sink_write(void *ctx, const void *data, size_t len)
{
    return sl_write_all(*(int *)ctx, data, len);
}

static int
fd_source_read(void *ctx, void *buf, size_t cap, size_t *n)
{
    for (;;) {
        ssize_t r = read(*(int *)ctx, buf, cap);

        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            return sl_err_from_errno(errno);
        }
        *n = (size_t)r;
        return 0;
    }
}

void
sl_sink_fd(struct sl_sink *sink, int *fd)
{
    sink->write = fd_sink_write;
    sink->ctx = fd;
}

void
sl_source_fd(struct sl_source *src, int *fd)
{
    src->read = fd_source_read;
    src->ctx = fd;
}

/* @n bytes of digest @md as lower-case hex into @hex. */
static void
digest_hex(const unsigned char *md, unsigned int n, char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    unsigned int i = 0;

    for (i = 0; i < n && i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 0xf];
    }
    hex[2 * i] = '\0';
}

void
sl_sha256_hex(const void *data, size_t len, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1) {
        sl_panic("EVP_Digest(SHA-256) failed");
    }
    digest_hex(md, n, hex);
}

struct sl_sha256 {
    EVP_MD_CTX *md;
    int done; /* final_hex was called */
};

struct sl_sha256 *
sl_sha256_new(void)
{
    struct sl_sha256 *h = sl_calloc(1, sizeof(*h));

    h->md = EVP_MD_CTX_new();
    if (h->md == NULL || EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1) {
        sl_panic("EVP_DigestInit_ex(SHA-256) failed");
    }
    return h;
}

void
sl_sha256_update(struct sl_sha256 *h, const void *data, size_t len)
{
    SL_ASSERT(!h->done);
    if (len > 0 && EVP_DigestUpdate(h->md, data, len) != 1) {
        sl_panic("EVP_DigestUpdate(SHA-256) failed");
    }
}

void
sl_sha256_final_hex(struct sl_sha256 *h, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    SL_ASSERT(!h->done);
    if (EVP_DigestFinal_ex(h->md, md, &n) != 1) {
        sl_panic("EVP_DigestFinal_ex(SHA-256) failed");
    }
    h->done = 1;
    digest_hex(md, n, hex);
}

void
sl_sha256_free(struct sl_sha256 *h)
{
    if (h != NULL) {
        EVP_MD_CTX_free(h->md);
        sl_free(h);
    }
}
