/*
 * Unit tests for the checks that catch mistakes in definitions
 * (jobmanager/params.c and their use in defs_check.c): the edit distance and
 * the suggestion threshold, typed and nested parameter declarations,
 * unknown keys at every level with the field path and the suggestion,
 * worker-prefixed, template and jobmanager keys, "<...>" declarations,
 * "references", input buckets nothing writes, the definition check hook
 * and the lenient reload of stored definitions.
 *
 * Test JSON is written with single quotes; jq() turns them into double
 * quotes before parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "jobmanager/jobmanager_int.h"
#include "jm_fixture.h"

/* One definition: the code, and for errors the field and a message part
 * (NULL: not checked); @p nomsg must not be in the message. */
struct pcase {
    const char *json;
    int rc;
    const char *field;
    const char *msg;
    const char *nomsg;
};

static void
run_cases(struct sl__jm_defs *d,
          enum sl__jm_kind kind,
          const struct pcase *c,
          size_t n)
{
    size_t i = 0;

    for (i = 0; i < n; i++) {
        struct sl_err err;
        int rc = put(d, kind, c[i].json, 0, &err);

        if (rc != c[i].rc) {
            fail_msg("case %zu: got %s (%s, field '%s'), want %s",
                     i,
                     sl_err_name(rc),
                     err.message,
                     err.field,
                     sl_err_name(c[i].rc));
        }
        if (rc == 0) {
            continue;
        }
        if (c[i].field != NULL && strcmp(err.field, c[i].field) != 0) {
            fail_msg("case %zu: field '%s', want '%s' (%s)",
                     i,
                     err.field,
                     c[i].field,
                     err.message);
        }
        if (c[i].msg != NULL && strstr(err.message, c[i].msg) == NULL) {
            fail_msg(
                "case %zu: message '%s' lacks '%s'", i, err.message, c[i].msg);
        }
        if (c[i].nomsg != NULL && strstr(err.message, c[i].nomsg) != NULL) {
            fail_msg(
                "case %zu: message '%s' has '%s'", i, err.message, c[i].nomsg);
        }
    }
}

/* ------------------------------------------------------------------------
 * Edit distance and suggestions.
 * --------------------------------------------------------------------- */

static void
test_edit_distance(void **state)
{
    static const struct {
        const char *a;
        const char *b;
        size_t d;
    } cases[] = {
        {"", "", 0},
        {"abc", "", 3},
        {"", "abc", 3},
        {"maxFileSise", "maxFileSize", 1},          /* substitution */
        {"filePaterns", "filePatterns", 1},         /* insertion */
        {"maxFilesPerBulck", "maxFilesPerBulk", 1}, /* deletion */
        {"deltaImportStrategie", "deltaImportStrategy", 2},
        {"rootFodler", "rootFolder", 1}, /* swap of neighbours */
        {"indexUpdat", "indexUpdate", 1},
        {"kitten", "sitting", 3},
        {"same", "same", 0},
    };
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t d = sl__jm_edit_distance(cases[i].a, cases[i].b);

        if (d != cases[i].d) {
            fail_msg("distance('%s', '%s') = %zu, want %zu",
                     cases[i].a,
                     cases[i].b,
                     d,
                     cases[i].d);
        }
        assert_int_equal(sl__jm_edit_distance(cases[i].b, cases[i].a), d);
    }
}

