/*
 * errors.h: the parser's error codes for _native.c (keep in sync with errors.py, which
 * turns (code, byte offset, extra) into a path:line:col message).
 */
#ifndef SPARSENET_LIBSVM_ERRORS_H
#define SPARSENET_LIBSVM_ERRORS_H

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
    E_NOMEM = 17,
    E_WEIGHT = 18,         /* label:weight with a weight that is not a number */
    E_WEIGHT_NONFINITE = 19,
    E_WEIGHT_RANGE = 20,   /* finite weight overflows the dtype */
    E_WEIGHT_NEG = 21      /* negative weight */
};

#endif
