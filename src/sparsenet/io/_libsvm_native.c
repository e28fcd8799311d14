/*
 * sparsenet.io._libsvm_native: the LibSVM parsing kernel.
 *
 * parse(buffer, ...) parses complete lines of LibSVM text into CSR parts with
 * the GIL released, so several threads can parse byte-range chunks at once.
 * Every token is validated; the first problem stops the parse and is returned
 * as (code, byte offset, extra) for Python to turn into a path:line:col message
 * (see libsvm_errors.py). The pure-Python kernel in libsvm_reference.py has the
 * same contract and the tests check that both agree on every case.
 *
 * Numbers: values and labels are parsed to the correctly rounded double
 * (Clinger's exact fast path, then the Eisel-Lemire algorithm, then strtod
 * for the rare remaining cases), then cast to float32 when asked. That is
 * what Python's float() followed by numpy's float32 cast gives.
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

/* error codes: keep in sync with libsvm_errors.py */
enum {
    E_OK = 0,
    E_LABEL = 1,           /* label token is not a number */
    E_LABEL_NONFINITE = 2, /* nan/inf label while allow_nonfinite is off */
    E_LABEL_RANGE = 3,     /* finite label overflows the dtype */
    E_MULTILABEL = 4,      /* bad multi-label list (Python finds the reason) */
    E_QID = 5,             /* qid:value with a bad value */
    E_NO_COLON = 6,        /* token without ':' */
    E_INDEX = 7,           /* index part is not a non-negative integer */
    E_INDEX_NEG = 8,       /* index part is -digits */
    E_INDEX_ZERO = 9,      /* index 0 in a 1-based file */
    E_INDEX_RANGE = 10,    /* index >= limit (or does not fit in int64) */
    E_VALUE = 11,          /* value part is not a number */
    E_VALUE_NONFINITE = 12,
    E_VALUE_RANGE = 13,    /* finite value overflows the dtype */
    E_UNSORTED = 14,       /* strict_order and index < previous index */
    E_DUPLICATE = 15,      /* offset = line start, extra = 0-based index */
    E_SUM_RANGE = 16,      /* summing duplicates overflowed; offset = line start, extra = index */
    E_NOMEM = 17
};

/* character classes */
#define C_WS 1
#define C_NL 2
#define C_HASH 4
#define C_DIGIT 8
#define C_TERM (C_WS | C_NL | C_HASH)
static unsigned char cls[256];

static void init_classes(void)
{
    memset(cls, 0, sizeof(cls));
    cls[(unsigned char)' '] = C_WS;
    cls[(unsigned char)'\t'] = C_WS;
    cls[(unsigned char)'\r'] = C_WS;
    cls[(unsigned char)'\v'] = C_WS;
    cls[(unsigned char)'\f'] = C_WS;
    cls[(unsigned char)'\n'] = C_NL;
    cls[(unsigned char)'#'] = C_HASH;
    for (int c = '0'; c <= '9'; c++)
        cls[c] = C_DIGIT;
}

/* ------------------------------------------------------------------ numbers */

/* 128-bit truncated powers of five for 10^q, q in [-342, 308], two words each
 * (high, low); filled from Python at import (libsvm_kernel.py computes them). */
#define POW5_MIN (-342)
#define POW5_MAX 308
static uint64_t pow5[2 * (POW5_MAX - POW5_MIN + 1)];
static int pow5_ready = 0;

static const double exact_p10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

#if defined(__GLIBC__)
static locale_t c_locale = (locale_t)0;
#endif