static void
test_suggest(void **state)
{
    static const char *const names[] = {"maxFileSize",
                                        "maxFolderDepth",
                                        "filePatterns",
                                        "folderPatterns",
                                        "rootFolder",
                                        "dataSource",
                                        "deltaImportStrategy",
                                        "mode",
                                        NULL};
    static const struct {
        const char *name;
        const char *want; /* NULL: no suggestion */
    } cases[] = {
        {"maxFileSise", "maxFileSize"},
        {"filePaterns", "filePatterns"},
        {"folderPaterns", "folderPatterns"},
        {"deltaImportStrategie", "deltaImportStrategy"},
        {"rootFodler", "rootFolder"},
        {"datasource", "dataSource"},
        {"mod", "mode"},
        /* too far for a name of this length */
        {"somethingElse", NULL},
        {"xy", NULL},
        {"mdoe2", "mode"}, /* a swap and a deletion */
        {"mdoeXYZ", NULL},
        /* the name itself is never suggested */
        {"mode", NULL},
    };
    size_t n = sizeof(names) / sizeof(names[0]);
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = sl__jm_suggest(cases[i].name, names, n);

        if ((got == NULL) != (cases[i].want == NULL) ||
            (got != NULL && strcmp(got, cases[i].want) != 0)) {
            fail_msg("suggest('%s') = '%s', want '%s'",
                     cases[i].name,
                     got != NULL ? got : "(none)",
                     cases[i].want != NULL ? cases[i].want : "(none)");
        }
    }
    assert_null(sl__jm_suggest("abc", NULL, 0));
}

/* ------------------------------------------------------------------------
 * Declarations.
 * --------------------------------------------------------------------- */

static void
test_decl_parse(void **state)
{
    static const struct {
        const char *json;
        const char *field;
    } bad[] = {
        {"{'name':'w','parameters':[{'name':'p','type':'int'}]}",
         "parameters[0].type"},
        {"{'name':'w','parameters':[{'name':'p','members':[]}]}",
         "parameters[0].members"},
        {"{'name':'w','parameters':[{'name':'p','type':'object',"
         "'members':[{'name':'a'},{'name':'a'}]}]}",
         "parameters[0].members[1].name"},
        {"{'name':'w','parameters':[{'name':'p','type':'object',"
         "'members':[{'name':'a','type':'array','items':{'type':'x'}}]}]}",
         "parameters[0].members[0].items.type"},
        {"{'name':'w','parameters':[{'name':'p','type':'string',"
         "'items':{'type':'string'}}]}",
         "parameters[0].items"},
        {"{'name':'w','parameters':[{'name':'p','references':'things'}]}",
         "parameters[0].references"},
        {"{'name':'w','parameters':[{'name':'p','type':'object',"
         "'members':[{'optional':true}]}]}",
         "parameters[0].members[0].name"},
        {"{'name':'w','parameters':[{'name':'p','sameForJob':1}]}",
         "parameters[0].sameForJob"},
        {"{'name':'w','parameters':[{'name':'p','type':'object',"
         "'members':[{'name':'a','sameForJob':true}]}]}",
         "parameters[0].members[0].sameForJob"},
        {"{'name':'w','parameters':[{'name':'p','values':['a','b'],"
         "'default':'c'}]}",
         "parameters[0].default"},
        {"{'name':'w','parameters':[{'name':'p','type':'integer',"
         "'default':[1]}]}",
         "parameters[0].default"},
    };
    struct sl__jm_worker *w = NULL;
    struct sl_err err;
    json_t *j = NULL;
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        j = jq(bad[i].json);
        sl_err_clear(&err);
        assert_int_equal(sl__jm_worker_parse(j, &w, &err), SL_EINVALDEF);
        assert_null(w);
        if (strcmp(err.field, bad[i].field) != 0) {
            fail_msg("case %zu: field '%s', want '%s' (%s)",
                     i,
                     err.field,
                     bad[i].field,
                     err.message);
        }
        json_decref(j);
    }
    j = jq("{'name':'w','parameters':["
           " {'name':'f','type':'object','optional':true,'members':["
           "  {'name':'n','type':'integer'},"
           "  {'name':'req','optional':false},"
           "  {'name':'l','type':'array','items':{'type':'regex'}}]},"
           " {'name':'j','references':'jobs'}]}");
    assert_int_equal(sl__jm_worker_parse(j, &w, &err), 0);
    json_decref(j);
    assert_int_equal(w->params[0].type, SL__JM_PT_OBJECT);
    assert_int_equal(w->params[0].optional, 1);
    assert_int_equal(w->params[0].nmembers, 3);
    assert_int_equal(w->params[0].members[0].type, SL__JM_PT_INTEGER);
    assert_int_equal(w->params[0].members[0].optional, 1); /* members */
    assert_int_equal(w->params[0].members[1].optional, 0);
    assert_int_equal(w->params[0].members[2].items->type, SL__JM_PT_REGEX);
    assert_int_equal(w->params[1].references, SL__JM_JOB);
    assert_int_equal(w->params[1].optional, 0); /* top level */
    sl__jm_worker_free(w);
}

