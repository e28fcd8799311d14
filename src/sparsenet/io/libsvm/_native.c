/*
 * sparsenet.io.libsvm._native: the LibSVM parsing kernel.
 *
 * parse(buffer, ...) parses complete lines of LibSVM text into CSR parts with
 * the GIL released, so several threads can parse byte-range chunks at once.
 * Every token is validated; the first problem stops the parse and is returned
 * as (code, byte offset, extra) for Python to turn into a path:line:col message
 * (see errors.py). The pure-Python kernel in reference.py has the
 * same contract and the tests check that both agree on every case.
 *
 * Numbers: values and labels are parsed to the correctly rounded double
 * (Clinger's exact fast path, then the Eisel-Lemire algorithm, then strtod
 * for the rare remaining cases), then cast to float32 when asked. That is
 * what Python's float() followed by numpy's float32 cast gives.
 *
 * The writer's functions (format_rows_f32, format_f32) live in _native_write.c,
 * compiled into the same extension; this file holds the module's method table.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>


#include "errors.h"
#include "numbers.h"
#include "buffers.h"
#include "write.h"

/* the state numbers.h declares, shared with the writer (_native_write.c) */
unsigned char cls[256];
uint64_t pow5[2 * (POW5_MAX - POW5_MIN + 1)];
int pow5_ready = 0;
#if defined(__GLIBC__)
locale_t c_locale = (locale_t)0;
#endif

/* ------------------------------------------------------------------ the parser */

typedef struct {
    int zero_based, dup_sum, strict_order, allow_nonfinite, f64, multilabel, want_qid;
    int want_weights; /* the label token may be label:weight (1 when absent) */
    int64_t limit;       /* 0-based indices must be < limit */
    int64_t label_limit; /* multi-label class ids must be < label_limit */
} Opts;

typedef struct {
    Vec indptr, indices, values, labels, lab_indptr, lab_ids, qids, weights;
    int64_t nrows, max_index, max_label, nlines;
    int err;
    int64_t err_off, err_extra;
} Result;

typedef struct {
    int64_t idx;
    int64_t pos;
} Pair;

static int cmp_pair(const void *a, const void *b)
{
    const Pair *x = (const Pair *)a, *y = (const Pair *)b;
    if (x->idx != y->idx)
        return x->idx < y->idx ? -1 : 1;
    return x->pos < y->pos ? -1 : (x->pos > y->pos);
}

/* Stable sort of the row's (index, value) pairs by index. */
static int sort_row(int64_t *ind, char *vals, size_t n, size_t vs)
{
    if (n <= 32) {
        for (size_t i = 1; i < n; i++) {
            int64_t k = ind[i];
            char tmp[8];
            memcpy(tmp, vals + i * vs, vs);
            size_t j = i;
            while (j > 0 && ind[j - 1] > k) {
                ind[j] = ind[j - 1];
                memcpy(vals + j * vs, vals + (j - 1) * vs, vs);
                j--;
            }
            ind[j] = k;
            memcpy(vals + j * vs, tmp, vs);
        }
        return 1;
    }
    Pair *pairs = (Pair *)malloc(n * sizeof(Pair));
    char *tmp = (char *)malloc(n * vs);
    if (!pairs || !tmp) {
        free(pairs);
        free(tmp);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        pairs[i].idx = ind[i];
        pairs[i].pos = (int64_t)i;
    }
    qsort(pairs, n, sizeof(Pair), cmp_pair);
    memcpy(tmp, vals, n * vs);
    for (size_t i = 0; i < n; i++) {
        ind[i] = pairs[i].idx;
        memcpy(vals + i * vs, tmp + (size_t)pairs[i].pos * vs, vs);
    }
    free(pairs);
    free(tmp);
    return 1;
}

#define FAIL(code, off, extra) \
    do {                       \
        r->err = (code);       \
        r->err_off = (off);    \
        r->err_extra = (extra); \
        return;                \
    } while (0)

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

