/*
 * The S3 backend (docs/objectstore.md "S3"): the instance, credentials,
 * the pool of libcurl handles, and one request with its retries and the
 * mapping of S3's errors to Sluice's.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "objectstore/s3_int.h"

#define S3_DEFAULT_PART ((uint64_t)8 << 20)
#define S3_MIN_PART     ((uint64_t)5 << 20) /* S3's smallest part but the last */
#define S3_MAX_PART     ((uint64_t)5 << 30)
#define S3_RETRIES      5u
#define S3_BACKOFF_MS   100u
#define CRED_LINE       1024u

const struct sl__obj_backend_type sl__obj_backend_s3 = {
    SL__OBJ_BACKEND_ABI,
    "s3",
    sl__s3_close,
    sl__s3_store_create,
    sl__s3_store_delete,
    sl__s3_store_exists,
    sl__s3_store_list,
    sl__s3_list,
    sl__s3_stat,
    sl__s3_delete,
    sl__s3_writer_open,
    sl__s3_writer_write,
    sl__s3_writer_seal,
    sl__s3_writer_commit,
    sl__s3_writer_free,
    NULL, /* writer_open_file: copied */
    sl__s3_reader_open,
    sl__s3_reader_read,
    sl__s3_reader_pread,
    sl__s3_reader_free,
    NULL, /* reader_fd */
};

/* ------------------------------------------------------------------------
 * Credentials: the configuration, else the environment, else the shared
 * credentials file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials,
 * profile AWS_PROFILE or "default").
 * --------------------------------------------------------------------- */

static char *
trim(char *s)
{
    char *e = NULL;

    while (isspace((unsigned char)*s)) {
        s++;
    }
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) {
        *--e = '\0';
    }
    return s;
}

/* The keys of @profile in the credentials file @path into *@id, *@secret
 * and *@token (new strings; those not there stay NULL).  0, or SL_ENOENT
 * when the file cannot be read. */
static int
creds_file(const char *path,
           const char *profile,
           char **id,
           char **secret,
           char **token)
{
    FILE *f = fopen(path, "re");
    char line[CRED_LINE];
    int in = 0;

    if (f == NULL) {
        return SL_ENOENT;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *l = trim(line);
        char *eq = NULL;
        char **slot = NULL;

        if (l[0] == '[') {
            char *end = strchr(l, ']');

            in = end != NULL && (size_t)(end - l - 1) == strlen(profile) &&
                 strncmp(l + 1, profile, strlen(profile)) == 0;
            continue;
        }
        if (!in || l[0] == '#' || l[0] == ';' ||
            (eq = strchr(l, '=')) == NULL) {
            continue;
        }
        *eq = '\0';
        l = trim(l);
        slot = strcmp(l, "aws_access_key_id") == 0       ? id
               : strcmp(l, "aws_secret_access_key") == 0 ? secret
               : strcmp(l, "aws_session_token") == 0     ? token
                                                         : NULL;
        if (slot != NULL && *slot == NULL) {
            *slot = sl_strdup(trim(eq + 1));
        }
    }
    (void)fclose(f);
    return 0;
}

static int
creds_resolve(struct s3 *s,
              const struct sl_obj_s3_config *cfg,
              struct sl_err *err)
{
    char *id = NULL;
    char *secret = NULL;
    char *token = NULL;
    const char *where = "the configuration";

