/*
 * The dashboard's files (dashboard/), embedded at build time by
 * dashboard/embed.cmake into a generated C file of the http library.
 */
#ifndef SL_HTTP_DASHBOARD_ASSETS_H_INCLUDED
#define SL_HTTP_DASHBOARD_ASSETS_H_INCLUDED

#include <stddef.h>

struct sl__asset {
    const char *name; /* "index.html", "app.js", ... */
    const char *type; /* its Content-Type */
    const unsigned char *data;
    size_t size;
};

/** The files, up to an entry with name NULL. */
extern const struct sl__asset sl__dashboard_assets[];

#endif /* SL_HTTP_DASHBOARD_ASSETS_H_INCLUDED */