/* ------------------------------------------------------------------------
 * Fixture: workers with nested declarations, two workflows.
 * --------------------------------------------------------------------- */

static const char *const test_workers[] = {
    "{'name':'crawler','taskGenerator':'runOnceTrigger',"
    " 'parameters':[{'name':'root'},"
    "  {'name':'maxFiles','optional':true,'type':'integer'},"
    "  {'name':'follow','optional':true,'type':'boolean'},"
    "  {'name':'filters','optional':true,'type':'object','members':["
    "   {'name':'maxFileSize','type':'integer'},"
    "   {'name':'filePatterns','type':'object','members':["
    "    {'name':'include','type':'array','items':{'type':'regex'}},"
    "    {'name':'exclude','type':'array','items':{'type':'regex'}}]}]},"
    "  {'name':'mapping','optional':true,'type':'object','members':["
    "   {'name':'<property>','type':'string'}]},"
    "  {'name':'deltaImportStrategy','optional':true,"
    "   'values':['full','initial'],'default':'full','sameForJob':true}],"
    " 'input':[{'name':'dirs','type':'recordBulks'}],"
    " 'output':[{'name':'dirs','type':'recordBulks',"
    "   'modes':['optional','multiple']},"
    "  {'name':'files','type':'recordBulks','modes':['multiple']}]}",
    /* Declares filters too, with another member: a key of either is fine
     * for a plain job key that reaches both. */
    "{'name':'fetcher',"
    " 'parameters':[{'name':'filters','optional':true,'type':'object',"
    "   'members':[{'name':'maxFileSize','type':'integer'},"
    "              {'name':'timeout','type':'integer'}]},"
    "  {'name':'deltaImportStrategy','optional':true,"
    "   'values':['full','initial'],'default':'full','sameForJob':true},"
    "  {'name':'remote','optional':true,'type':'object','members':["
    "   {'name':'url','optional':false},{'name':'token'}]}],"
    " 'input':[{'name':'in','type':'recordBulks'}],"
    " 'output':[{'name':'out','type':'recordBulks','modes':['optional']}]}",
    "{'name':'pusher',"
    " 'parameters':[{'name':'jobToPushTo','optional':true,"
    "   'references':'jobs'}],"
    " 'input':[{'name':'in','type':'recordBulks'}]}",
    "{'name':'pipelet',"
    " 'parameters':[{'name':'<more>','optional':true,'type':'any'}],"
    " 'input':[{'name':'in','type':'recordBulks'}]}",
};

#define WF_CRAWL                                                               \
    "{'name':'crawl','parameters':{'tempStore':'t'},"                          \
    " 'startAction':{'worker':'crawler','input':{'dirs':'d'},"                 \
    "   'output':{'dirs':'d','files':'f'}},"                                   \
    " 'actions':[{'worker':'fetcher','input':{'in':'f'},"                      \
    "             'output':{'out':'o'}},"                                      \
    "            {'worker':'pusher','input':{'in':'o'}}]}"

#define WF_PIPE                                                                \
    "{'name':'pipe','parameters':{'tempStore':'t'},"                           \
    " 'startAction':{'worker':'crawler','input':{'dirs':'d'},"                 \
    "   'output':{'dirs':'d','files':'f'}},"                                   \
    " 'actions':[{'worker':'pipelet','input':{'in':'f'}}]}"

