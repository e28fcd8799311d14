/* Grouping ids: a stable radix argsort of int64 ids in [0, bound) and the Python entry
 * group_ids. Included once by _row_kernels.c (after its Python interface section). */
#ifndef SPARSENET_GROUP_IDS_H
#define SPARSENET_GROUP_IDS_H


/*
 * Stable LSD radix argsort of int64 ids that lie in [0, bound): the ids of a batch's rows
 * or columns, keys of at most a few tens of bits. One pass checks the range, finds the
 * largest id and whether the ids are already in order; then each id is packed with its
 * position into one 64-bit word (key << ib | position) when both fit, and the words are
 * scattered by digits of at most RADIX_BITS bits of the key, the digit counts of every
 * pass taken in the packing pass. A pass whose digit is the same for every id is skipped.
 * Ties keep their input order: the result equals a stable comparison sort.
 */
#define RADIX_BITS 11

static int bit_length(uint64_t x) { return x ? 64 - __builtin_clzll(x) : 0; }

/* One scatter pass of LSD radix sort: src -> dst by digit (key >> shift) & mask. */
#define RADIX_PASS(SRC, DST, KEY, EXTRA)                                        \
    do {                                                                        \
        int64_t *off = cnt + (size_t)p * nb, sum = 0;                           \
        for (size_t d = 0; d < nb; d++) {                                       \
            int64_t c = off[d];                                                 \
            off[d] = sum;                                                       \
            sum += c;                                                           \
        }                                                                       \
        for (int64_t i = 0; i < n; i++) {                                       \
            int64_t o = off[((KEY) >> shift) & mask]++;                         \
            DST[o] = SRC[i];                                                    \
            EXTRA;                                                              \
        }                                                                       \
    } while (0)

/* Sort ids[0:n] (in range, not in order, largest id mx) into S (ids) and O (positions),
 * stably. -1 when scratch memory runs out. */
static int radix_argsort(const int64_t *ids, int64_t n, int64_t mx, int64_t *S, int64_t *O)
{
    const int kb = bit_length((uint64_t)mx), ib = bit_length((uint64_t)(n - 1));
    if (kb == 0) { /* every id is 0 */
        memset(S, 0, (size_t)n * sizeof(int64_t));
        for (int64_t i = 0; i < n; i++)
            O[i] = i;
        return 0;
    }
    const int passes = (kb + RADIX_BITS - 1) / RADIX_BITS, w = (kb + passes - 1) / passes;
    const size_t nb = (size_t)1 << w;
    const uint64_t mask = nb - 1;
    const int packed = kb + ib <= 64;
    int64_t *cnt = (int64_t *)calloc((size_t)passes * nb, sizeof(int64_t));
    int64_t *scratch = packed ? NULL : (int64_t *)malloc((size_t)n * 2 * sizeof(int64_t));
    if (!cnt || (!packed && !scratch)) {
        free(cnt);
        free(scratch);
        return -1;
    }
    for (int64_t i = 0; i < n; i++)
        for (int p = 0; p < passes; p++)
            cnt[(size_t)p * nb + (((uint64_t)ids[i] >> (p * w)) & mask)]++;
    const uint64_t first = (uint64_t)ids[0];
    if (packed) { /* one word per id: key << ib | position, ping-ponging between O and S */
        uint64_t *a = (uint64_t *)O, *b = (uint64_t *)S;
        for (int64_t i = 0; i < n; i++)
            a[i] = ((uint64_t)ids[i] << ib) | (uint64_t)i;
        for (int p = 0; p < passes; p++) {
            if (cnt[(size_t)p * nb + ((first >> (p * w)) & mask)] == n)
                continue; /* the same digit everywhere */
            const int shift = ib + p * w;
            RADIX_PASS(a, b, a[i], (void)0);
            uint64_t *t = a;
            a = b;
            b = t;
        }
        const uint64_t low = ((uint64_t)1 << ib) - 1;
        for (int64_t i = 0; i < n; i++) { /* a is S or O: read a[i] before writing either */
            uint64_t v = a[i];
            S[i] = (int64_t)(v >> ib);
            O[i] = (int64_t)(v & low);
        }
    } else { /* keys and positions side by side */
        int64_t *ka = S, *pa = O, *kb2 = scratch, *pb = scratch + n;
        memcpy(ka, ids, (size_t)n * sizeof(int64_t));
        for (int64_t i = 0; i < n; i++)
            pa[i] = i;
        for (int p = 0; p < passes; p++) {
            if (cnt[(size_t)p * nb + ((first >> (p * w)) & mask)] == n)
                continue;
            const int shift = p * w;
            RADIX_PASS(ka, kb2, (uint64_t)ka[i], pb[o] = pa[i]);
            int64_t *t = ka;
            ka = kb2;
            kb2 = t;
            t = pa;
            pa = pb;
            pb = t;
        }
        if (ka != S) {
            memcpy(S, ka, (size_t)n * sizeof(int64_t));
            memcpy(O, pa, (size_t)n * sizeof(int64_t));
        }
    }
    free(cnt);
    free(scratch);
    return 0;
}