/* Multi-label list "1,3,7" at [t, e): class ids pushed to lab_ids. */
static int parse_multilabel(const char *t, const char *e, const Opts *o, Result *r)
{
    size_t start = r->lab_ids.len;
    const char *p = t;
    for (;;) {
        double d;
        int nonfinite;
        const char *q = parse_number(p, e, ',', &d, &nonfinite);
        if (!q || nonfinite || d < 0 || d != floor(d) || d >= 9007199254740992.0 ||
            (int64_t)d >= o->label_limit)
            return 0;
        if (!vec_grow(&r->lab_ids, r->lab_ids.len + 1))
            return -1;
        ((int64_t *)r->lab_ids.p)[r->lab_ids.len++] = (int64_t)d;
        if (q == e)
            break;
        if (*q != ',')
            return 0;
        p = q + 1;
    }
    int64_t *ids = (int64_t *)r->lab_ids.p + start;
    size_t n = r->lab_ids.len - start;
    qsort(ids, n, sizeof(int64_t), cmp_i64);
    for (size_t i = 1; i < n; i++)
        if (ids[i] == ids[i - 1])
            return 0;
    if (n && ids[n - 1] > r->max_label)
        r->max_label = ids[n - 1];
    return 1;
}

/* 0, or the error for a parsed number that is a nan/inf literal while those are
 * not allowed, or finite but out of the dtype's range. */
static inline int check_finite(double d, int nonfinite, const Opts *o, int e_nonfinite,
                               int e_range)
{
    if (nonfinite && !o->allow_nonfinite)
        return e_nonfinite;
    if (!nonfinite && (isinf(d) || (!o->f64 && isinf((float)d))))
        return e_range;
    return 0;
}

/* The label token [t, e): a number, or label:weight with weights=True (weight 1 when
 * absent). Pushes the label (and the weight); returns 0 or an error code. Once per
 * line, out of line so that the feature loop of parse_region stays compact. */
static __attribute__((noinline)) int parse_label(const char *t, const char *e, const Opts *o,
                                                 Result *r)
{
    double d, wt = 1.0;
    int nonfinite = 0, code;
    const char *colon = o->want_weights ? (const char *)memchr(t, ':', (size_t)(e - t)) : NULL;
    const char *le = colon ? colon : e;
    const char *q = colon ? NULL : fast_value(t, &d);
    if (!q)
        q = parse_number(t, le, colon ? ':' : -1, &d, &nonfinite);
    if (!q || q != le)
        return E_LABEL;
    if ((code = check_finite(d, nonfinite, o, E_LABEL_NONFINITE, E_LABEL_RANGE)))
        return code;
    if (colon) {
        q = parse_number(colon + 1, e, -1, &wt, &nonfinite);
        if (!q || q != e)
            return E_WEIGHT;
        if ((code = check_finite(wt, nonfinite, o, E_WEIGHT_NONFINITE, E_WEIGHT_RANGE)))
            return code;
        if (wt < 0)
            return E_WEIGHT_NEG;
    }
    if (!vec_grow(&r->labels, r->labels.len + 1) ||
        (o->want_weights && !vec_grow(&r->weights, r->weights.len + 1)))
        return E_NOMEM;
    if (o->f64)
        ((double *)r->labels.p)[r->labels.len++] = d;
    else
        ((float *)r->labels.p)[r->labels.len++] = (float)d;
    if (o->want_weights) {
        if (o->f64)
            ((double *)r->weights.p)[r->weights.len++] = wt;
        else
            ((float *)r->weights.p)[r->weights.len++] = (float)wt;
    }
    return 0;
}

#include "feature_scan.h"

/* Parse the region [buf, buf + n), whose last byte is '\n' (the sentinel that
 * lets the scanning loops run without bounds checks). Offsets in errors are
 * relative to buf plus `base`. Rows are appended to r. A line's features are
 * read by fast_features (feature_scan.h) when they take the common form, else (and
 * for every error) by the loop here. */