/* Correctly rounded w * 10^q (w != 0) by Eisel-Lemire; 0 when undecided. */
static int eisel_lemire(uint64_t w, int64_t q, double *out)
{
    if (q < POW5_MIN) { /* w < 2^64 so w * 10^q < 2e-323: rounds to zero */
        *out = 0.0;
        return 1;
    }
    if (q > POW5_MAX) {
        *out = INFINITY;
        return 1;
    }
    if (!pow5_ready)
        return 0;
    int lz = __builtin_clzll(w);
    w <<= lz;
    const uint64_t *t = &pow5[2 * (q - POW5_MIN)];
    unsigned __int128 p1 = (unsigned __int128)w * t[0];
    uint64_t hi = (uint64_t)(p1 >> 64), lo = (uint64_t)p1;
    if ((hi & 0x1FF) == 0x1FF) {
        unsigned __int128 p2 = (unsigned __int128)w * t[1];
        uint64_t p2hi = (uint64_t)(p2 >> 64);
        lo += p2hi;
        if (p2hi > lo)
            hi++;
        if (lo == UINT64_MAX && (q < -27 || q > 55))
            return 0; /* conservative: let strtod decide */
    }
    int upperbit = (int)(hi >> 63);
    int shift = upperbit + 9;
    uint64_t mant = hi >> shift;
    int32_t power2 = (int32_t)((((152170 + 65536) * (int32_t)q) >> 16) + 63) + upperbit - lz + 1023;
    if (power2 <= 0)
        return 0; /* subnormal result: rare, strtod handles it */
    if (lo <= 1 && q >= -4 && q <= 23 && (mant & 3) == 1) {
        if ((mant << shift) == hi)
            mant &= ~(uint64_t)1; /* exactly halfway: round to even */
    }
    mant += mant & 1;
    mant >>= 1;
    if (mant >= ((uint64_t)2 << 52)) {
        mant = (uint64_t)1 << 52;
        power2++;
    }
    mant &= ~((uint64_t)1 << 52);
    if (power2 >= 0x7FF) {
        *out = INFINITY;
        return 1;
    }
    uint64_t bits = mant | ((uint64_t)power2 << 52);
    memcpy(out, &bits, sizeof(bits));
    return 1;
}

static double slow_strtod(const char *s, size_t n)
{
    char stack[128];
    char *buf = n < sizeof(stack) ? stack : (char *)malloc(n + 1);
    if (!buf)
        return NAN;
    memcpy(buf, s, n);
    buf[n] = 0;
#if defined(__GLIBC__)
    double d = c_locale ? strtod_l(buf, NULL, c_locale) : strtod(buf, NULL);
#else
    double d = strtod(buf, NULL);
#endif
    if (buf != stack)
        free(buf);
    return d;
}

static int lower_eq(const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != word[i])
            return 0;
    }
    return 1;
}

/* Parse a number at [p, end) that must fill the token exactly (up to a
 * terminator or `stop`). Grammar: [+-]? (d+ [. d*]? | . d+) ([eE] [+-]? d+)?
 * or [+-]? (nan | inf | infinity), case-insensitive.
 * Returns the end pointer, or NULL when the text is not a number.
 * *nonfinite is set when the text is a nan/inf literal. */
static __attribute__((noinline)) const char *parse_number(const char *p, const char *end, int stop,
                                                          double *out, int *nonfinite)
{
    int neg = 0;
    *nonfinite = 0;
    if (p < end && (*p == '+' || *p == '-')) {
        neg = (*p == '-');
        p++;
    }
    const char *ip = p;
    while (p < end && (cls[(unsigned char)*p] & C_DIGIT))
        p++;
    const char *ie = p;
    const char *fp = p, *fe = p;
    if (p < end && *p == '.') {
        p++;
        fp = p;
        while (p < end && (cls[(unsigned char)*p] & C_DIGIT))
            p++;
        fe = p;
    }
    size_t nint = (size_t)(ie - ip), nfrac = (size_t)(fe - fp);
    if (nint + nfrac == 0) {
        /* nan / inf / infinity */
        const char *q = ip;
        double v;
        if (lower_eq(q, end, "infinity")) {
            q += 8;
            v = INFINITY;
        } else if (lower_eq(q, end, "inf")) {
            q += 3;
            v = INFINITY;
        } else if (lower_eq(q, end, "nan")) {
            q += 3;
            v = NAN;
        } else
            return NULL;
        if (q < end && !(cls[(unsigned char)*q] & C_TERM) && (unsigned char)*q != stop)
            return NULL;
        *out = neg ? -v : v;
        *nonfinite = 1;
        return q;
    }
    int64_t e10 = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        if (p < end && (*p == '+' || *p == '-')) {
            eneg = (*p == '-');
            p++;
        }
        const char *es = p;
        while (p < end && (cls[(unsigned char)*p] & C_DIGIT)) {
            if (e10 < 100000000)
                e10 = e10 * 10 + (*p - '0');
            p++;
        }
        if (p == es)
            return NULL;
        if (eneg)
            e10 = -e10;
    }
    if (p < end && !(cls[(unsigned char)*p] & C_TERM) && (unsigned char)*p != stop)
        return NULL;

    /* significant digits */
    uint64_t w = 0;
    int64_t q;
    int truncated = 0;
    if (nint + nfrac <= 19) {
        for (const char *c = ip; c < ie; c++)
            w = w * 10 + (uint64_t)(*c - '0');
        for (const char *c = fp; c < fe; c++)
            w = w * 10 + (uint64_t)(*c - '0');
        q = e10 - (int64_t)nfrac;
    } else {
        /* skip leading zeros, keep 19 significant digits */
        int taken = 0;
        int64_t dropped_int = 0, taken_frac = 0;
        for (const char *c = ip; c < ie; c++) {
            int d = *c - '0';
            if (taken == 0 && d == 0)
                continue;
            if (taken < 19) {
                w = w * 10 + (uint64_t)d;
                taken++;
            } else {
                dropped_int++;
                if (d)
                    truncated = 1;
            }
        }
        for (const char *c = fp; c < fe; c++) {
            int d = *c - '0';
            if (taken == 0 && d == 0) {
                taken_frac++; /* leading zero after the point still scales */
                continue;
            }
            if (taken < 19) {
                w = w * 10 + (uint64_t)d;
                taken++;
                taken_frac++;
            } else if (d)
                truncated = 1;
        }
        q = e10 + dropped_int - taken_frac;
    }
    double v;
    if (w == 0)
        v = 0.0;
    else if (truncated)
        v = slow_strtod(ip, (size_t)(p - ip));
    else if (q >= -22 && q <= 22 && w <= ((uint64_t)1 << 53)) {
        v = (double)w;
        if (q < 0)
            v /= exact_p10[-q];
        else
            v *= exact_p10[q];
    } else if (!eisel_lemire(w, q, &v))
        v = slow_strtod(ip, (size_t)(p - ip));
    *out = neg ? -v : v;
    return p;
}


