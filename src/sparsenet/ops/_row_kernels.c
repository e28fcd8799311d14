/*
 * sparsenet.ops._row_kernels: fused CPU kernels for the lazy optimizer updates, and
 * the grouping of a batch's integer ids (a radix argsort, see "grouping ids").
 *
 * A lazy step touches only the rows named by a row_sparse gradient: random rows of
 * a large weight and of its states. With torch index ops each row is gathered,
 * run through several elementwise passes and scattered back; here each row is
 * read and written once, in one loop over its columns, and the rows a few steps
 * ahead are prefetched, so the step is bound by memory traffic instead of the
 * latency of one random row after another. Rows are split between torch's
 * OpenMP threads when there are enough of them.
 *
 * Every function takes raw data pointers (tensor.data_ptr()) of contiguous
 * float32 or float64 tensors, the int64 row indices, their count n, the
 * number of columns and the weight's number of rows. The indices are checked
 * first, before anything is written: an index out of range raises IndexError;
 * indices that are not strictly increasing return 1, and the caller runs its
 * torch kernel instead (rows repeated within one step would race between
 * threads). 0 means done.
 *
 * The arithmetic is the same as the torch kernels of ops/update_rules/, one
 * element at a time, with no contraction into fused multiply-adds (built with
 * -ffp-contract=off), so every build gives the same bits.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One build, the widest vectors the CPU has (chosen at load time): Adam and AdaGrad spend
 * a fifth of a cold 1,000-row step in sqrt and division, which AVX-512 halves. Each element
 * still sees the same operations in the same order, so every clone gives the same bits. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define VECTOR_CLONES
#endif

/* ------------------------------------------------------------------ threads */

typedef void (*range_fn)(const void *args, int64_t lo, int64_t hi);

/*
 * Run fn over [0, n) split into `parts` contiguous ranges, on OpenMP threads. The
 * module is built with -fopenmp and links libgomp.so.1, which resolves to the copy
 * torch has already loaded: the kernels run on torch's own thread team (threads that
 * have just finished a torch op are still spinning and start at once) instead of
 * competing with it for the cores. In a forked child the parent's team is gone and
 * libgomp would wait for it forever (as torch's own ops do there): the kernels then
 * run on the calling thread.
 */
static int forked; /* set in a forked child, where libgomp's team from the parent is gone */

static void mark_forked(void) { forked = 1; }

static void parallel_for(range_fn fn, const void *args, int64_t n, int parts)
{
    if (parts <= 1 || n < 2 || forked) {
        fn(args, 0, n);
        return;
    }
#pragma omp parallel num_threads(parts)
    {
        int64_t k = omp_get_thread_num(), p = omp_get_num_threads();
        int64_t lo = n * k / p, hi = n * (k + 1) / p;
        if (hi > lo)
            fn(args, lo, hi);
    }
}

/* ------------------------------------------------------------------ kernel arguments */

typedef struct {
    char *w, *s1, *s2;   /* weight and up to two states, full tensors */
    const char *g;       /* gradient rows, n x cols */
    const int64_t *idx;  /* row of each gradient row */
    int64_t cols;
    int dist;            /* rows prefetched ahead */
    double lr, wd, rescale, clip, a, b, eps; /* rule parameters (meaning per kernel) */
} Args;

/* Prefetch the start of row r of each array (the hardware follows a row once begun). */
#define PREFETCH_ROW(base, r, rowbytes)                                         \
    do {                                                                        \
        const char *p_ = (base) + (r) * (rowbytes);                             \
        int64_t e_ = (rowbytes) < 1024 ? (rowbytes) : 1024;                     \
        for (int64_t o_ = 0; o_ < e_; o_ += 64)                                 \
            __builtin_prefetch(p_ + o_, 1, 0);                                  \
    } while (0)

#define CLIP(x, c) ((x) < -(c) ? -(c) : ((x) > (c) ? (c) : (x)))

/*
 * One kernel per rule and dtype. ROW_LOOP walks rows [lo, hi), prefetching `dist`
 * rows ahead in every array listed, and gives the body T *w, *s1, *s2 and
 * const T *g pointing at the current rows.
 */
