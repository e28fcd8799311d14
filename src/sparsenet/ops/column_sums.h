/* Column sums of a CSR matrix against a dense one: the rows of x.T @ g that x's stored columns
 * make, the row_sparse gradient of W in dot(x, W). Included once by _row_kernels.c (after
 * group_ids.h, whose stable radix argsort of the column ids comes first). */
#ifndef SPARSENET_COLUMN_SUMS_H
#define SPARSENET_COLUMN_SUMS_H

/*
 * out[k] = sum over the stored values x[r, c] of column c = cols[k] of x[r, c] * g[r], the
 * terms added one by one in the order of the stable column sort (row order within a column),
 * starting from zero, each product rounded before it is added (no fused multiply-add: the
 * module is built with -ffp-contract=off). That is the arithmetic of
 * zeros.index_add(0, inverse, g[rows] * values), torch's own sequential sum; float64
 * embedding_bag gives the same bits, float32 embedding_bag (FBGEMM) fuses the multiply-add.
 */
typedef struct {
    const int64_t *order;  /* position (in x's stored values) of each sorted value */
    const int64_t *starts; /* md + 1 run starts in the sorted order */
    const char *rv;        /* (row, value) of each stored value, in x's order (RowValue_T) */
    const char *g;         /* rows x dim */
    char *out;             /* md x dim */
    int64_t dim;
} ColumnSumArgs;

/* A stored value and its row side by side: one cache line per term of the sum. */
typedef struct { int64_t row; float v; } RowValue_float;
typedef struct { int64_t row; double v; } RowValue_double;

/* Terms prefetched this many sorted values ahead (their (row, value) records). */
#define COLUMN_SUMS_AHEAD 8

#define COLUMN_SUM_KERNEL(NAME, T)                                              \
    VECTOR_CLONES static void NAME(const void *vargs, int64_t lo, int64_t hi)   \
    {                                                                           \
        const ColumnSumArgs *A = (const ColumnSumArgs *)vargs;                  \
        const int64_t dim = A->dim, *restrict order = A->order;                 \
        const int64_t *restrict starts = A->starts, last = starts[hi];          \
        const RowValue_##T *restrict rv = (const RowValue_##T *)A->rv;          \
        const T *restrict g = (const T *)A->g;                                  \
        T *restrict out = (T *)A->out;                                          \
        for (int64_t k = lo; k < hi; k++) {                                     \
            T *restrict o = out + k * dim;                                      \
            const int64_t s = starts[k], e = starts[k + 1];                     \
            if (dim == 1) { /* a linear model's weight: the sum in a register */ \
                T acc = (T)0;                                                   \
                for (int64_t i = s; i < e; i++) {                               \
                    if (i + COLUMN_SUMS_AHEAD < last)                           \
                        __builtin_prefetch(rv + order[i + COLUMN_SUMS_AHEAD]);  \
                    const RowValue_##T t = rv[order[i]];                        \
                    acc = acc + g[t.row] * t.v;                                 \
                }                                                               \
                o[0] = acc;                                                     \
                continue;                                                       \
            }                                                                   \
            for (int64_t i = s; i < e; i++) {                                   \
                if (i + COLUMN_SUMS_AHEAD < last)                               \
                    __builtin_prefetch(rv + order[i + COLUMN_SUMS_AHEAD]);      \
                const RowValue_##T t = rv[order[i]];                            \
                const T *restrict gr = g + t.row * dim;                         \
                const T v = t.v;                                                \
                if (i == s) /* from zero, as index_add into zeros: -0.0 becomes 0.0 */ \
                    for (int64_t j = 0; j < dim; j++)                           \
                        o[j] = (T)0 + gr[j] * v;                                \
                else                                                            \
                    for (int64_t j = 0; j < dim; j++)                           \
                        o[j] = o[j] + gr[j] * v;                                \
            }                                                                   \
        }                                                                       \
    }

COLUMN_SUM_KERNEL(column_sums_f32, float)
COLUMN_SUM_KERNEL(column_sums_f64, double)

/* Columns split between threads when each thread gets at least this many multiply-adds. */
#define COLUMN_SUMS_PER_THREAD (64 * 1024)

/*
 * csr_column_sums(indptr, rows, sorted, order, n, ncols, values, g, grows, dim, is_f64, md,
 *                 out_cols, out_data, threads) -> None
 * `sorted` and `order` are group_ids' stable sort of the n column ids of a CSR matrix of
 * `rows` rows and `ncols` columns with md distinct ids; writes the distinct columns to
 * out_cols (md) and their sums to out_data (md x dim). Everything read is checked first
 * (indptr starts at 0, never decreases, ends at n; g has `rows` rows or more; the sorted ids
 * never decrease, lie in [0, ncols) and number md distinct ones; every position lies in
 * [0, n)): ValueError otherwise, with nothing written.
 */