struct fixture {
    struct sl__jm_defs *d;
    int calls;     /* of the definition check */
    char last[64]; /* worker of its last call */
};

static int
setup(void **state)
{
    struct fixture *f = sl_calloc(1, sizeof(*f));
    struct sl_err err;

    f->d = jm_defs_with_workers(test_workers,
                                sizeof(test_workers) / sizeof(test_workers[0]));
    assert_int_equal(put(f->d, SL__JM_WORKFLOW, WF_CRAWL, 0, &err), 0);
    assert_int_equal(put(f->d, SL__JM_WORKFLOW, WF_PIPE, 0, &err), 0);
    assert_int_equal(
        put(f->d,
            SL__JM_JOB,
            "{'name':'target','workflow':'pipe','parameters':{'root':'/'}}",
            0,
            &err),
        0);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    sl__jm_defs_free(f->d);
    sl_free(f);
    return 0;
}

/* ------------------------------------------------------------------------
 * Jobs.
 * --------------------------------------------------------------------- */

#define JOB(params)                                                            \
    "{'name':'j','workflow':'crawl','parameters':{'root':'/r'" params "}}"

static void
test_job_unknown_keys(void **state)
{
    static const struct pcase cases[] = {
        /* Everything known: declared, template, jobmanager, wf keys. */
        {JOB(",'maxFiles':3,'tempStore':'x','store':'s','dataSource':'d',"
             "'deltaImportStrategy':'full','fetcher.filters':{'timeout':1},"
             "'fetcher.dataSource':'x'"),
         0,
         NULL,
         NULL,
         NULL},
        /* Top level, with and without a suggestion. */
        {JOB(",'maxFile':3"),
         SL_EINVALDEF,
         "parameters.maxFile",
         "job 'j': unknown parameter 'maxFile' (did you mean 'maxFiles'?)",
         NULL},
        {JOB(",'tmpStore':'x'"),
         SL_EINVALDEF,
         "parameters.tmpStore",
         "did you mean 'tempStore'?",
         NULL},
        {JOB(",'deltaImportStrategie':'full'"),
         SL_EINVALDEF,
         "parameters.deltaImportStrategie",
         "did you mean 'deltaImportStrategy'?",
         NULL},
        {JOB(",'completelyDifferent':1"),
         SL_EINVALDEF,
         "parameters.completelyDifferent",
         "unknown parameter 'completelyDifferent'",
         "did you mean"},
        /* Worker-prefixed: only that worker's declarations count. */
        {JOB(",'fetcher.maxFiles':3"),
         SL_EINVALDEF,
         "parameters.fetcher.maxFiles",
         "unknown parameter 'fetcher.maxFiles'",
         NULL},
        {JOB(",'fetcher.filtres':{}"),
         SL_EINVALDEF,
         "parameters.fetcher.filtres",
         "did you mean 'fetcher.filters'?",
         NULL},
        {JOB(",'fetcher.filters':{'maxFileSise':1}"),
         SL_EINVALDEF,
         "parameters.fetcher.filters.maxFileSise",
         "did you mean 'fetcher.filters.maxFileSize'?",
         NULL},
        /* Nested: a member of either receiver's declaration is fine. */
        {JOB(",'filters':{'maxFileSize':1,'timeout':2}"), 0, NULL, NULL, NULL},
        {JOB(",'filters':{'maxFileSise':1}"),
         SL_EINVALDEF,
         "parameters.filters.maxFileSise",
         "unknown parameter 'filters.maxFileSise' (did you mean "
         "'filters.maxFileSize'?)",
         NULL},
        {JOB(",'filters':{'filePaterns':{}}"),
         SL_EINVALDEF,
         "parameters.filters.filePaterns",
         "did you mean 'filters.filePatterns'?",
         NULL},
        {JOB(",'filters':{'filePatterns':{'exlcude':[]}}"),
         SL_EINVALDEF,
         "parameters.filters.filePatterns.exlcude",
         "did you mean 'filters.filePatterns.exclude'?",
         NULL},
        /* A "<...>" member takes any name, with its type. */
        {JOB(",'mapping':{'fileName':'t','anything':'x'}"),
         0,
         NULL,
         NULL,
         NULL},
        {JOB(",'mapping':{'fileName':['t']}"),
         SL_EINVALDEF,
         "parameters.mapping.fileName",
         "must be a string, number or boolean",
         NULL},
        /* Shapes, nested included. */
        {JOB(",'maxFiles':1.5"),
         SL_EINVALDEF,
         "parameters.maxFiles",
         "must be an integer",
         NULL},
        {JOB(",'follow':'yes'"),
         SL_EINVALDEF,
         "parameters.follow",
         "must be a boolean",
         NULL},
        {JOB(",'follow':'true'"), 0, NULL, NULL, NULL},
        {JOB(",'filters':[]"),
         SL_EINVALDEF,
         "parameters.filters",
         "must be an object",
         NULL},
        {JOB(",'filters':{'maxFileSize':{}}"),
         SL_EINVALDEF,
         "parameters.filters.maxFileSize",
         "parameter 'filters.maxFileSize' must be an integer",
         NULL},
        {JOB(",'filters':{'filePatterns':{'include':'x'}}"),
         SL_EINVALDEF,
         "parameters.filters.filePatterns.include",
         "must be an array",
         NULL},
        {JOB(",'filters':{'filePatterns':{'include':['a',3]}}"),
         SL_EINVALDEF,
         "parameters.filters.filePatterns.include[1]",
         "must be a string (a POSIX extended regular expression)",
         NULL},
        /* A required member. */
        {JOB(",'remote':{'token':'x'}"),
         SL_EINVALDEF,
         "parameters.remote",
         "parameter 'remote' needs member 'url'",
         NULL},
        {JOB(",'remote':{'url':'u'}"), 0, NULL, NULL, NULL},
    };
    struct fixture *f = *state;

    run_cases(f->d, SL__JM_JOB, cases, sizeof(cases) / sizeof(*cases));
}