#define ROW_LOOP(T, NARR, ...)                                                 \
    const Args *A = (const Args *)vargs;                                        \
    const int64_t cols = A->cols, rb = cols * (int64_t)sizeof(T);               \
    for (int64_t i = lo; i < hi; i++) {                                         \
        if (i + A->dist < hi) {                                                 \
            int64_t rp = A->idx[i + A->dist];                                   \
            PREFETCH_ROW(A->w, rp, rb);                                         \
            if (NARR > 1) PREFETCH_ROW(A->s1, rp, rb);                          \
            if (NARR > 2) PREFETCH_ROW(A->s2, rp, rb);                          \
        }                                                                       \
        const int64_t r = A->idx[i];                                            \
        T *restrict w = (T *)(A->w + r * rb);                                   \
        T *restrict s1 = NARR > 1 ? (T *)(A->s1 + r * rb) : NULL;               \
        T *restrict s2 = NARR > 2 ? (T *)(A->s2 + r * rb) : NULL;               \
        const T *restrict g = (const T *)(A->g + i * rb);                       \
        (void)s1; (void)s2;                                                     \
        __VA_ARGS__                                                             \
    }

/* SGD: w = w*decay + (-lr)*clip(rescale*g); decay = 1 - lr*wd (skipped when wd = 0). */
#define SGD_KERNEL(NAME, T, SQRT)                                               \
    VECTOR_CLONES static void NAME(const void *vargs, int64_t lo, int64_t hi)   \
    {                                                                           \
        ROW_LOOP(T, 1, {                                                        \
            const T scale = (T)A->rescale, nlr = (T)(-A->lr);                   \
            const T decay = (T)(1.0 - A->lr * A->wd), c = (T)A->clip;           \
            const int clip = A->clip >= 0, wd = A->wd != 0.0;                   \
            if (!clip && !wd) {                                                 \
                for (int64_t j = 0; j < cols; j++)                              \
                    w[j] = w[j] + (g[j] * scale) * nlr;                         \
            } else {                                                            \
                for (int64_t j = 0; j < cols; j++) {                            \
                    T x = g[j] * scale;                                         \
                    if (clip) x = CLIP(x, c);                                   \
                    T y = wd ? w[j] * decay : w[j];                             \
                    w[j] = y + x * nlr;                                         \
                }                                                               \
            }                                                                   \
        })                                                                      \
    }

/* SGD with momentum: m = m*momentum + (-lr*wd)*w + a*g'; w = w + m, where
 * g' = clip(rescale*g), a = -lr with clipping, else g' = g and a = -lr*rescale. */
#define SGD_MOM_KERNEL(NAME, T, SQRT)                                           \
    VECTOR_CLONES static void NAME(const void *vargs, int64_t lo, int64_t hi)   \
    {                                                                           \
        ROW_LOOP(T, 2, {                                                        \
            const int clip = A->clip >= 0;                                      \
            const T mom = (T)A->a, nlrwd = (T)(-A->lr * A->wd);                 \
            const T scale = (T)A->rescale, c = (T)A->clip;                      \
            const T alpha = clip ? (T)(-A->lr) : (T)(-A->lr * A->rescale);      \
            const int wd = A->wd != 0.0;                                        \
            for (int64_t j = 0; j < cols; j++) {                                \
                T m = s1[j] * mom;                                              \
                if (wd) m = m + nlrwd * w[j];                                   \
                T x = g[j];                                                     \
                if (clip) { x = x * scale; x = CLIP(x, c); }                    \
                m = m + alpha * x;                                              \
                s1[j] = m;                                                      \
                w[j] = w[j] + m;                                                \
            }                                                                   \
        })                                                                      \
    }

/* Adam: g' = clip(rescale*g + wd*w); m = m*b1 + (1-b1)*g'; v = v*b2 + (1-b2)*g'*g';
 * w = w + (m / (sqrt(v) + eps)) * (-lr). */
#define ADAM_KERNEL(NAME, T, SQRT)                                              \
    VECTOR_CLONES static void NAME(const void *vargs, int64_t lo, int64_t hi)   \
    {                                                                           \
        ROW_LOOP(T, 3, {                                                        \
            const T b1 = (T)A->a, b2 = (T)A->b, ob1 = (T)(1.0 - A->a);          \
            const T ob2 = (T)(1.0 - A->b), eps = (T)A->eps, nlr = (T)(-A->lr);  \
            const T scale = (T)A->rescale, wdv = (T)A->wd, c = (T)A->clip;      \
            const int clip = A->clip >= 0, wd = A->wd != 0.0;                   \
            const int plain = !clip && !wd && A->rescale == 1.0;                \
            for (int64_t j = 0; j < cols; j++) {                                \
                T x = g[j];                                                     \
                if (!plain) {                                                   \
                    x = x * scale;                                              \
                    if (wd) x = x + w[j] * wdv;                                 \
                    if (clip) x = CLIP(x, c);                                   \
                }                                                               \
                T m = s1[j] * b1 + ob1 * x;                                     \
                T v = s2[j] * b2 + ob2 * x * x;                                 \
                s1[j] = m;                                                      \
                s2[j] = v;                                                      \
                w[j] = w[j] + (m / (SQRT(v) + eps)) * nlr;                      \
            }                                                                   \
        })                                                                      \
    }