/* The common value inline: [+-]? d+ [. d*] with at most 19 digits, no
 * exponent, exactly convertible by Clinger's rule, followed by a terminator.
 * NULL: use parse_number. The scanning loops stop at the region's final
 * '\n', so they need no bounds checks. (Measured: plain loops beat 8-byte
 * SWAR digit runs here, because predictable branches let the CPU run ahead
 * while SWAR chains every token on the previous one.) */
static inline __attribute__((always_inline)) const char *fast_value(const char *p, double *out)
{
    int neg = (*p == '-');
    p += (*p == '-' || *p == '+');
    const char *ip = p;
    uint64_t w = 0;
    unsigned d;
    while ((d = (unsigned)(unsigned char)*p - '0') < 10) {
        w = w * 10 + d;
        p++;
    }
    size_t nd = (size_t)(p - ip), nfrac = 0;
    if (*p == '.') {
        p++;
        const char *fp = p;
        while ((d = (unsigned)(unsigned char)*p - '0') < 10) {
            w = w * 10 + d;
            p++;
        }
        nfrac = (size_t)(p - fp);
        nd += nfrac;
    }
    if (nd == 0 || nd > 19 || nfrac > 22 || w > ((uint64_t)1 << 53) ||
        !(cls[(unsigned char)*p] & C_TERM))
        return NULL;
    double v = (double)w / exact_p10[nfrac];
    *out = neg ? -v : v;
    return p;
}

/* ------------------------------------------------------------------ memory */

/* Arrays of 4 MiB or more are mapped directly, 2 MiB-aligned and marked for
 * transparent huge pages. Their capacities are generous upper bounds, so the
 * mappings are large but mostly untouched address space. Released mappings go
 * to a small pool and are reused by the next chunks: fresh pages must be
 * faulted in and zeroed by the kernel, which costs as much as parsing them on
 * a VM (measured), while reused pages are already there. */
#define BIG_ALLOC ((size_t)4 << 20)
#define HUGE_PAGE ((size_t)2 << 20)
#define POOL_SLOTS 16

#include <pthread.h>
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static char *pool_ptr[POOL_SLOTS];
static size_t pool_map[POOL_SLOTS];
static int pool_n = 0;