static void
test_job_wildcard_worker(void **state)
{
    static const struct pcase cases[] = {
        /* pipelet takes any plain key, and any "pipelet.x" */
        {"{'name':'p','workflow':'pipe','parameters':{'root':'/',"
         "'whatever':{'a':[1]},'pipelet.x':1}}",
         0,
         NULL,
         NULL,
         NULL},
        /* but "crawler.x" is the crawler's alone */
        {"{'name':'p','workflow':'pipe','parameters':{'root':'/',"
         "'crawler.x':1}}",
         SL_EINVALDEF,
         "parameters.crawler.x",
         NULL,
         NULL},
        /* nested keys of a declared parameter are still checked */
        {"{'name':'p','workflow':'pipe','parameters':{'root':'/',"
         "'filters':{'maxFileSise':1}}}",
         0,
         NULL,
         NULL,
         NULL},
    };
    struct fixture *f = *state;

    /* The last case: pipelet receives "filters" too and takes anything
     * under its "<more>" declaration, so the key is not unknown. */
    run_cases(f->d, SL__JM_JOB, cases, sizeof(cases) / sizeof(*cases));
}

/* A "sameForJob" parameter: one value for every worker that declares it,
 * an unset one counting as its "default". */
static void
test_job_same_for_job(void **state)
{
    static const struct pcase cases[] = {
        {JOB(",'deltaImportStrategy':'initial'"), 0, NULL, NULL, NULL},
        {JOB(",'crawler.deltaImportStrategy':'full'"), 0, NULL, NULL, NULL},
        {JOB(",'crawler.deltaImportStrategy':'initial',"
             "'fetcher.deltaImportStrategy':'initial'"),
         0,
         NULL,
         NULL,
         NULL},
        {JOB(",'fetcher.deltaImportStrategy':'initial'"),
         SL_EINVALDEF,
         "parameters.deltaImportStrategy",
         "job 'j': deltaImportStrategy is 'initial' for action 1 (fetcher) "
         "but 'full' for the start action (crawler)",
         NULL},
        {JOB(",'deltaImportStrategy':'partial'"),
         SL_EINVALDEF,
         "parameters.deltaImportStrategy",
         "must be one of full, initial",
         NULL},
    };
    struct fixture *f = *state;

    run_cases(f->d, SL__JM_JOB, cases, sizeof(cases) / sizeof(*cases));
}