static void parse_region(const char *buf, size_t n, int64_t base, const Opts *o, Result *r)
{
    const char *p = buf, *end = buf + n;
    const size_t vsize = o->f64 ? 8 : 4;
    const int64_t shift = o->zero_based ? 0 : 1;
    /* the largest raw (file) index that stays below the limit */
    const uint64_t max_raw = (uint64_t)(o->limit - 1 + shift);
#define OFF(ptr) ((int64_t)((ptr) - buf) + base)
#ifdef HAVE_FAST_FEATURES
    /* Lines tried with fast_features, and those it handed back: a region where more than
     * a quarter come back (say, every line has an exponent somewhere) is read by the
     * general loop alone, so that no line is read twice for long. */
    int64_t scan_tries = 0, scan_misses = 0;
#endif

    while (p < end) {
        const char *line = p;
        while (cls[(unsigned char)*p] & C_WS)
            p++;
        if (*p == '\n') {
            p++;
            r->nlines++;
            continue;
        }
        if (*p == '#') {
            p = (const char *)memchr(p, '\n', (size_t)(end - p)) + 1;
            r->nlines++;
            continue;
        }
        /* ---- label */
        const char *t = p;
        while (!(cls[(unsigned char)*p] & C_TERM))
            p++;
        if (o->multilabel) {
            if (memchr(t, ':', (size_t)(p - t))) {
                p = t; /* no labels: the token is the first feature */
            } else {
                int ok = parse_multilabel(t, p, o, r);
                if (ok < 0)
                    FAIL(E_NOMEM, OFF(t), 0);
                if (!ok)
                    FAIL(E_MULTILABEL, OFF(t), 0);
            }
            if (!vec_grow(&r->lab_indptr, r->lab_indptr.len + 1))
                FAIL(E_NOMEM, OFF(t), 0);
            ((int64_t *)r->lab_indptr.p)[r->lab_indptr.len++] = (int64_t)r->lab_ids.len;
        } else {
            int code = parse_label(t, p, o, r);
            if (code)
                FAIL(code, OFF(t), 0);
        }
        /* ---- qid */
        int64_t qid = 0;
        while (cls[(unsigned char)*p] & C_WS)
            p++;
        if (p[0] == 'q' && end - p >= 4 && memcmp(p, "qid:", 4) == 0) {
            const char *s = p;
            p += 4;
            const char *ds = p;
            uint64_t v = 0;
            int over = 0;
            while (cls[(unsigned char)*p] & C_DIGIT) {
                if (v > (UINT64_MAX - 9) / 10)
                    over = 1;
                v = v * 10 + (uint64_t)(*p - '0');
                p++;
            }
            if (p == ds || over || v > (uint64_t)INT64_MAX || !(cls[(unsigned char)*p] & C_TERM))
                FAIL(E_QID, OFF(s), 0);
            qid = (int64_t)v;
        }
        if (o->want_qid) {
            if (!vec_grow(&r->qids, r->qids.len + 1))
                FAIL(E_NOMEM, OFF(t), 0);
            ((int64_t *)r->qids.p)[r->qids.len++] = qid;
        }
        /* ---- features */
        size_t row_start = r->indices.len;
        int64_t prev = -1;
        int unsorted = 0, dups = 0;
#ifdef HAVE_FAST_FEATURES
        while (cls[(unsigned char)*p] & C_WS) /* after a qid */
            p++;
        const char *fast = NULL;
        if (scan_misses * 4 <= scan_tries + 16) { /* else the scanner keeps handing lines back */
            fast = fast_features(p, end, o, r, (uint64_t)shift, &unsorted, &dups);
            scan_tries++;
            scan_misses += !fast;
        }
        if (fast)
            p = fast;
#else
        const char *fast = NULL;
#endif
        while (!fast) { /* the general loop: lines fast_features leaves */
            while (cls[(unsigned char)*p] & C_WS)
                p++;
            if (cls[(unsigned char)*p] & (C_HASH | C_NL))
                break;
            const char *tok = p;
            uint64_t raw = 0;
            unsigned dg;
            while ((dg = (unsigned)(unsigned char)*p - '0') < 10) {
                raw = raw * 10 + dg;
                p++;
            }
            size_t nd = (size_t)(p - tok);
            if (nd == 0 || *p != ':') {
                /* slow path: classify the bad token */
                const char *e = tok;
                while (!(cls[(unsigned char)*e] & C_TERM))
                    e++;
                const char *colon = (const char *)memchr(tok, ':', (size_t)(e - tok));
                if (!colon)
                    FAIL(E_NO_COLON, OFF(tok), 0);
                if (*tok == '-' && colon - tok > 1) {
                    const char *c = tok + 1;
                    while (c < colon && (cls[(unsigned char)*c] & C_DIGIT))
                        c++;
                    if (c == colon)
                        FAIL(E_INDEX_NEG, OFF(tok), 0);
                }
                FAIL(E_INDEX, OFF(tok), 0);
            }
            if (nd > 19 || raw > max_raw) {
                /* Leading zeros can make a long digit string small: re-check. */
                const char *c = tok;
                while (c < p - 1 && *c == '0')
                    c++;
                if ((size_t)(p - c) > 19)
                    FAIL(E_INDEX_RANGE, OFF(tok), 0);
                uint64_t v = 0;
                int over = 0;
                for (; c < p; c++) {
                    if (v > (UINT64_MAX - 9) / 10)
                        over = 1;
                    v = v * 10 + (uint64_t)(*c - '0');
                }
                if (over || v > max_raw)
                    FAIL(E_INDEX_RANGE, OFF(tok), 0);
                raw = v;
            }
            if (raw < (uint64_t)shift)
                FAIL(E_INDEX_ZERO, OFF(tok), 0);
            int64_t idx = (int64_t)raw - shift;
            p++; /* ':' */
            double d;
            const char *q = fast_value(p, &d);
            if (q) {
                p = q; /* |d| <= 2**53: finite in float32 too */
            } else {
                int nonfinite;
                q = parse_number(p, end, -1, &d, &nonfinite);
                if (!q)
                    FAIL(E_VALUE, OFF(tok), 0);
                p = q;
                int code = check_finite(d, nonfinite, o, E_VALUE_NONFINITE, E_VALUE_RANGE);
                if (code)
                    FAIL(code, OFF(tok), 0);
            }
            if (idx <= prev) {
                if (idx == prev) {
                    if (!o->dup_sum)
                        FAIL(E_DUPLICATE, OFF(line), idx);
                    dups = 1;
                } else {
                    if (o->strict_order)
                        FAIL(E_UNSORTED, OFF(tok), 0);
                    unsorted = 1;
                }
            }
            prev = idx;
            if (r->indices.len == r->indices.cap) {
                if (!vec_grow(&r->indices, r->indices.len + 1) ||
                    !vec_grow(&r->values, r->indices.cap))
                    FAIL(E_NOMEM, OFF(tok), 0);
            }
            ((int64_t *)r->indices.p)[r->indices.len] = idx;
            if (o->f64)
                ((double *)r->values.p)[r->indices.len] = d;
            else
                ((float *)r->values.p)[r->indices.len] = (float)d;
            r->indices.len++;
            if (idx > r->max_index)
                r->max_index = idx;
        }
        /* ---- end of line */
        if (*p == '#')
            p = (const char *)memchr(p, '\n', (size_t)(end - p));
        p++; /* '\n' */
        r->nlines++;
        size_t cnt = r->indices.len - row_start;
        int64_t *ind = (int64_t *)r->indices.p + row_start;
        char *vals = r->values.p + row_start * vsize;
        if (unsorted) {
            if (!sort_row(ind, vals, cnt, vsize))
                FAIL(E_NOMEM, OFF(line), 0);
            for (size_t i = 1; i < cnt; i++)
                if (ind[i] == ind[i - 1]) {
                    if (!o->dup_sum)
                        FAIL(E_DUPLICATE, OFF(line), ind[i]);
                    dups = 1;
                    break;
                }
        }
        if (dups) {
            size_t w = 0;
            for (size_t i = 0; i < cnt; i++) {
                if (w > 0 && ind[w - 1] == ind[i]) {
                    if (o->f64) {
                        double *v = (double *)vals;
                        double sum = v[w - 1] + v[i];
                        if (isinf(sum) && !isinf(v[w - 1]) && !isinf(v[i]))
                            FAIL(E_SUM_RANGE, OFF(line), ind[i]);
                        v[w - 1] = sum;
                    } else {
                        float *v = (float *)vals;
                        float sum = v[w - 1] + v[i];
                        if (isinf(sum) && !isinf(v[w - 1]) && !isinf(v[i]))
                            FAIL(E_SUM_RANGE, OFF(line), ind[i]);
                        v[w - 1] = sum;
                    }
                } else {
                    ind[w] = ind[i];
                    memmove(vals + w * vsize, vals + i * vsize, vsize);
                    w++;
                }
            }
            r->indices.len = row_start + w;
        }
        if (!vec_grow(&r->indptr, r->indptr.len + 1))
            FAIL(E_NOMEM, OFF(line), 0);
        ((int64_t *)r->indptr.p)[r->indptr.len++] = (int64_t)r->indices.len;
        r->nrows++;
    }
#undef OFF
}