    if (cfg->access_key != NULL && cfg->secret_key != NULL) {
        id = sl_strdup(cfg->access_key);
        secret = sl_strdup(cfg->secret_key);
        token =
            cfg->session_token != NULL ? sl_strdup(cfg->session_token) : NULL;
    } else if (getenv("AWS_ACCESS_KEY_ID") != NULL &&
               getenv("AWS_SECRET_ACCESS_KEY") != NULL) {
        where = "the environment";
        id = sl_strdup(getenv("AWS_ACCESS_KEY_ID"));
        secret = sl_strdup(getenv("AWS_SECRET_ACCESS_KEY"));
        token = getenv("AWS_SESSION_TOKEN") != NULL
                    ? sl_strdup(getenv("AWS_SESSION_TOKEN"))
                    : NULL;
    } else {
        const char *file = getenv("AWS_SHARED_CREDENTIALS_FILE");
        const char *profile = getenv("AWS_PROFILE");
        char *path = file != NULL ? sl_strdup(file)
                     : getenv("HOME") != NULL
                         ? sl_asprintf("%s/.aws/credentials", getenv("HOME"))
                         : NULL;

        where = "the credentials file";
        if (path != NULL) {
            (void)creds_file(path,
                             profile != NULL ? profile : "default",
                             &id,
                             &secret,
                             &token);
        }
        sl_free(path);
    }
    if (id == NULL || secret == NULL || strchr(id, ':') != NULL) {
        sl_free(id);
        sl_free(secret);
        sl_free(token);
        return sl_err_set(err,
                          SL_ECONFIG,
                          "objectstore.s3.accessKeyId",
                          "S3 object store: no usable credentials (looked in "
                          "the configuration, AWS_ACCESS_KEY_ID and "
                          "AWS_SECRET_ACCESS_KEY, and the shared credentials "
                          "file; last: %s)",
                          where);
    }
    s->userpwd = sl_asprintf("%s:%s", id, secret);
    s->token =
        token != NULL ? sl_asprintf("x-amz-security-token: %s", token) : NULL;
    sl_free(id);
    sl_free(secret);
    sl_free(token);
    return 0;
}

/* ------------------------------------------------------------------------
 * The instance.
 * --------------------------------------------------------------------- */

void
sl__s3_close(void *ctx)
{
    struct s3 *s = ctx;
    unsigned i = 0;

    if (s == NULL) {
        return;
    }
    for (i = 0; i < s->nidle; i++) {
        curl_easy_cleanup(s->idle[i]);
    }
    pthread_mutex_destroy(&s->lock);
    sl_free(s->endpoint);
    sl_free(s->scheme);
    sl_free(s->host);
    sl_free(s->region);
    sl_free(s->bucket);
    sl_free(s->prefix);
    sl_free(s->userpwd);
    sl_free(s->sigv4);
    sl_free(s->token);
    sl_free(s->ca_file);
    sl_free(s);
}

/* The endpoint's scheme and host of @cfg into @s; 0 or SL_ECONFIG. */
static int
endpoint_parse(struct s3 *s, const char *endpoint, struct sl_err *err)
{
    const char *sep = endpoint != NULL ? strstr(endpoint, "://") : NULL;
    size_t n = 0;

    if (sep == NULL || (strncmp(endpoint, "http://", 7) != 0 &&
                        strncmp(endpoint, "https://", 8) != 0)) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "objectstore.s3.endpoint",
                          "S3 object store: endpoint '%s' is not an http:// "
                          "or https:// URL",
                          endpoint != NULL ? endpoint : "");
    }
    n = strcspn(sep + 3, "/?#");
    if (n == 0 || (sep[3 + n] != '\0' && strcmp(sep + 3 + n, "/") != 0)) {
        return sl_err_set(err,
                          SL_ECONFIG,
                          "objectstore.s3.endpoint",
                          "S3 object store: endpoint '%s' must be a scheme "
                          "and a host, without a path",
                          endpoint);
    }
    s->scheme = sl_strndup(endpoint, (size_t)(sep - endpoint));
    s->host = sl_strndup(sep + 3, n);
    s->endpoint = sl_asprintf("%s://%s", s->scheme, s->host);
    return 0;
}

int
sl__obj_s3_new(const struct sl_obj_s3_config *cfg,
               void **ctx,
               struct sl_err *err)
{
    struct s3 *s = sl_calloc(1, sizeof(*s));
    int rc = 0;