/* AdaGrad: g' and k as for momentum; h = h + (k*k)*g'*g';
 * w = w + (g' / sqrt(h + eps)) * (-lr*k) + (-lr*wd)*w. */
#define ADAGRAD_KERNEL(NAME, T, SQRT)                                           \
    VECTOR_CLONES static void NAME(const void *vargs, int64_t lo, int64_t hi)   \
    {                                                                           \
        ROW_LOOP(T, 2, {                                                        \
            const int clip = A->clip >= 0, wd = A->wd != 0.0;                   \
            const double k = clip ? 1.0 : A->rescale;                           \
            const T kk = (T)(k * k), nlrk = (T)(-A->lr * k), eps = (T)A->eps;   \
            const T nlrwd = (T)(-A->lr * A->wd), scale = (T)A->rescale;         \
            const T c = (T)A->clip;                                             \
            for (int64_t j = 0; j < cols; j++) {                                \
                T x = g[j];                                                     \
                if (clip) { x = x * scale; x = CLIP(x, c); }                    \
                T h = s1[j] + kk * x * x;                                       \
                s1[j] = h;                                                      \
                T step = (x / SQRT(h + eps)) * nlrk;                            \
                if (wd) step = step + nlrwd * w[j];                             \
                w[j] = w[j] + step;                                             \
            }                                                                   \
        })                                                                      \
    }

SGD_KERNEL(sgd_f32, float, sqrtf)
SGD_KERNEL(sgd_f64, double, sqrt)
SGD_MOM_KERNEL(sgd_mom_f32, float, sqrtf)
SGD_MOM_KERNEL(sgd_mom_f64, double, sqrt)
ADAM_KERNEL(adam_f32, float, sqrtf)
ADAM_KERNEL(adam_f64, double, sqrt)
ADAGRAD_KERNEL(adagrad_f32, float, sqrtf)
ADAGRAD_KERNEL(adagrad_f64, double, sqrt)

/* ------------------------------------------------------------------ Python interface */

/* 0: fine; 1: not strictly increasing (the caller falls back); -1: error set. */
static int check_rows(const int64_t *idx, int64_t n, int64_t nrows)
{
    int increasing = 1;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = idx[i];
        if (r < 0 || r >= nrows) {
            PyErr_Format(PyExc_IndexError,
                         "row index %lld at position %lld of the gradient is out of range for "
                         "a weight with %lld rows", (long long)r, (long long)i, (long long)nrows);
            return -1;
        }
        if (i && r <= idx[i - 1])
            increasing = 0;
    }
    return increasing ? 0 : 1;
}

/* Rows split between threads when each thread gets at least this many elements. */
#define MIN_ELEMS_PER_THREAD (32 * 1024)