static void
test_job_references(void **state)
{
    static const struct pcase cases[] = {
        {JOB(",'jobToPushTo':'target'"), 0, NULL, NULL, NULL},
        {JOB(",'jobToPushTo':'targt'"),
         SL_EINVALDEF,
         "parameters.jobToPushTo",
         "parameter 'jobToPushTo' of worker 'pusher' (action 2) names job "
         "'targt', which is not defined (did you mean 'target'?)",
         NULL},
        {JOB(",'pusher.jobToPushTo':'zzz'"),
         SL_EINVALDEF,
         "parameters.pusher.jobToPushTo",
         "names job 'zzz', which is not defined",
         "did you mean"},
    };
    struct fixture *f = *state;

    run_cases(f->d, SL__JM_JOB, cases, sizeof(cases) / sizeof(*cases));
}

/* A definition check that refuses a "bad" value of any parameter. */
static int
hook(void *arg,
     const char *job,
     const char *worker,
     const json_t *desc,
     const json_t *params,
     struct sl_err *err)
{
    struct fixture *f = arg;
    const json_t *filters = json_object_get(params, "filters");

    (void)job;
    f->calls++;
    (void)snprintf(f->last, sizeof(f->last), "%s", worker);
    assert_string_equal(json_string_value(json_object_get(desc, "name")),
                        worker);
    if (json_is_string(json_object_get(filters, "maxFileSize"))) {
        return sl_err_set(err,
                          SL_EINVAL,
                          "parameters.filters.maxFileSize",
                          "parameter 'filters.maxFileSize' is not a number");
    }
    return 0;
}

static void
test_job_def_check(void **state)
{
    struct fixture *f = *state;
    struct sl_err err;

    sl__jm_defs_set_check(f->d, hook, f);
    assert_int_equal(put(f->d, SL__JM_JOB, JOB(""), 0, &err), 0);
    assert_int_equal(f->calls, 3); /* one per action */
    assert_string_equal(f->last, "pusher");
    f->calls = 0;
    assert_int_equal(
        put(f->d, SL__JM_JOB, JOB(",'filters':{'maxFileSize':'10k'}"), 0, &err),
        SL_EINVALDEF);
    assert_string_equal(err.field, "parameters.filters.maxFileSize");
    assert_non_null(strstr(err.message,
                           "job 'j': worker 'crawler' (start action): "
                           "parameter 'filters.maxFileSize' is not a number"));
    /* Set through a worker prefix: the field says so. */
    assert_int_equal(put(f->d,
                         SL__JM_JOB,
                         JOB(",'fetcher.filters':{'maxFileSize':'10k'}"),
                         0,
                         &err),
                     SL_EINVALDEF);
    assert_string_equal(err.field, "parameters.fetcher.filters.maxFileSize");
    assert_non_null(strstr(err.message, "worker 'fetcher' (action 1)"));
}

/* ------------------------------------------------------------------------
 * Workflows.
 * --------------------------------------------------------------------- */

