/*
 * Live file-system changes for a continuous file crawl with `watch: true`
 * (docs/workers.md "fileCrawler", docs/jobmanager.md "Continuous
 * crawling"): one watcher per job, made by the crawl's first task, holds an
 * inotify instance with a watch on every folder the crawl lists, and a
 * thread that turns the kernel's events into pending changes: a file
 * written or moved in (changed), a folder made or moved in (new: listed
 * by the next pass), a file or folder deleted or moved out (gone: its
 * documents and those under it are deleted).  A folder renamed inside the
 * tree is gone at its old path (its watches are dropped) and new at the
 * new one.  Every pass of the run takes the pending changes.
 *
 * A folder that cannot be watched (the kernel's max_user_watches, or the
 * job's maxWatches) is kept in a list and listed again by every pass.  A
 * full event queue (IN_Q_OVERFLOW) or too many pending changes make the
 * next pass list the whole tree.  Nothing of this is persisted: after a
 * restart the first pass lists the tree (and watches it again).
 *
 * Threads: the functions may be called from any task thread; one mutex per
 * watcher and one for the table of watchers.  A task holds its watcher
 * (sl__bi_watch_get, sl__bi_watch_put): a watcher dropped meanwhile (the
 * run ended or was canceled while the task ran) is freed by the last put.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "builtin/builtin_int.h"

#define PENDING_MAX 100000 /* changes kept between passes */
#define EVENTS_BUF  65536

