/*
 * webCrawler: a site's index page and its directory URL are one document
 * (mergeIndexPages, docs/workers.md "One document per page").
 *
 * A page at an index name (`/d/index.html`, `/d/default.htm`, ...; no
 * query) is usually what its directory URL (`/d/`) serves, so both are
 * linked and both would be indexed.  Before such a page is fetched, its
 * directory URL is fetched (a probe: only the SHA-256 of its body is
 * kept); when the page's body has the same hash, its record is written
 * under the directory URL.  The decision rests on what both URLs answer,
 * not on a rule about servers: a server that serves another page, a
 * listing, a redirect or an error at `/d/` (a plain S3 bucket) leaves the
 * index page its own document, so no page is lost.  A directory URL the
 * crawl may not fetch (URL filters, robots.txt) is not probed.
 *
 * Threads: the task's thread, as the rest of the crawler.
 */
#include <string.h>
#include <strings.h>

#include "builtin/web_int.h"

/* Names servers serve for a directory (Apache's DirectoryIndex, nginx's
 * index, IIS's default documents, S3 website hosting), without case. */
static const char *const index_names[] = {
    "index.html",
    "index.htm",
    "index.shtml",
    "index.xhtml",
    "index.php",
    "index.asp",
    "index.aspx",
    "index.jsp",
    "default.htm",
    "default.html",
    "default.asp",
    "default.aspx",
};

/* The directory URL of index page @url (a new string), or NULL when
 * @url's last path segment is no index name or it has a query. */
static char *
index_dir(const char *url)
{
    const char *end = url + strcspn(url, "?#");
    const char *slash = NULL;
    const char *p = url;
    size_t i = 0;

    if (*end == '?') {
        return NULL;
    }
    for (; p < end; p++) {
        if (*p == '/') {
            slash = p;
        }
    }
    if (slash == NULL || strstr(url, "://") == NULL ||
        slash < strstr(url, "://") + 3) {
        return NULL;
    }
    for (i = 0; i < sizeof(index_names) / sizeof(index_names[0]); i++) {
        size_t n = strlen(index_names[i]);

        if ((size_t)(end - slash - 1) == n &&
            strncasecmp(slash + 1, index_names[i], n) == 0) {
            return sl_strndup(url, (size_t)(slash + 1 - url));
        }
    }
    return NULL;
}

struct web_link *
sl__bi_web_probe_for(struct web_crawl *c, struct web_link *lk)
{
    struct web_link *p = NULL;
    char *dir = NULL;

    if (!c->merge_index || lk->kind != K_PAGE || lk->probe_checked) {
        return NULL;
    }
    lk->probe_checked = 1; /* once: a link waits for its host many passes */
    dir = index_dir(lk->url);
    if (dir == NULL) {
        return NULL;
    }
    if (!sl__bi_patterns_pass(&c->urls, dir) ||
        !sl__bi_web_robots_allows(c, dir)) {
        sl_free(dir);
        return NULL;
    }
    p = sl_calloc(1, sizeof(*p));
    if (sl_web_url_host_key(dir, &p->host) != 0) {
        sl_free(p);
        sl_free(dir);
        return NULL;
    }
    p->url = dir;
    p->depth = lk->depth;
    p->kind = K_PROBE;
    p->admitted = 1;
    p->page = lk;
    lk->dir_url = sl_strdup(dir);
    count(c, "links.indexProbed");
    return p;
}

/* Probe @probe is over: its page is queued again with @sha, the hash of
 * what its directory URL answered ("": no 2xx page, or not asked). */
static void
requeue_page(struct web_crawl *c, struct web_link *probe, const char *sha)
{
    struct web_link *lk = probe->page;

    probe->page = NULL;
    if (lk == NULL) {
        return;
    }
    sl_free(lk->dir_sha);
    lk->dir_sha = sl_strdup(sha);
    lk->next = c->pending; /* admitted already: starts on the next pass */
    c->pending = lk;
}

void
sl__bi_web_probe_done(struct web_crawl *c, struct web_xfer *x, long status)
{
    requeue_page(c,
                 x->lk,
                 status >= 200 && status < 300 && !x->too_large &&
                         x->sha != NULL
                     ? sl__bi_web_body_sha(x)
                     : "");
}

void
sl__bi_web_probe_abandon(struct web_crawl *c, struct web_link *probe)
{
    requeue_page(c, probe, "");
}

const char *
sl__bi_web_index_url(struct web_crawl *c, struct web_xfer *x)
{
    const char *sha = NULL;

    if (x->lk->dir_sha == NULL || x->lk->dir_sha[0] == '\0' || x->sha == NULL) {
        return NULL;
    }
    sha = sl__bi_web_body_sha(x);
    if (strcmp(sha, x->lk->dir_sha) != 0) {
        count(c, "records.indexPageDiffers");
        return NULL;
    }
    count(c, "records.indexPage");
    return x->lk->dir_url;
}