/* group_ids(ids, n, bound, sorted, order, uniq, starts, inverse) -> number of distinct ids,
 * or -1 - i where ids[i] is the first id outside [0, bound) (nothing else is written).
 * Writes the ids in ascending order (stable) to `sorted` and their positions to `order`;
 * when given (non-zero pointers), the distinct ids to `uniq`, where each one's run starts in
 * the sorted order to `starts`, and each id's distinct index to `inverse` (input order).
 * Every output has room for n ids. */
static PyObject *py_group_ids(PyObject *self, PyObject *args)
{
    unsigned long long ip, sp, op, up, stp, invp;
    long long n, bound;
    if (!PyArg_ParseTuple(args, "KLLKKKKK", &ip, &n, &bound, &sp, &op, &up, &stp, &invp))
        return NULL;
    if (n < 0 || bound < 0) {
        PyErr_SetString(PyExc_ValueError, "group_ids: negative size or bound");
        return NULL;
    }
    if (n == 0)
        return PyLong_FromLong(0);
    if (!ip || !sp || !op) {
        PyErr_SetString(PyExc_ValueError, "group_ids: null data pointer");
        return NULL;
    }
    const int64_t *ids = (const int64_t *)(uintptr_t)ip;
    int64_t *S = (int64_t *)(uintptr_t)sp, *O = (int64_t *)(uintptr_t)op;
    int64_t *U = (int64_t *)(uintptr_t)up, *ST = (int64_t *)(uintptr_t)stp;
    int64_t *INV = (int64_t *)(uintptr_t)invp;
    /* unsigned: a negative id is a huge one, so the largest id tells whether all are in range */
    uint64_t mx = (uint64_t)ids[0];
    int64_t descents = 0;
    for (int64_t i = 1; i < n; i++) {
        uint64_t v = (uint64_t)ids[i];
        mx = v > mx ? v : mx;
        descents += ids[i] < ids[i - 1];
    }
    if (mx >= (uint64_t)bound)
        for (int64_t i = 0; i < n; i++)
            if ((uint64_t)ids[i] >= (uint64_t)bound)
                return PyLong_FromLongLong(-1 - (long long)i);
    int rc = 0;
    Py_BEGIN_ALLOW_THREADS
    if (!descents) { /* already in order (a CSR row's columns, a coalesced gradient's rows) */
        memcpy(S, ids, (size_t)n * sizeof(int64_t));
        for (int64_t i = 0; i < n; i++)
            O[i] = i;
    } else {
        rc = radix_argsort(ids, n, (int64_t)mx, S, O);
    }
    Py_END_ALLOW_THREADS
    if (rc)
        return PyErr_NoMemory();
    int64_t m = 1;
    if (!U && !ST && !INV) {
        for (int64_t i = 1; i < n; i++)
            m += S[i] != S[i - 1];
        return PyLong_FromLongLong(m);
    }
    if (U)
        U[0] = S[0];
    if (ST)
        ST[0] = 0;
    if (INV)
        INV[O[0]] = 0;
    for (int64_t i = 1; i < n; i++) {
        if (S[i] != S[i - 1]) {
            if (U)
                U[m] = S[i];
            if (ST)
                ST[m] = i;
            m++;
        }
        if (INV)
            INV[O[i]] = m - 1;
    }
    return PyLong_FromLongLong(m);
}

#endif /* SPARSENET_GROUP_IDS_H */