/* Parse buf[0, n): the part up to the last '\n' in place, a final line
 * without '\n' from a copy that has one. */
static void parse_buffer(const char *buf, size_t n, const Opts *o, Result *r)
{
    ((int64_t *)r->indptr.p)[0] = 0;
    r->indptr.len = 1;
    if (o->multilabel) {
        ((int64_t *)r->lab_indptr.p)[0] = 0;
        r->lab_indptr.len = 1;
    }
    /* The in-place region ends at the last '\n'; a final line without one is
     * parsed from a copy that has it. */
    size_t head = n;
    while (head > 0 && buf[head - 1] != '\n')
        head--;
    if (head > 0) {
        parse_region(buf, head, 0, o, r);
        if (r->err)
            return;
    }
    if (head < n) {
        size_t tail = n - head;
        int add_nl = buf[n - 1] != '\n';
        char *copy = (char *)calloc(tail + 1 + 8, 1);
        if (!copy) {
            r->err = E_NOMEM;
            return;
        }
        memcpy(copy, buf + head, tail);
        copy[tail] = '\n';
        parse_region(copy, tail + (size_t)add_nl, (int64_t)head, o, r);
        free(copy);
        if (add_nl)
            r->nlines--; /* the added '\n' */
    }
}

static void result_free(Result *r)
{
    vec_free(&r->indptr);
    vec_free(&r->indices);
    vec_free(&r->values);
    vec_free(&r->labels);
    vec_free(&r->lab_indptr);
    vec_free(&r->lab_ids);
    vec_free(&r->qids);
    vec_free(&r->weights);
}