static PyObject *run_kernel(range_fn f32, range_fn f64, int narr, PyObject *args)
{
    unsigned long long w, s1, s2, g, idx;
    long long n, cols, nrows;
    int is_f64, threads;
    Args a;
    memset(&a, 0, sizeof a);
    if (!PyArg_ParseTuple(args, "KKKKKLLLpiddddddd", &w, &s1, &s2, &g, &idx, &n, &cols, &nrows,
                          &is_f64, &threads, &a.lr, &a.wd, &a.rescale, &a.clip, &a.a, &a.b,
                          &a.eps))
        return NULL;
    if (n < 0 || cols < 0 || nrows < 0) {
        PyErr_SetString(PyExc_ValueError, "negative size");
        return NULL;
    }
    /* Empty inputs are a no-op: zero-size tensors often have a null data pointer. Rows of
     * zero columns are still checked against the weight's rows, as the torch kernels do. */
    if (n == 0)
        return PyLong_FromLong(0);
    if (!idx) {
        PyErr_SetString(PyExc_ValueError, "null data pointer for the row indices");
        return NULL;
    }
    if (cols == 0) {
        int rc0 = check_rows((const int64_t *)(uintptr_t)idx, n, nrows);
        return rc0 < 0 ? NULL : PyLong_FromLong(rc0);
    }
    if ((!w) || (narr > 1 && !s1) || (narr > 2 && !s2) || !g) {
        PyErr_SetString(PyExc_ValueError, "null data pointer");
        return NULL;
    }
    a.w = (char *)(uintptr_t)w;
    a.s1 = (char *)(uintptr_t)s1;
    a.s2 = (char *)(uintptr_t)s2;
    a.g = (const char *)(uintptr_t)g;
    a.idx = (const int64_t *)(uintptr_t)idx;
    a.cols = cols;
    int64_t rowbytes = cols * (is_f64 ? 8 : 4);
    a.dist = rowbytes <= 1024 ? 4 : 2;
    int rc = check_rows(a.idx, n, nrows);
    if (rc)
        return rc < 0 ? NULL : PyLong_FromLong(rc);
    int64_t per = MIN_ELEMS_PER_THREAD / (cols ? cols : 1);
    int parts = threads;
    if (per > 0 && n / per < parts)
        parts = (int)(n / per);
    if (parts < 1)
        parts = 1;
    Py_BEGIN_ALLOW_THREADS
    parallel_for(is_f64 ? f64 : f32, &a, n, parts);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(0);
}

#define ENTRY(NAME, NARR)                                                       \
    static PyObject *py_##NAME(PyObject *self, PyObject *args)                  \
    {                                                                           \
        return run_kernel(NAME##_f32, NAME##_f64, NARR, args);                  \
    }

ENTRY(sgd, 1)
ENTRY(sgd_mom, 2)
ENTRY(adam, 3)
ENTRY(adagrad, 2)

/* ------------------------------------------------------------------ grouping ids */

#include "group_ids.h"
#include "column_sums.h"

/* ------------------------------------------------------------------ coalescing rows */

typedef struct {
    int64_t key, pos;
} KeyPos;

/*
 * Stable sort of (key, pos) pairs by key. The ids of a batch's row gradient come as
 * one ascending run per CSR row, so a natural merge sort does little work: find the
 * ascending runs, then merge neighbouring runs (the left one first on equal keys)
 * until one is left. `tmp` has room for n pairs.
 */
static void sort_keypos(KeyPos *a, KeyPos *tmp, int64_t n)
{
    while (n > 1) {
        int64_t merged = 0, lo = 0;
        while (lo < n) {
            int64_t mid = lo + 1;
            while (mid < n && a[mid - 1].key <= a[mid].key)
                mid++;
            int64_t hi = mid < n ? mid + 1 : n;
            while (hi < n && a[hi - 1].key <= a[hi].key)
                hi++;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = a[j].key < a[i].key ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
            memcpy(a + lo, tmp + lo, (size_t)(hi - lo) * sizeof(KeyPos));
            merged++;
            lo = hi;
        }
        if (merged == 1)
            break; /* one run covered everything */
    }
}

/* coalesce_rows sorts at least this many ids with the radix argsort (fewer: the natural
 * merge sort, cheaper on a small batch's few ascending runs). */
#define COALESCE_RADIX_MIN 256

#define SUM_GROUPS(T)                                                           \
    do {                                                                        \
        const T *v = (const T *)src;                                            \
        T *o = (T *)(uintptr_t)out_vals;                                        \
        int64_t m = -1;                                                         \
        for (int64_t i = 0; i < n; i++) {                                       \
            const T *row = v + order[i].pos * cols;                             \
            if (m < 0 || order[i].key != oi[m]) {                               \
                oi[++m] = order[i].key;                                         \
                if (cols) /* zero-size rows: the pointers may be null */        \
                    memcpy(o + m * cols, row, (size_t)cols * sizeof(T));        \
            } else {                                                            \
                T *dst = o + m * cols;                                          \
                for (int64_t j = 0; j < cols; j++)                              \
                    dst[j] = dst[j] + row[j];                                   \
            }                                                                   \
        }                                                                       \
        groups = m + 1;                                                         \
    } while (0)

/* Sum each group of rows with equal keys into its first row (in place), in order. */
#define SUM_INTO_FIRST(T)                                                       \
    do {                                                                        \
        T *v = (T *)base;                                                       \
        for (int64_t i = 0, g0 = 0; i < n; i++) {                               \
            if (i == 0 || order[i].key != order[i - 1].key) {                   \
                g0 = i;                                                         \
                continue;                                                       \
            }                                                                   \
            T *dst = v + order[g0].pos * cols;                                  \
            const T *row = v + order[i].pos * cols;                             \
            for (int64_t j = 0; j < cols; j++)                                  \
                dst[j] = dst[j] + row[j];                                       \
        }                                                                       \
    } while (0)

/*
 * In-place coalescing: each group's rows are summed into its first row, then the first
 * rows are moved to positions 0, 1, ... (group order) by following the chains of the
 * moves, carrying one row at a time: every row is read and written once and no copy of
 * the whole array is made. dest (n entries) is scratch; carry has room for two rows.
 */
static int64_t coalesce_in_place(const KeyPos *order, int64_t n, char *base, size_t rowbytes,
                                 int is_f64, int64_t cols, int64_t *oi, int64_t *dest,
                                 char *carry)
{
    if (is_f64)
        SUM_INTO_FIRST(double);
    else
        SUM_INTO_FIRST(float);
    int64_t m = 0;
    for (int64_t p = 0; p < n; p++)
        dest[p] = -1; /* -1: a summed-away row (free to overwrite), -2: already moved */
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || order[i].key != order[i - 1].key) {
            oi[m] = order[i].key;
            dest[order[i].pos] = m++;
        }
    if (rowbytes == 0)
        return m; /* rows of zero columns: only the ids move (base may be null) */
    char *held = carry, *spare = carry + rowbytes;
    for (int64_t s = 0; s < n; s++) {
        int64_t q = dest[s];
        if (q < 0)
            continue;
        dest[s] = -2;
        if (q == s)
            continue;
        memcpy(held, base + s * rowbytes, rowbytes);
        for (;;) {
            int64_t next = dest[q];
            if (next < 0) { /* q is free: its row was summed away or already moved out */
                memcpy(base + q * rowbytes, held, rowbytes);
                break;
            }
            memcpy(spare, base + q * rowbytes, rowbytes); /* pick up q's row, put ours */
            memcpy(base + q * rowbytes, held, rowbytes);
            char *t = held;
            held = spare;
            spare = t;
            dest[q] = -2;
            if (next == q) /* cannot happen: q's row was not in place */
                break;
            q = next;
        }
    }
    return m;
}