struct sl__bi_watch {
    struct sl__bi_watch *next;
    unsigned refs; /* tasks holding it (g_mu) */
    int dropped;   /* out of the table: freed by the last sl__bi_watch_put */
    char *job;
    char *run_id;
    char *source;
    char *root;  /* the crawl's rootFolder */
    int fd;      /* inotify */
    int stop[2]; /* a pipe: the thread ends when it becomes readable */
    pthread_t th;
    pthread_mutex_t mu; /* guards everything below */
    char **dirs;        /* by watch descriptor: the folder's path */
    size_t ndirs;       /* capacity of dirs */
    size_t watches;     /* watches held */
    size_t max_watches; /* 0: the kernel's limit only */
    json_t *pending;    /* path -> "changed" | "new" | "gone" */
    json_t *unwatched;  /* folders that could not be watched: path -> true */
    int rescan;         /* the next pass lists the whole tree */
    int listed;         /* a pass listed the tree since it was made */
    int limit_logged;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct sl__bi_watch *g_watches;

/* Note change @kind of @path; with w->mu held.  A "gone" replaces what
 * was pending for the path; a "new" folder is not made "changed". */
static void
note(struct sl__bi_watch *w, const char *path, const char *kind)
{
    const char *was = json_string_value(json_object_get(w->pending, path));

    if (w->rescan) {
        return;
    }
    if (was == NULL && json_object_size(w->pending) >= PENDING_MAX) {
        SL_WARN("watch of job %s: more than %d changes between passes: the "
                "next pass lists the whole tree",
                w->job,
                PENDING_MAX);
        w->rescan = 1;
        json_object_clear(w->pending);
        return;
    }
    if (was != NULL && (strcmp(was, "new") == 0 || strcmp(was, "renew") == 0) &&
        strcmp(kind, "changed") == 0) {
        return;
    }
    if (was != NULL &&
        (strcmp(was, "gone") == 0 || strcmp(was, "renew") == 0) &&
        strcmp(kind, "new") == 0) {
        kind = "renew"; /* a folder gone and made again: what was under it
                           goes first, then it is listed */
    }
    (void)json_object_set_new(w->pending, path, json_string(kind));
}

/* Drop the watches of folder @path and of the folders under it, and
 * those of them that could not be watched. */
static void
unwatch_under(struct sl__bi_watch *w, const char *path)
{
    size_t n = strlen(path);
    size_t i = 0;
    const char *key = NULL;
    json_t *v = NULL;
    void *tmp = NULL;

    json_object_foreach_safe(w->unwatched, tmp, key, v)
    {
        if (strncmp(key, path, n) == 0 && (key[n] == '\0' || key[n] == '/')) {
            (void)json_object_del(w->unwatched, key);
        }
    }

    for (i = 0; i < w->ndirs; i++) {
        const char *d = w->dirs[i];

        if (d != NULL && strncmp(d, path, n) == 0 &&
            (d[n] == '\0' || d[n] == '/')) {
            (void)inotify_rm_watch(w->fd, (int)i);
            SL_FREE(w->dirs[i]);
            w->watches--;
        }
    }
}

/* Every watch dropped, the changes too: the next pass lists the tree and
 * watches it again (the root moved, deleted or unmounted; paths that can
 * no longer be trusted); with w->mu held. */
static void
reset(struct sl__bi_watch *w, const char *why)
{
    size_t i = 0;

    SL_WARN(
        "watch of job %s: %s: the next pass lists the whole tree", w->job, why);
    for (i = 0; i < w->ndirs; i++) {
        if (w->dirs[i] != NULL) {
            (void)inotify_rm_watch(w->fd, (int)i);
            SL_FREE(w->dirs[i]);
        }
    }
    w->watches = 0;
    w->rescan = 1;
    json_object_clear(w->pending);
    json_object_clear(w->unwatched);
}

/* Is the parent folder of @path watched? */
static int
parent_watched(const struct sl__bi_watch *w, const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash != NULL ? (size_t)(slash - path) : 0;
    size_t i = 0;

    for (i = 0; n > 0 && i < w->ndirs; i++) {
        if (w->dirs[i] != NULL && strlen(w->dirs[i]) == n &&
            memcmp(w->dirs[i], path, n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* An event about watched folder @dir itself: moved, deleted, unmounted.
 * With a watched parent, the parent's event says it; else the root's
 * moves and the others' are a reset, a deleted folder is gone. */
static void
on_self(struct sl__bi_watch *w, const char *dir, uint32_t mask)
{
    char *d = NULL;

    if (mask & IN_UNMOUNT) {
        reset(w, "a folder's file system was unmounted");
    } else if (strcmp(dir, w->root) == 0) {
        reset(w, "rootFolder was moved or deleted");
    } else if (!parent_watched(w, dir)) {
        if (mask & IN_MOVE_SELF) {
            reset(w, "a folder whose parent is not watched was moved");
        } else {
            d = sl_strdup(dir);
            unwatch_under(w, d);
            note(w, d, "gone");
            sl_free(d);
        }
    }
}

/* One event; with w->mu held. */
static void
on_event(struct sl__bi_watch *w, const struct inotify_event *ev)
{
    const char *dir =
        ev->wd >= 0 && (size_t)ev->wd < w->ndirs ? w->dirs[ev->wd] : NULL;
    char *path = NULL;

    if (ev->mask & IN_Q_OVERFLOW) {
        SL_WARN("watch of job %s: the kernel's event queue overflowed: the "
                "next pass lists the whole tree",
                w->job);
        w->rescan = 1;
        json_object_clear(w->pending);
        return;
    }
    if (dir == NULL) {
        return;
    }
    if (ev->mask & (IN_MOVE_SELF | IN_DELETE_SELF | IN_UNMOUNT)) {
        on_self(w, dir, ev->mask);
        return;
    }
    if (ev->mask & IN_IGNORED) {
        SL_FREE(w->dirs[ev->wd]); /* removed, or its folder is gone */
        w->watches--;
        return;
    }
    if (ev->len == 0) {
        return;
    }
    path = sl_asprintf("%s/%s", dir, ev->name);
    if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
        if (ev->mask & IN_ISDIR) {
            unwatch_under(w, path);
        }
        note(w, path, "gone");
    } else if (ev->mask & IN_ISDIR) {
        if (ev->mask & (IN_CREATE | IN_MOVED_TO)) {
            note(w, path, "new");
        }
    } else if (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE)) {
        /* IN_CREATE too: a hard or symbolic link made is never written */
        note(w, path, "changed");
    }
    sl_free(path);
}

static void *
watch_main(void *arg)
{
    struct sl__bi_watch *w = arg;
    char *buf = sl_malloc(EVENTS_BUF);

    (void)pthread_setname_np(pthread_self(), "sl-watch");
    for (;;) {
        struct pollfd p[2] = {{w->fd, POLLIN, 0}, {w->stop[0], POLLIN, 0}};
        ssize_t n = 0;
        char *at = NULL;

        if (poll(p, 2, -1) < 0 && errno != EINTR) {
            break;
        }
        if (p[1].revents != 0) {
            break;
        }
        if (!(p[0].revents & POLLIN)) {
            continue;
        }
        n = read(w->fd, buf, EVENTS_BUF);
        if (n <= 0) {
            continue;
        }
        (void)pthread_mutex_lock(&w->mu);
        for (at = buf; at < buf + n;) {
            const struct inotify_event *ev = (const void *)at;

            on_event(w, ev);
            at += sizeof(*ev) + ev->len;
        }
        (void)pthread_mutex_unlock(&w->mu);
    }
    sl_free(buf);
    return NULL;
}

static void
watch_free(struct sl__bi_watch *w)
{
    size_t i = 0;

    if (w->stop[1] >= 0) {
        /* a pipe of its own, empty: a byte always fits */
        if (write(w->stop[1], "x", 1) != 1) {
            SL_ERROR("watch: cannot wake the watcher's thread: %s",
                     sl_errno_str(errno));
        }
        (void)pthread_join(w->th, NULL);
        (void)close(w->stop[0]);
        (void)close(w->stop[1]);
    }
    if (w->fd >= 0) {
        (void)close(w->fd);
    }
    for (i = 0; i < w->ndirs; i++) {
        sl_free(w->dirs[i]);
    }
    sl_free(w->dirs);
    json_decref(w->pending);
    json_decref(w->unwatched);
    (void)pthread_mutex_destroy(&w->mu);
    sl_free(w->job);
    sl_free(w->root);
    sl_free(w->run_id);
    sl_free(w->source);
    sl_free(w);
}

/* A new watcher with its thread, or NULL (logged). */
static struct sl__bi_watch *
watch_new(const char *job,
          const char *run_id,
          const char *source,
          const char *root)
{
    struct sl__bi_watch *w = sl_calloc(1, sizeof(*w));

    w->job = sl_strdup(job);
    w->root = sl_strdup(root);
    w->run_id = sl_strdup(run_id);
    w->source = sl_strdup(source);
    w->pending = json_object();
    w->unwatched = json_object();
    w->stop[0] = w->stop[1] = -1;
    (void)pthread_mutex_init(&w->mu, NULL);
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->fd < 0 || pipe(w->stop) != 0) {
        SL_ERROR("watch of job %s: %s: the passes list the whole tree",
                 job,
                 sl_errno_str(errno));
        w->stop[0] = w->stop[1] = -1;
        watch_free(w);
        return NULL;
    }
    if (pthread_create(&w->th, NULL, watch_main, w) != 0) {
        (void)close(w->stop[0]);
        (void)close(w->stop[1]);
        w->stop[0] = w->stop[1] = -1;
        watch_free(w);
        return NULL;
    }
    return w;
}

/* @w is out of the table; with g_mu held. */
static void
drop(struct sl__bi_watch *w)
{
    w->dropped = 1;
    if (w->refs == 0) {
        watch_free(w);
    }
}

void
sl__bi_watch_put(struct sl__bi_watch *w)
{
    if (w == NULL) {
        return;
    }
    (void)pthread_mutex_lock(&g_mu);
    w->refs--;
    if (w->refs == 0 && w->dropped) {
        watch_free(w);
    }
    (void)pthread_mutex_unlock(&g_mu);
}

struct sl__bi_watch *
sl__bi_watch_get(const char *job,
                 const char *run_id,
                 const char *source,
                 const char *root,
                 int create,
                 int *made)
{
    struct sl__bi_watch **pp = NULL;
    struct sl__bi_watch *w = NULL;

    *made = 0;
    (void)pthread_mutex_lock(&g_mu);
    for (pp = &g_watches; *pp != NULL; pp = &(*pp)->next) {
        if (strcmp((*pp)->job, job) == 0) {
            break;
        }
    }
    if (*pp != NULL && (strcmp((*pp)->run_id, run_id) != 0 ||
                        strcmp((*pp)->source, source) != 0)) {
        w = *pp; /* of an earlier run */
        *pp = w->next;
        drop(w);
    }
    w = *pp;
    if (w == NULL && create) {
        w = watch_new(job, run_id, source, root);
        if (w != NULL) {
            w->next = g_watches;
            g_watches = w;
        }
    }
    if (w != NULL) {
        w->refs++;
        (void)pthread_mutex_lock(&w->mu);
        *made = !w->listed;
        (void)pthread_mutex_unlock(&w->mu);
    }
    (void)pthread_mutex_unlock(&g_mu);
    return w;
}

void
sl__bi_watch_end(const char *job)
{
    struct sl__bi_watch **pp = NULL;
    struct sl__bi_watch *w = NULL;

    (void)pthread_mutex_lock(&g_mu);
    for (pp = &g_watches; *pp != NULL; pp = &(*pp)->next) {
        if (strcmp((*pp)->job, job) == 0) {
            w = *pp;
            *pp = w->next;
            drop(w);
            break;
        }
    }
    (void)pthread_mutex_unlock(&g_mu);
}

/* The kernel's limit of watches: the user namespace's
 * (user.max_inotify_watches, the same as fs.inotify.max_user_watches
 * outside a namespace), or 0. */
static unsigned long
kernel_limit(void)
{
    FILE *f = fopen("/proc/sys/user/max_inotify_watches", "re");
    unsigned long n = 0;

    if (f == NULL) {
        f = fopen("/proc/sys/fs/inotify/max_user_watches", "re");
    }
    if (f != NULL) {
        if (fscanf(f, "%lu", &n) != 1) {
            n = 0;
        }
        (void)fclose(f);
    }
    return n;
}

int
sl__bi_watch_dir(struct sl__bi_watch *w, const char *path, size_t max)
{
    int wd = -1;
    int e = 0;

    (void)pthread_mutex_lock(&w->mu);
    wd = inotify_add_watch(w->fd,
                           path,
                           IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
                               IN_CREATE | IN_DELETE | IN_MOVE_SELF |
                               IN_DELETE_SELF | IN_ONLYDIR);
    e = errno;
    if (wd >= 0 && max != 0 && w->watches >= max &&
        ((size_t)wd >= w->ndirs || w->dirs[wd] == NULL)) {
        (void)inotify_rm_watch(w->fd, wd); /* a new one, past maxWatches */
        wd = -1;
        e = ENOSPC;
    }
    if (wd >= 0) {
        if ((size_t)wd >= w->ndirs) {
            size_t n =
                w->ndirs * 2 > (size_t)wd + 1 ? w->ndirs * 2 : (size_t)wd + 64;

            w->dirs = sl_realloc(w->dirs, n * sizeof(*w->dirs));
            memset(w->dirs + w->ndirs, 0, (n - w->ndirs) * sizeof(*w->dirs));
            w->ndirs = n;
        }
        if (w->dirs[wd] == NULL) {
            w->watches++;
        }
        sl_free(w->dirs[wd]);
        w->dirs[wd] = sl_strdup(path);
        (void)json_object_del(w->unwatched, path);
    } else if (e == ENOSPC) {
        if (!w->limit_logged) {
            w->limit_logged = 1;
            SL_WARN("watch of job %s: %zu folders watched, the limit (%s "
                    "%lu): the folders past it are listed again by every "
                    "pass",
                    w->job,
                    w->watches,
                    max != 0 ? "maxWatches" : "the kernel's max_user_watches",
                    max != 0 ? (unsigned long)max : kernel_limit());
        }
        (void)json_object_set_new(w->unwatched, path, json_true());
    }
    (void)pthread_mutex_unlock(&w->mu);
    return wd >= 0 ? 0 : e == ENOSPC ? SL_ENOSPC : sl_err_from_errno(e);
}

int
sl__bi_watch_take(struct sl__bi_watch *w, json_t **changes, json_t **unwatched)
{
    int rescan = 0;

    (void)pthread_mutex_lock(&w->mu);
    rescan = w->rescan;
    w->rescan = 0;
    *changes = w->pending;
    w->pending = json_object();
    *unwatched = json_copy(w->unwatched);
    (void)pthread_mutex_unlock(&w->mu);
    return rescan;
}

void
sl__bi_watch_lost(struct sl__bi_watch *w)
{
    (void)pthread_mutex_lock(&w->mu);
    w->rescan = 1;
    json_object_clear(w->pending);
    (void)pthread_mutex_unlock(&w->mu);
}

void
sl__bi_watch_listed(struct sl__bi_watch *w)
{
    (void)pthread_mutex_lock(&w->mu);
    w->listed = 1;
    (void)pthread_mutex_unlock(&w->mu);
}

size_t
sl__bi_watch_count(struct sl__bi_watch *w, size_t *unwatched)
{
    size_t n = 0;

    (void)pthread_mutex_lock(&w->mu);
    n = w->watches;
    *unwatched = json_object_size(w->unwatched);
    (void)pthread_mutex_unlock(&w->mu);
    return n;
}