static PyObject *py_parse(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Opts o;
    long long limit, label_limit;
    o.want_weights = 0;
    if (!PyArg_ParseTuple(args, "y*ppppppLLp|p", &view, &o.zero_based, &o.dup_sum,
                          &o.strict_order, &o.allow_nonfinite, &o.f64, &o.multilabel, &limit,
                          &label_limit, &o.want_qid, &o.want_weights))
        return NULL;
    if (o.want_weights && o.multilabel) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "weights and multilabel cannot be combined");
        return NULL;
    }
    if (limit <= 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "limit must be positive");
        return NULL;
    }
    o.limit = limit;
    o.label_limit = label_limit;
    const char *buf = (const char *)view.buf;
    size_t n = (size_t)view.len;
    Result r;
    memset(&r, 0, sizeof(r));
    r.max_index = -1;
    r.max_label = -1;
    size_t vsize = o.f64 ? 8 : 4;
    /* Upper bounds (a value takes >= 4 bytes with its separator, a row >= 2):
     * untouched capacity costs address space only, and the arrays never grow. */
    size_t cap_nnz = (n + 1) / 4 + 16, cap_rows = (n + 1) / 2 + 16;
    int ok = vec_init(&r.indptr, 8, cap_rows + 1) && vec_init(&r.indices, 8, cap_nnz) &&
             vec_init(&r.values, vsize, cap_nnz) &&
             vec_init(&r.labels, vsize, o.multilabel ? 1 : cap_rows) &&
             vec_init(&r.lab_indptr, 8, o.multilabel ? cap_rows + 1 : 1) &&
             vec_init(&r.lab_ids, 8, o.multilabel ? cap_rows : 1) &&
             vec_init(&r.qids, 8, o.want_qid ? cap_rows : 1) &&
             vec_init(&r.weights, vsize, o.want_weights ? cap_rows : 1);
    if (!ok) {
        result_free(&r);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    parse_buffer(buf, n, &o, &r);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (r.err == E_NOMEM) {
        result_free(&r);
        return PyErr_NoMemory();
    }
    if (r.err) {
        result_free(&r);
        return Py_BuildValue("(iLL)", r.err, (long long)r.err_off, (long long)r.err_extra);
    }
    PyObject *out = PyTuple_New(12);
    if (!out) {
        result_free(&r);
        return NULL;
    }
    r.values.len = r.indices.len; /* values are written alongside indices */
    Vec *vecs[7] = {&r.indptr, &r.indices, &r.values, &r.labels, &r.lab_indptr, &r.lab_ids, &r.qids};
    for (int i = 0; i < 7; i++) {
        PyObject *b;
        int keep = 1;
        if ((i == 3 && o.multilabel) || ((i == 4 || i == 5) && !o.multilabel) || (i == 6 && !o.want_qid))
            keep = 0;
        if (keep)
            b = vec_release(vecs[i]);
        else {
            b = Py_None;
            Py_INCREF(b);
        }
        if (!b) {
            Py_DECREF(out);
            result_free(&r);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, b);
    }
    PyObject *wb = o.want_weights ? vec_release(&r.weights) : (Py_INCREF(Py_None), Py_None);
    if (!wb) {
        Py_DECREF(out);
        result_free(&r);
        return NULL;
    }
    PyTuple_SET_ITEM(out, 11, wb);
    result_free(&r);
    PyTuple_SET_ITEM(out, 7, PyLong_FromLongLong(r.nrows));
    PyTuple_SET_ITEM(out, 8, PyLong_FromLongLong(r.max_index));
    PyTuple_SET_ITEM(out, 9, PyLong_FromLongLong(r.max_label));
    PyTuple_SET_ITEM(out, 10, PyLong_FromLongLong(r.nlines));
    return out;
}