/* coalesce_rows(idx, vals, n, cols, is_f64, out_idx, out_vals) -> number of distinct rows,
 * or -1 when the ids already increase strictly (nothing written).
 * Sorts the row ids (stably: repeats are summed in their original order) and sums the rows
 * of equal ids into out_vals; out_idx and out_vals have room for n ids and n rows, and
 * out_vals may be vals itself (coalescing the rows in place). */
static PyObject *py_coalesce_rows(PyObject *self, PyObject *args)
{
    unsigned long long idx, vals, out_idx, out_vals;
    long long n, cols;
    int is_f64;
    if (!PyArg_ParseTuple(args, "KKLLpKK", &idx, &vals, &n, &cols, &is_f64, &out_idx,
                          &out_vals))
        return NULL;
    if (n < 0 || cols < 0) {
        PyErr_SetString(PyExc_ValueError, "negative size");
        return NULL;
    }
    if (n == 0)
        return PyLong_FromLong(0);
    const int64_t *ids = (const int64_t *)(uintptr_t)idx;
    int64_t rise = 1;
    while (rise < n && ids[rise] > ids[rise - 1])
        rise++;
    if (rise == n)
        return PyLong_FromLong(-1); /* already coalesced (dot(csr, W)'s gradient): keep it */
    int64_t lo = ids[0], hi = ids[0], descents = 0;
    for (int64_t i = 1; i < n; i++) {
        lo = ids[i] < lo ? ids[i] : lo;
        hi = ids[i] > hi ? ids[i] : hi;
        descents += ids[i] < ids[i - 1];
    }
    const size_t rowbytes = (size_t)cols * (is_f64 ? 8 : 4);
    const int in_place = out_vals == vals;
    /* order and tmp (the sort's scratch, then dest when in place) and two carried rows */
    const size_t need = (size_t)n * 2 * sizeof(KeyPos) + (in_place ? 2 * rowbytes : 0);
    KeyPos small[2 * 256 + 2 * 1024 / sizeof(KeyPos)]; /* aligned for ids and rows */
    char *heap = NULL, *mem = (char *)small;
    if (need > sizeof small) {
        heap = (char *)malloc(need);
        if (!heap)
            return PyErr_NoMemory();
        mem = heap;
    }
    KeyPos *order = (KeyPos *)mem, *tmp = order + n;
    int64_t *oi = (int64_t *)(uintptr_t)out_idx;
    int64_t groups = 0;
    /* many ids out of order (none negative): the radix argsort into tmp's room, paired up */
    int64_t *rs = (int64_t *)tmp, *ro = rs + n;
    if (n >= COALESCE_RADIX_MIN && descents && lo >= 0 &&
        radix_argsort(ids, n, hi, rs, ro) == 0) {
        for (int64_t i = 0; i < n; i++) {
            order[i].key = rs[i];
            order[i].pos = ro[i];
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            order[i].key = ids[i];
            order[i].pos = i;
        }
        sort_keypos(order, tmp, n);
    }
    if (in_place) {
        groups = coalesce_in_place(order, n, (char *)(uintptr_t)vals, rowbytes, is_f64, cols,
                                   oi, (int64_t *)tmp, (char *)(tmp + n));
    } else {
        const char *src = (const char *)(uintptr_t)vals;
        if (is_f64)
            SUM_GROUPS(double);
        else
            SUM_GROUPS(float);
    }
    free(heap);
    return PyLong_FromLongLong(groups);
}