static char *map_new(size_t m)
{
    char *raw = (char *)mmap(NULL, m + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == (char *)MAP_FAILED)
        return NULL;
    uintptr_t start = ((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    size_t head = (size_t)(start - (uintptr_t)raw);
    if (head)
        munmap(raw, head);
    if (HUGE_PAGE - head)
        munmap((char *)start + m, HUGE_PAGE - head);
#ifdef MADV_HUGEPAGE
    madvise((void *)start, m, MADV_HUGEPAGE);
#endif
    return (char *)start;
}

static char *mem_alloc(size_t bytes, size_t *map)
{
    *map = 0;
    if (bytes < BIG_ALLOC)
        return (char *)malloc(bytes ? bytes : 1);
    size_t m = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    pthread_mutex_lock(&pool_lock);
    int best = -1;
    for (int i = 0; i < pool_n; i++) /* the smallest pooled mapping that fits */
        if (pool_map[i] >= m && (best < 0 || pool_map[i] < pool_map[best]))
            best = i;
    char *p = NULL;
    if (best >= 0) {
        p = pool_ptr[best];
        m = pool_map[best];
        pool_n--;
        pool_ptr[best] = pool_ptr[pool_n];
        pool_map[best] = pool_map[pool_n];
    }
    pthread_mutex_unlock(&pool_lock);
    if (!p)
        p = map_new(m);
    if (p)
        *map = m;
    return p;
}

static void mem_free(char *p, size_t map)
{
    if (!p)
        return;
    if (!map) {
        free(p);
        return;
    }
    pthread_mutex_lock(&pool_lock);
    if (pool_n == POOL_SLOTS) { /* full: drop the largest mapping */
        int big = 0;
        for (int i = 1; i < pool_n; i++)
            if (pool_map[i] > pool_map[big])
                big = i;
        if (pool_map[big] > map) {
            char *q = pool_ptr[big];
            size_t qm = pool_map[big];
            pool_ptr[big] = p;
            pool_map[big] = map;
            p = q;
            map = qm;
        }
        pthread_mutex_unlock(&pool_lock);
        munmap(p, map);
        return;
    }
    pool_ptr[pool_n] = p;
    pool_map[pool_n] = map;
    pool_n++;
    pthread_mutex_unlock(&pool_lock);
}

/* ------------------------------------------------------------------ growable arrays */

typedef struct {
    char *p;
    size_t len; /* items */
    size_t cap; /* items */
    size_t item;
    size_t map; /* mapped bytes, 0 when malloc'ed */
} Vec;

static int vec_init(Vec *v, size_t item, size_t cap)
{
    v->item = item;
    v->len = 0;
    v->cap = cap ? cap : 16;
    v->p = mem_alloc(v->cap * item, &v->map);
    return v->p != NULL;
}

static int vec_grow(Vec *v, size_t need)
{
    if (need <= v->cap)
        return 1;
    size_t cap = v->cap * 2;
    if (cap < need)
        cap = need;
    size_t map;
    char *p = mem_alloc(cap * v->item, &map);
    if (!p)
        return 0;
    memcpy(p, v->p, v->len * v->item);
    mem_free(v->p, v->map);
    v->p = p;
    v->map = map;
    v->cap = cap;
    return 1;
}

static void vec_free(Vec *v)
{
    mem_free(v->p, v->map);
    v->p = NULL;
    v->len = v->cap = v->map = 0;
}

/* ------------------------------------------------------------------ owned buffer type */

typedef struct {
    PyObject_HEAD
    char *ptr;
    Py_ssize_t size;
    size_t map;
} OwnedBuffer;

static void ob_dealloc(OwnedBuffer *self)
{
    mem_free(self->ptr, self->map);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int ob_getbuffer(OwnedBuffer *self, Py_buffer *view, int flags)
{
    return PyBuffer_FillInfo(view, (PyObject *)self, self->ptr, self->size, 0, flags);
}

static PyBufferProcs ob_as_buffer = {(getbufferproc)ob_getbuffer, NULL};

static PyTypeObject OwnedBufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "sparsenet.io._libsvm_native.OwnedBuffer",
    .tp_basicsize = sizeof(OwnedBuffer),
    .tp_dealloc = (destructor)ob_dealloc,
    .tp_as_buffer = &ob_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Memory filled by the parser, exposed through the buffer protocol.",
};

/* Hand a Vec's memory to a new OwnedBuffer, giving back the unused capacity
 * (the capacities are generous upper bounds). The Vec is emptied. */
static PyObject *vec_release(Vec *v)
{
    OwnedBuffer *ob = PyObject_New(OwnedBuffer, &OwnedBufferType);
    if (!ob)
        return NULL;
    size_t bytes = v->len * v->item;
    char *p = v->p;
    size_t map = v->map;
    if (map) {
        /* kept whole (untouched capacity is address space only) for the pool */
    } else if (bytes < v->cap * v->item / 2 && bytes > 0) {
        char *q = (char *)realloc(p, bytes);
        if (q)
            p = q;
    }
    ob->ptr = p;
    ob->size = (Py_ssize_t)bytes;
    ob->map = map;
    v->p = NULL;
    v->len = v->cap = v->map = 0;
    return (PyObject *)ob;
}

/* ------------------------------------------------------------------ the parser */

typedef struct {
    int zero_based, dup_sum, strict_order, allow_nonfinite, f64, multilabel, want_qid;
    int64_t limit;       /* 0-based indices must be < limit */
    int64_t label_limit; /* multi-label class ids must be < label_limit */
} Opts;

typedef struct {
    Vec indptr, indices, values, labels, lab_indptr, lab_ids, qids;
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

/* Parse the region [buf, buf + n), whose last byte is '\n' (the sentinel that
 * lets the scanning loops run without bounds checks). Offsets in errors are
 * relative to buf plus `base`. Rows are appended to r. */
static void parse_region(const char *buf, size_t n, int64_t base, const Opts *o, Result *r)
{
    const char *p = buf, *end = buf + n;
    const size_t vsize = o->f64 ? 8 : 4;
    const int64_t shift = o->zero_based ? 0 : 1;
    /* the largest raw (file) index that stays below the limit */
    const uint64_t max_raw = (uint64_t)(o->limit - 1 + shift);
#define OFF(ptr) ((int64_t)((ptr) - buf) + base)

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
            double d;
            int nonfinite = 0;
            const char *q = fast_value(t, &d);
            if (!q)
                q = parse_number(t, p, -1, &d, &nonfinite);
            if (!q || q != p)
                FAIL(E_LABEL, OFF(t), 0);
            if (nonfinite && !o->allow_nonfinite)
                FAIL(E_LABEL_NONFINITE, OFF(t), 0);
            if (!nonfinite && (isinf(d) || (!o->f64 && isinf((float)d))))
                FAIL(E_LABEL_RANGE, OFF(t), 0);
            if (!vec_grow(&r->labels, r->labels.len + 1))
                FAIL(E_NOMEM, OFF(t), 0);
            if (o->f64)
                ((double *)r->labels.p)[r->labels.len++] = d;
            else
                ((float *)r->labels.p)[r->labels.len++] = (float)d;
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
        for (;;) {
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
                if (nonfinite && !o->allow_nonfinite)
                    FAIL(E_VALUE_NONFINITE, OFF(tok), 0);
                if (!nonfinite && (isinf(d) || (!o->f64 && isinf((float)d))))
                    FAIL(E_VALUE_RANGE, OFF(tok), 0);
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
}

static PyObject *py_parse(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Opts o;
    long long limit, label_limit;
    if (!PyArg_ParseTuple(args, "y*ppppppLLp", &view, &o.zero_based, &o.dup_sum, &o.strict_order,
                          &o.allow_nonfinite, &o.f64, &o.multilabel, &limit, &label_limit,
                          &o.want_qid))
        return NULL;
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
             vec_init(&r.qids, 8, o.want_qid ? cap_rows : 1);
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
    PyObject *out = PyTuple_New(11);
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
     "label_limit, want_qid) -> (indptr, indices, values, labels, label_indptr, label_ids, qids, "
     "nrows, max_index, max_label, nlines) or (code, offset, extra) on error"},
    {"count_rows", py_count_rows, METH_VARARGS, "count_rows(buffer) -> number of data rows"},
    {"set_pow5_table", py_set_pow5_table, METH_VARARGS, "install the Eisel-Lemire table"},
    {"parse_double", py_parse_double, METH_VARARGS, "parse one number (tests)"},
    {"parse_doubles", py_parse_doubles, METH_VARARGS, "parse newline-separated numbers (tests)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_libsvm_native",
                                       "Native LibSVM parsing kernel (see libsvm_kernel.py).", -1,
                                       methods};

PyMODINIT_FUNC PyInit__libsvm_native(void)
{
    init_classes();
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