/* Number of rows (lines holding something other than blanks and a comment). */
static PyObject *py_count_rows(PyObject *self, PyObject *args)
{
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view))
        return NULL;
    const char *p = (const char *)view.buf, *end = p + view.len;
    long long rows = 0;
    Py_BEGIN_ALLOW_THREADS
    while (p < end) {
        while (p < end && (cls[(unsigned char)*p] & C_WS))
            p++;
        if (p == end)
            break;
        if (*p != '\n' && *p != '#')
            rows++;
        p = (const char *)memchr(p, '\n', (size_t)(end - p));
        if (!p)
            break;
        p++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromLongLong(rows);
}

static PyObject *py_set_pow5_table(PyObject *self, PyObject *args)
{
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view))
        return NULL;
    if ((size_t)view.len != sizeof(pow5)) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "expected %zu bytes", sizeof(pow5));
        return NULL;
    }
    memcpy(pow5, view.buf, sizeof(pow5));
    pow5_ready = 1;
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

/* parse_double(text) -> float: the number parser alone (tests compare it with float()). */
static PyObject *py_parse_double(PyObject *self, PyObject *args)
{
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view))
        return NULL;
    double d;
    int nonfinite;
    const char *s = (const char *)view.buf;
    const char *q = parse_number(s, s + view.len, -1, &d, &nonfinite);
    int ok = q && q == s + view.len;
    PyBuffer_Release(&view);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "not a number");
        return NULL;
    }
    return PyFloat_FromDouble(d);
}

/* parse_doubles(buffer) -> OwnedBuffer of float64: newline-separated numbers (for tests). */
static PyObject *py_parse_doubles(PyObject *self, PyObject *args)
{
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view))
        return NULL;
    Vec v;
    if (!vec_init(&v, 8, (size_t)view.len / 8 + 16)) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    const char *p = (const char *)view.buf, *end = p + view.len;
    long long bad = -1;
    Py_BEGIN_ALLOW_THREADS
    while (p < end) {
        double d;
        int nonfinite;
        const char *q = parse_number(p, end, -1, &d, &nonfinite);
        if (!q || (q < end && *q != '\n') || !vec_grow(&v, v.len + 1)) {
            bad = (long long)(p - (const char *)view.buf);
            break;
        }
        ((double *)v.p)[v.len++] = d;
        p = q < end ? q + 1 : q;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (bad >= 0) {
        vec_free(&v);
        PyErr_Format(PyExc_ValueError, "not a number at byte %lld", bad);
        return NULL;
    }
    return vec_release(&v);
}

static PyMethodDef methods[] = {
    {"parse", py_parse, METH_VARARGS,
     "parse(buffer, zero_based, dup_sum, strict_order, allow_nonfinite, f64, multilabel, limit, "
     "label_limit, want_qid[, want_weights]) -> (indptr, indices, values, labels, label_indptr, "
     "label_ids, qids, nrows, max_index, max_label, nlines, weights) or (code, offset, extra) on "
     "error"},
    {"count_rows", py_count_rows, METH_VARARGS, "count_rows(buffer) -> number of data rows"},
    {"set_pow5_table", py_set_pow5_table, METH_VARARGS, "install the Eisel-Lemire table"},
    {"parse_double", py_parse_double, METH_VARARGS, "parse one number (tests)"},
    {"parse_doubles", py_parse_doubles, METH_VARARGS, "parse newline-separated numbers (tests)"},
    {"format_rows_f32", py_format_rows_f32, METH_VARARGS,
     "format_rows_f32(indptr, indices, values, labels, shift) -> LibSVM text (float32)"},
    {"format_f32", py_format_f32, METH_VARARGS, "shortest round-trip texts of float32s (tests)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_native",
                                       "Native LibSVM parsing kernel (see kernel.py).", -1,
                                       methods};

PyMODINIT_FUNC PyInit__native(void)
{
    init_classes();
    pthread_atfork(pool_prepare, pool_parent, pool_child);
#if defined(__GLIBC__)
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
#endif
    if (PyType_Ready(&OwnedBufferType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m)
        return NULL;
    Py_INCREF(&OwnedBufferType);
    if (PyModule_AddObject(m, "OwnedBuffer", (PyObject *)&OwnedBufferType) < 0) {
        Py_DECREF(&OwnedBufferType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