/* ------------------------------------------------------------------ small dense weights */

#define DENSE_SGD(T)                                                            \
    do {                                                                        \
        T *w = (T *)(uintptr_t)wp;                                              \
        const T *g = (const T *)(uintptr_t)gp;                                  \
        const T scale = (T)rescale, nlr = (T)(-lr);                             \
        for (long long j = 0; j < n; j++)                                       \
            w[j] = w[j] + (g[j] * scale) * nlr;                                 \
    } while (0)

/* sgd_dense(weights, grads, sizes, lr, rescale, is_f64): w = w + (g*rescale)*(-lr) for each
 * (weight, gradient) pair of data pointers, in one call: the plain SGD step of the small
 * dense parameters of a network (biases, small layers). */
static PyObject *py_sgd_dense(PyObject *self, PyObject *args)
{
    PyObject *ws, *gs, *ns;
    double lr, rescale;
    int is_f64;
    if (!PyArg_ParseTuple(args, "O!O!O!ddp", &PyTuple_Type, &ws, &PyTuple_Type, &gs,
                          &PyTuple_Type, &ns, &lr, &rescale, &is_f64))
        return NULL;
    Py_ssize_t k = PyTuple_GET_SIZE(ws);
    if (PyTuple_GET_SIZE(gs) != k || PyTuple_GET_SIZE(ns) != k) {
        PyErr_SetString(PyExc_ValueError, "sgd_dense: weights, grads and sizes differ in length");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        unsigned long long wp = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(ws, i));
        unsigned long long gp = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(gs, i));
        long long n = PyLong_AsLongLong(PyTuple_GET_ITEM(ns, i));
        if (PyErr_Occurred())
            return NULL;
        if (n == 0)
            continue; /* an empty tensor (its data pointer is often null): nothing to do */
        if (!wp || !gp || n < 0) {
            PyErr_SetString(PyExc_ValueError, "sgd_dense: null pointer or negative size");
            return NULL;
        }
        if (is_f64)
            DENSE_SGD(double);
        else
            DENSE_SGD(float);
    }
    Py_RETURN_NONE;
}

#define DENSE_SGD_MOM(T)                                                        \
    do {                                                                        \
        T *w = (T *)(uintptr_t)wp;                                              \
        T *m = (T *)(uintptr_t)mp;                                              \
        const T *g = (const T *)(uintptr_t)gp;                                  \
        const T mom = (T)momentum, nlrwd = (T)(-lr * wd);                       \
        const T scale = (T)rescale, c = (T)clipv;                               \
        const T alpha = clip ? (T)(-lr) : (T)(-lr * rescale);                   \
        for (long long j = 0; j < n; j++) {                                     \
            T x = m[j] * mom;                                                   \
            if (wd_on) x = x + nlrwd * w[j];                                    \
            T y = g[j];                                                         \
            if (clip) { y = y * scale; y = CLIP(y, c); }                        \
            x = x + alpha * y;                                                  \
            m[j] = x;                                                           \
            w[j] = w[j] + x;                                                    \
        }                                                                       \
    } while (0)