    *ctx = NULL;
    pthread_mutex_init(&s->lock, NULL);
    s->part_size = cfg->part_size != 0 ? cfg->part_size : S3_DEFAULT_PART;
    s->retries = cfg->max_retries != 0 ? cfg->max_retries : S3_RETRIES;
    s->backoff_ms = cfg->backoff_ms != 0 ? cfg->backoff_ms : S3_BACKOFF_MS;
    s->path_style = cfg->path_style;
    s->no_expect = curl_version_info(CURLVERSION_NOW)->version_num >= 0x080300;
    rc = endpoint_parse(s, cfg->endpoint, err);
    if (rc == 0 && (s->part_size < S3_MIN_PART || s->part_size > S3_MAX_PART)) {
        rc = sl_err_set(err,
                        SL_ECONFIG,
                        "objectstore.s3.partSizeMB",
                        "S3 object store: the part size must be 5 MiB to "
                        "5 GiB");
    }
    if (rc == 0 && cfg->bucket == NULL && !cfg->path_style &&
        strchr(s->host, ':') != NULL && !isalpha((unsigned char)s->host[0])) {
        rc = sl_err_set(err,
                        SL_ECONFIG,
                        "objectstore.s3.pathStyle",
                        "S3 object store: an endpoint given as an address "
                        "needs path-style requests");
    }
    if (rc == 0) {
        rc = creds_resolve(s, cfg, err);
    }
    if (rc != 0) {
        sl__s3_close(s);
        return rc;
    }
    s->region = sl_strdup(cfg->region != NULL ? cfg->region : "us-east-1");
    s->sigv4 = sl_asprintf("aws:amz:%s:s3", s->region);
    s->bucket = cfg->bucket != NULL ? sl_strdup(cfg->bucket) : NULL;
    s->prefix = sl_strdup(cfg->prefix != NULL ? cfg->prefix : "");
    s->ca_file = cfg->ca_file != NULL ? sl_strdup(cfg->ca_file) : NULL;
    *ctx = s;
    return 0;
}

void
sl__s3_where(const struct s3 *s,
             const char *store,
             const char *id,
             char **bucket,
             char **key)
{
    if (s->bucket != NULL) {
        *bucket = sl_strdup(s->bucket);
        *key = sl_asprintf("%s%s/%s", s->prefix, store, id != NULL ? id : "");
    } else {
        *bucket = sl_asprintf("%s%s", s->prefix, store);
        *key = id != NULL ? sl_strdup(id) : NULL;
    }
}

/* ------------------------------------------------------------------------
 * Requests.
 * --------------------------------------------------------------------- */

void
sl__s3_req_init(struct s3_req *r, const char *method)
{
    memset(r, 0, sizeof(*r));
    r->method = method;
    sl_buf_init(&r->xml, S3_XML_MAX);
}

void
sl__s3_req_free(struct s3_req *r)
{
    sl_buf_free(&r->xml);
}

static CURL *
handle_get(struct s3 *s)
{
    CURL *h = NULL;

    pthread_mutex_lock(&s->lock);
    if (s->nidle > 0) {
        h = s->idle[--s->nidle];
    }
    pthread_mutex_unlock(&s->lock);
    if (h == NULL) {
        h = curl_easy_init();
        if (h == NULL) {
            sl_panic("curl_easy_init: out of memory");
        }
    } else {
        curl_easy_reset(h); /* keeps its connections */
    }
    return h;
}

