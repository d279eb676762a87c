/*
 * GET / and GET /ui/<file>: the dashboard (dashboard/, docs/operations.md
 * "The dashboard"), served from the copies embedded in the binary.  The
 * page talks to the same REST API as every client, with the same token
 * rule; its Content-Security-Policy allows scripts and styles from this
 * server only.
 */
#include <string.h>

#include "http/dashboard_assets.h"
#include "http/http_int.h"

static const char csp[] = "default-src 'self'; img-src 'self' data:; "
                          "object-src 'none'; base-uri 'none'; "
                          "frame-ancestors 'none'";

static int
serve(struct sl__req *req, const char *name)
{
    const struct sl__asset *a = NULL;
    char *copy = NULL;

    for (a = sl__dashboard_assets; a->name != NULL; a++) {
        if (strcmp(a->name, name) == 0) {
            break;
        }
    }
    if (a->name == NULL) {
        return sl__reply_error(
            req, SL_ENOENT, "file", "the dashboard has no file '%s'", name);
    }
    copy = sl_malloc(a->size + 1);
    memcpy(copy, a->data, a->size);
    return sl__reply_text_headers(req,
                                  200,
                                  a->type,
                                  copy,
                                  a->size,
                                  "Content-Security-Policy",
                                  csp,
                                  "X-Content-Type-Options",
                                  "nosniff",
                                  "Cache-Control",
                                  "no-cache",
                                  NULL);
}

int
sl__api_dashboard_get(struct sl__req *req)
{
    return serve(req, "index.html");
}

int
sl__api_dashboard_file_get(struct sl__req *req)
{
    return serve(req, sl__req_param(req, "file"));
}