/* sgd_mom_dense(weights, moms, grads, sizes, lr, momentum, wd, rescale, clip, is_f64): the
 * SGD-momentum step of the lazy kernel (sgd_mom) on every element of each (weight, momentum,
 * gradient) triple of data pointers, in one call: the small dense parameters of a network. */
static PyObject *py_sgd_mom_dense(PyObject *self, PyObject *args)
{
    PyObject *ws, *ms, *gs, *ns;
    double lr, momentum, wd, rescale, clipv;
    int is_f64;
    if (!PyArg_ParseTuple(args, "O!O!O!O!dddddp", &PyTuple_Type, &ws, &PyTuple_Type, &ms,
                          &PyTuple_Type, &gs, &PyTuple_Type, &ns, &lr, &momentum, &wd,
                          &rescale, &clipv, &is_f64))
        return NULL;
    Py_ssize_t k = PyTuple_GET_SIZE(ws);
    if (PyTuple_GET_SIZE(ms) != k || PyTuple_GET_SIZE(gs) != k || PyTuple_GET_SIZE(ns) != k) {
        PyErr_SetString(PyExc_ValueError,
                        "sgd_mom_dense: weights, moms, grads and sizes differ in length");
        return NULL;
    }
    const int clip = clipv >= 0, wd_on = wd != 0.0;
    for (Py_ssize_t i = 0; i < k; i++) {
        unsigned long long wp = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(ws, i));
        unsigned long long mp = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(ms, i));
        unsigned long long gp = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(gs, i));
        long long n = PyLong_AsLongLong(PyTuple_GET_ITEM(ns, i));
        if (PyErr_Occurred())
            return NULL;
        if (n == 0)
            continue; /* an empty tensor (its data pointer is often null): nothing to do */
        if (!wp || !mp || !gp || n < 0) {
            PyErr_SetString(PyExc_ValueError, "sgd_mom_dense: null pointer or negative size");
            return NULL;
        }
        if (is_f64)
            DENSE_SGD_MOM(double);
        else
            DENSE_SGD_MOM(float);
    }
    Py_RETURN_NONE;
}

static const char kernel_doc[] =
    "(w, s1, s2, g, idx, n, cols, nrows, is_f64, threads, lr, wd, rescale, clip, a, b, eps)"
    " -> 0 done, 1 indices not strictly increasing (nothing written)";

static PyMethodDef methods[] = {
    {"sgd", py_sgd, METH_VARARGS, kernel_doc},
    {"sgd_mom", py_sgd_mom, METH_VARARGS, kernel_doc},
    {"adam", py_adam, METH_VARARGS, kernel_doc},
    {"adagrad", py_adagrad, METH_VARARGS, kernel_doc},
    {"coalesce_rows", py_coalesce_rows, METH_VARARGS,
     "coalesce_rows(idx, vals, n, cols, is_f64, out_idx, out_vals) -> distinct rows, or -1 when "
     "the ids already increase strictly"},
    {"group_ids", py_group_ids, METH_VARARGS,
     "group_ids(ids, n, bound, sorted, order, uniq, starts, inverse) -> distinct ids, or "
     "-1 - position of the first id outside [0, bound)"},
    {"csr_column_sums", py_csr_column_sums, METH_VARARGS,
     "csr_column_sums(indptr, rows, sorted, order, n, ncols, values, g, grows, dim, is_f64, md, "
     "out_cols, out_data, threads): the distinct columns of a CSR matrix and, for each, the sum "
     "of value * g[row] over its stored values (ValueError on malformed input, nothing written)"},
    {"sgd_dense", py_sgd_dense, METH_VARARGS,
     "sgd_dense(weights, grads, sizes, lr, rescale, is_f64): plain SGD on small dense arrays"},
    {"sgd_mom_dense", py_sgd_mom_dense, METH_VARARGS,
     "sgd_mom_dense(weights, moms, grads, sizes, lr, momentum, wd, rescale, clip, is_f64): "
     "SGD with momentum on small dense arrays"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_row_kernels",
                                    "Fused CPU kernels for lazy optimizer updates.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__row_kernels(void)
{
    pthread_atfork(NULL, NULL, mark_forked);
    return PyModule_Create(&module);
}