static void
handle_put(struct s3 *s, CURL *h)
{
    pthread_mutex_lock(&s->lock);
    if (s->nidle < S3_HANDLES) {
        s->idle[s->nidle++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&s->lock);
    if (h != NULL) {
        curl_easy_cleanup(h);
    }
}

/* The request body, read by libcurl (from the start at each attempt). */
struct body {
    const char *p;
    size_t left;
};

static size_t
on_read(char *buf, size_t size, size_t n, void *arg)
{
    struct body *b = arg;
    size_t k = size * n < b->left ? size * n : b->left;

    memcpy(buf, b->p, k);
    b->p += k;
    b->left -= k;
    return k;
}

static size_t
on_write(char *p, size_t size, size_t n, void *arg)
{
    struct s3_req *r = arg;
    size_t k = size * n;

    if (r->dst != NULL && r->status / 100 == 2) {
        if (k > r->dst_cap - r->dst_len) {
            return 0; /* more than asked for: fails the transfer */
        }
        memcpy(r->dst + r->dst_len, p, k);
        r->dst_len += k;
        return k;
    }
    return sl_buf_append(&r->xml, p, k) == 0 ? k : 0;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
    struct s3_req *r = arg;
    size_t k = size * n;
    char line[256];
    char *v = NULL;

    if (k >= sizeof(line) || k < 2) {
        return k;
    }
    memcpy(line, p, k);
    line[k] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    if (strncmp(line, "HTTP/", 5) == 0) {
        r->status = strtol(line + strcspn(line, " "), NULL, 10);
        return k;
    }
    v = strchr(line, ':');
    if (v == NULL) {
        return k;
    }
    *v++ = '\0';
    while (*v == ' ') {
        v++;
    }
    if (strcasecmp(line, "etag") == 0) {
        (void)snprintf(r->etag, sizeof(r->etag), "%s", v);
    } else if (strcasecmp(line, "last-modified") == 0) {
        time_t t = curl_getdate(v, NULL);

        r->mtime_ms = t > 0 ? (int64_t)t * 1000 : 0;
    } else if (strcasecmp(line, "content-length") == 0) {
        r->length = strtoull(v, NULL, 10);
    } else if (strcasecmp(line, "content-range") == 0 && strchr(v, '/')) {
        r->total = strtoull(strchr(v, '/') + 1, NULL, 10);
    }
    return k;
}

static char *
req_url(const struct s3 *s, const struct s3_req *r)
{
    char *key = r->key != NULL ? sl_url_escape(r->key, 1) : sl_strdup("");
    char *url = NULL;

    if (r->bucket == NULL) {
        url = sl_asprintf("%s/", s->endpoint);
    } else if (s->path_style) {
        url = sl_asprintf("%s/%s/%s%s%s",
                          s->endpoint,
                          r->bucket,
                          key,
                          r->query != NULL ? "?" : "",
                          r->query != NULL ? r->query : "");
    } else {
        url = sl_asprintf("%s://%s.%s/%s%s%s",
                          s->scheme,
                          r->bucket,
                          s->host,
                          key,
                          r->query != NULL ? "?" : "",
                          r->query != NULL ? r->query : "");
    }
    sl_free(key);
    return url;
}

/* One attempt of @r on @h.  The curl result. */
static CURLcode
attempt(struct s3 *s, CURL *h, struct s3_req *r, const char *url)
{
    struct curl_slist *hd = NULL;
    struct body b = {r->body, r->body_len};
    char range[96];
    char match[112];
    CURLcode cc = CURLE_OK;

    r->status = 0;
    r->dst_len = 0;
    r->length = 0;
    r->total = 0;
    r->etag[0] = '\0';
    sl_buf_reset(&r->xml);
    hd = curl_slist_append(hd, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (s->token != NULL) {
        hd = curl_slist_append(hd, s->token);
    }
    if (r->range != NULL) {
        (void)snprintf(range, sizeof(range), "Range: %s", r->range);
        hd = curl_slist_append(hd, range);
    }
    if (r->if_match != NULL) {
        (void)snprintf(match, sizeof(match), "If-Match: %s", r->if_match);
        hd = curl_slist_append(hd, match);
    }
    /* "Expect:" saves the 100-continue round trip of a big part, but
     * libcurl before 8.3 names it in SignedHeaders without sending it,
     * a signature S3 refuses (curl issue 11664): there libcurl's own
     * "Expect: 100-continue" stays, which it does not sign. */
    if (s->no_expect) {
        hd = curl_slist_append(hd, "Expect:");
    }
    (void)curl_easy_setopt(h, CURLOPT_URL, url);
    (void)curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
    (void)curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    (void)curl_easy_setopt(h, CURLOPT_AWS_SIGV4, s->sigv4);
    (void)curl_easy_setopt(h, CURLOPT_USERPWD, s->userpwd);
    (void)curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    (void)curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    (void)curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    (void)curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
    (void)curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (s->ca_file != NULL) {
        (void)curl_easy_setopt(h, CURLOPT_CAINFO, s->ca_file);
    }
    (void)curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    (void)curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    (void)curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    (void)curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    if (strcmp(r->method, "HEAD") == 0) {
        (void)curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (strcmp(r->method, "PUT") == 0) {
        (void)curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        (void)curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
        (void)curl_easy_setopt(h, CURLOPT_READDATA, &b);
        (void)curl_easy_setopt(
            h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->body_len);
    } else if (strcmp(r->method, "POST") == 0) {
        (void)curl_easy_setopt(h, CURLOPT_POST, 1L);
        (void)curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
        (void)curl_easy_setopt(h, CURLOPT_READDATA, &b);
        (void)curl_easy_setopt(
            h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
    } else if (strcmp(r->method, "GET") != 0) {
        (void)curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
    }
    cc = curl_easy_perform(h);
    if (cc == CURLE_OK) {
        long code = 0;

        (void)curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        r->status = code;
    }
    curl_slist_free_all(hd);
    return cc;
}

/* Is attempt result @cc / status @st worth another attempt? */
static int
transient(CURLcode cc, long st)
{
    switch (cc) {
    case CURLE_OK:
        return st == 429 || st == 500 || st == 502 || st == 503 || st == 504;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
        return 1;
    default:
        return 0;
    }
}

/* The error of a reply that is not 2xx. */
static int
reply_error(struct s3_req *r, const char *what, struct sl_err *err)
{
    char *code = sl__s3_xml_text(r->xml.data, r->xml.len, "Code");
    char *msg = sl__s3_xml_text(r->xml.data, r->xml.len, "Message");
    int e = r->status == 404                       ? SL_ENOENT
            : r->status == 403                     ? SL_EACCES
            : r->status == 409 || r->status == 412 ? SL_ECONFLICT
            : r->status >= 500                     ? SL_EUPSTREAM
                                                   : SL_EIO;
    /* a HEAD has no body: then the status is all there is */
    int rc = sl_err_set(err,
                        e,
                        NULL,
                        "S3 %s: HTTP %ld%s%s%s%s%s",
                        what,
                        r->status,
                        code != NULL || msg != NULL ? " " : "",
                        code != NULL ? code : "",
                        code != NULL && msg != NULL ? ": " : "",
                        msg != NULL ? msg : "",
                        r->status == 403 ? "; check the credentials and the "
                                           "bucket's policy"
                                         : "");

    sl_free(code);
    sl_free(msg);
    return rc;
}

int
sl__s3_do(struct s3 *s, struct s3_req *r, const char *what, struct sl_err *err)
{
    char *url = req_url(s, r);
    CURL *h = handle_get(s);
    CURLcode cc = CURLE_OK;
    unsigned pause = s->backoff_ms;
    unsigned i = 0;
    int rc = 0;

    for (i = 0;; i++) {
        cc = attempt(s, h, r, url);
        if (i >= s->retries || !transient(cc, r->status)) {
            break;
        }
        SL_DEBUG("S3 %s: %s; again in %u ms",
                 what,
                 cc != CURLE_OK ? curl_easy_strerror(cc) : "server busy",
                 pause);
        (void)usleep((useconds_t)pause * 1000);
        pause = pause < 10000 ? pause * 2 : pause;
    }
    if (cc != CURLE_OK) {
        rc = sl_err_set(err,
                        cc == CURLE_WRITE_ERROR ? SL_EIO : SL_EUPSTREAM,
                        NULL,
                        "S3 %s: %s (%s)",
                        what,
                        curl_easy_strerror(cc),
                        s->endpoint);
    } else if (r->status / 100 != 2) {
        rc = reply_error(r, what, err);
    }
    handle_put(s, h);
    sl_free(url);
    return rc;
}