static void
test_workflow_checks(void **state)
{
    static const struct pcase cases[] = {
        /* An action reads a bucket nothing writes. */
        {"{'name':'w','parameters':{'tempStore':'t'},"
         " 'startAction':{'worker':'crawler','input':{'dirs':'d'},"
         "   'output':{'dirs':'d','files':'f'}},"
         " 'actions':[{'worker':'fetcher','input':{'in':'fetchMe'}}]}",
         SL_EINVALDEF,
         "actions[0].input.in",
         "workflow 'w': action 1 (fetcher): input bucket 'fetchMe' of slot "
         "'in' is written by no action",
         NULL},
        /* Reading the start action's bucket is fine. */
        {"{'name':'w','modes':['standard'],'parameters':{'tempStore':'t'},"
         " 'startAction':{'worker':'fetcher','input':{'in':'src'}},"
         " 'actions':[{'worker':'pusher','input':{'in':'src'}}]}",
         0,
         NULL,
         NULL,
         NULL},
        /* Workflow parameters: known to some worker or the templates. */
        {"{'name':'w','parameters':{'tempStore':'t','tmpStore':'x'},"
         " 'startAction':{'worker':'crawler','input':{'dirs':'d'},"
         "   'output':{'dirs':'d','files':'f'}}}",
         SL_EINVALDEF,
         "parameters.tmpStore",
         "workflow 'w': unknown parameter 'tmpStore' (did you mean "
         "'tempStore'?)",
         NULL},
        {"{'name':'w','parameters':{'tempStore':'t','filters':{'timeout':1}},"
         " 'startAction':{'worker':'crawler','input':{'dirs':'d'},"
         "   'output':{'dirs':'d','files':'f'}},"
         " 'actions':[{'worker':'fetcher','input':{'in':'f'}}]}",
         0,
         NULL,
         NULL,
         NULL},
        /* Action parameters: that worker's declarations only. */
        {"{'name':'w','parameters':{'tempStore':'t'},"
         " 'startAction':{'worker':'crawler','input':{'dirs':'d'},"
         "   'output':{'dirs':'d','files':'f'}},"
         " 'actions':[{'worker':'fetcher','input':{'in':'f'},"
         "   'parameters':{'filters':{'maxFileSize':1,'maxFolderDepth':2}}}]}",
         SL_EINVALDEF,
         "actions[0].parameters.filters.maxFolderDepth",
         "workflow 'w': action 1 (fetcher): unknown parameter "
         "'filters.maxFolderDepth'",
         NULL},
        {"{'name':'w','parameters':{'tempStore':'t'},"
         " 'startAction':{'worker':'crawler','input':{'dirs':'d'},"
         "   'output':{'dirs':'d','files':'f'},"
         "   'parameters':{'rootFolder':'/x'}}}",
         SL_EINVALDEF,
         "startAction.parameters.rootFolder",
         "workflow 'w': start action (crawler): unknown parameter "
         "'rootFolder'",
         NULL},
    };
    struct fixture *f = *state;

    run_cases(f->d, SL__JM_WORKFLOW, cases, sizeof(cases) / sizeof(*cases));
}

/* A stored definition reloaded at start keeps loading (with a warning). */
static void
test_lenient_reload(void **state)
{
    struct fixture *f = *state;
    struct sl_err err;
    json_t *got = NULL;

    assert_int_equal(
        put(f->d, SL__JM_JOB, JOB(",'maxFile':3"), SL__JM_PUT_LENIENT, &err),
        0);
    got = sl__jm_defs_get(f->d, SL__JM_JOB, "j");
    assert_non_null(got);
    json_decref(got);
    /* The rules that were there before still refuse. */
    assert_int_equal(put(f->d,
                         SL__JM_JOB,
                         "{'name':'k','workflow':'crawl'}",
                         SL__JM_PUT_LENIENT,
                         &err),
                     SL_EINVALDEF);
    assert_string_equal(err.field, "parameters.root");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edit_distance),
        cmocka_unit_test(test_suggest),
        cmocka_unit_test(test_decl_parse),
        cmocka_unit_test_setup_teardown(test_job_unknown_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_job_wildcard_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_same_for_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_references, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_def_check, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workflow_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lenient_reload, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