static PyObject *py_csr_column_sums(PyObject *self, PyObject *args)
{
    unsigned long long ipp, sp, op, vp, gp, ocp, odp;
    long long rows, n, ncols, grows, dim, md;
    int is_f64, threads;
    if (!PyArg_ParseTuple(args, "KLKKLLKKLLpLKKi", &ipp, &rows, &sp, &op, &n, &ncols, &vp, &gp,
                          &grows, &dim, &is_f64, &md, &ocp, &odp, &threads))
        return NULL;
    if (rows < 0 || n < 0 || ncols < 0 || grows < rows || dim < 0 || md < 0 || md > n ||
        (n > 0 && md == 0)) {
        PyErr_Format(PyExc_ValueError,
                     "sizes do not fit: %lld rows, %lld values, %lld columns, g of %lld rows "
                     "and %lld columns, %lld distinct columns", rows, n, ncols, grows, dim, md);
        return NULL;
    }
    if (!ipp) {
        PyErr_SetString(PyExc_ValueError, "null indptr");
        return NULL;
    }
    const int64_t *indptr = (const int64_t *)(uintptr_t)ipp;
    if (indptr[0] != 0 || indptr[rows] != n) {
        PyErr_Format(PyExc_ValueError, "indptr must start at 0 and end at the number of stored "
                     "values (%lld), got %lld and %lld", n, (long long)indptr[0],
                     (long long)indptr[rows]);
        return NULL;
    }
    for (int64_t r = 0; r < rows; r++)
        if (indptr[r + 1] < indptr[r]) {
            PyErr_Format(PyExc_ValueError, "indptr decreases at row %lld (%lld, then %lld)",
                         (long long)r, (long long)indptr[r], (long long)indptr[r + 1]);
            return NULL;
        }
    if (n == 0)
        Py_RETURN_NONE;
    if (!sp || !op || !vp || !ocp || (dim && (!gp || !odp))) {
        PyErr_SetString(PyExc_ValueError, "null data pointer");
        return NULL;
    }
    const int64_t *S = (const int64_t *)(uintptr_t)sp, *O = (const int64_t *)(uintptr_t)op;
    int64_t distinct = 0;
    for (int64_t i = 0; i < n; i++) {
        if (S[i] < 0 || S[i] >= ncols || O[i] < 0 || O[i] >= n || (i && S[i] < S[i - 1])) {
            PyErr_Format(PyExc_ValueError, "the sorted column ids are not a sort of ids in "
                         "[0, %lld) (position %lld)", ncols, (long long)i);
            return NULL;
        }
        distinct += !i || S[i] != S[i - 1];
    }
    if (distinct != md) {
        PyErr_Format(PyExc_ValueError, "%lld distinct columns, expected %lld",
                     (long long)distinct, md);
        return NULL;
    }
    /* one block: the (row, value) of each stored value (n), the run starts (md + 1) */
    const size_t rvsize = is_f64 ? sizeof(RowValue_double) : sizeof(RowValue_float);
    char *mem = (char *)malloc((size_t)n * rvsize + (size_t)(md + 1) * sizeof(int64_t));
    if (!mem)
        return PyErr_NoMemory();
    char *rv = mem;
    int64_t *starts = (int64_t *)(mem + (size_t)n * rvsize);
    int64_t *cols = (int64_t *)(uintptr_t)ocp;
    Py_BEGIN_ALLOW_THREADS
    if (is_f64) {
        RowValue_double *t = (RowValue_double *)rv;
        const double *v = (const double *)(uintptr_t)vp;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t p = indptr[r]; p < indptr[r + 1]; p++)
                t[p] = (RowValue_double){r, v[p]};
    } else {
        RowValue_float *t = (RowValue_float *)rv;
        const float *v = (const float *)(uintptr_t)vp;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t p = indptr[r]; p < indptr[r + 1]; p++)
                t[p] = (RowValue_float){r, v[p]};
    }
    for (int64_t i = 0, k = 0; i < n; i++)
        if (!i || S[i] != S[i - 1]) {
            cols[k] = S[i];
            starts[k++] = i;
        }
    starts[md] = n;
    if (dim) {
        ColumnSumArgs a = {O, starts, rv, (const char *)(uintptr_t)gp, (char *)(uintptr_t)odp,
                           dim};
        int64_t parts = threads, work = n * dim;
        if (work / COLUMN_SUMS_PER_THREAD < parts)
            parts = work / COLUMN_SUMS_PER_THREAD;
        if (parts > md)
            parts = md;
        parallel_for(is_f64 ? column_sums_f64 : column_sums_f32, &a, md,
                     parts < 1 ? 1 : (int)parts);
    }
    Py_END_ALLOW_THREADS
    free(mem);
    Py_RETURN_NONE;
}

#endif /* SPARSENET_COLUMN_SUMS_H */
