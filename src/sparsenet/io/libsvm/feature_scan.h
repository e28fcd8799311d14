/*
 * feature_scan.h: the common line's features, read by walking a bitmap of its
 * non-digit bytes (for _native.c's parse_region).
 *
 * Most lines are `label idx:value idx:value ...` with plain decimal numbers,
 * indices increasing. fast_features() reads such a line's features without
 * scanning digit by digit: a 64-byte block at a time is classified with SSE2
 * (one bit per byte that is not an ASCII digit), so every separator (':', '.',
 * a sign, whitespace, the newline) is found by counting trailing zeros, and
 * every run of digits, whose length is then known, is converted eight at a
 * time: a token's index and value together in one SSE2 register (the value's
 * point squeezed out first), longer runs in 64-bit words (SWAR). The token
 * boundaries come from the bitmap, not from the digits, so the conversions of
 * successive tokens overlap in the CPU. (Measured on the benchmark's lines,
 * chunks in cache: the general loop 1.22 GB/s per core, this 1.7-1.8.)
 *
 * A comment ends the features as in the general loop, and indices out of
 * order or repeated are kept as written, flagged for parse_region to sort and
 * merge as it does the general loop's, where the options allow them. On
 * anything else (an exponent, nan, an index out of range, a run of more than
 * 16 digits, an order the options forbid, too close to the buffer's end for a
 * whole block) it undoes what it appended and returns NULL, and parse_region's
 * general loop reads the line's features from the same place, with every rule
 * and error message; parse_region stops trying it in a chunk where it hands
 * back more than a quarter of the lines. What it accepts it converts with the
 * general loop's own exact case (exact_decimal, numbers.h), so both give the
 * same bits.
 * Elsewhere than on x86-64 (SSE2 and little-endian words are assumed there)
 * the general loop reads every line. Included once, by _native.c, after
 * numbers.h.
 */
#ifndef SPARSENET_LIBSVM_FEATURE_SCAN_H
#define SPARSENET_LIBSVM_FEATURE_SCAN_H

#if defined(__SSE2__) && defined(__x86_64__)
#define HAVE_FAST_FEATURES 1
#include <emmintrin.h>

/* Bit i set when blk[i] is not an ASCII digit, for the 64 bytes at blk. */
static inline uint64_t nondigit_mask(const char *blk)
{
    const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
    uint64_t m = 0;
    for (int k = 0; k < 4; k++) {
        __m128i v = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(blk + 16 * k)), zero);
        __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(v, nine), v); /* 0 <= v <= 9 */
        m |= (uint64_t)(uint16_t)~_mm_movemask_epi8(digit) << (16 * k);
    }
    return m;
}

/* The value of the n digits (1 <= n <= 8) in the low bytes of x, the first digit in the
 * lowest byte (as loaded from memory on a little-endian machine); the bytes above are
 * ignored. Three multiplications, in the manner of fast_float's parse_eight_digits. */
static inline uint64_t swar_digits(uint64_t x, size_t n)
{
    x <<= 8 * (8 - n); /* the n digits to the top bytes, zero digits below */
    x = ((x & 0x0F0F0F0F0F0F0F0FULL) * 2561) >> 8;
    x = ((x & 0x00FF00FF00FF00FFULL) * 6553601) >> 16;
    return ((x & 0x0000FFFF0000FFFFULL) * 42949672960001ULL) >> 32;
}

/* The 8 bytes at s as one word (the first in the lowest byte). */
static inline uint64_t load8(const char *s)
{
    uint64_t x;
    memcpy(&x, s, 8);
    return x;
}

/* The value of the n digits at s, 0 <= n <= 16; reads the 16 bytes at s. */
static inline uint64_t digits_upto16(const char *s, size_t n)
{
    if (n <= 8)
        return n ? swar_digits(load8(s), n) : 0;
    return swar_digits(load8(s), n - 8) * 100000000u + swar_digits(load8(s + n - 8), 8);
}

/* The values of two runs of 1-8 digits at once, as swar_digits(a, n) and
 * swar_digits(b, m), in the two halves of one SSE2 register: digit pairs by a
 * 16-bit multiply-add, fours by pmaddwd, eights by pmuludq. */
static inline void sse_digits2(uint64_t a, size_t n, uint64_t b, size_t m, uint64_t *va,
                               uint64_t *vb)
{
    a <<= 8 * (8 - n);
    b <<= 8 * (8 - m);
    __m128i v = _mm_and_si128(_mm_set_epi64x((long long)b, (long long)a), _mm_set1_epi8(0x0F));
    /* pairs: first digit * 10 + second, in 16-bit lanes */
    v = _mm_add_epi16(
        _mm_mullo_epi16(_mm_and_si128(v, _mm_set1_epi16(0xFF)), _mm_set1_epi16(10)),
        _mm_srli_epi16(v, 8));
    /* fours, in 32-bit lanes */
    v = _mm_madd_epi16(v, _mm_set1_epi32((1 << 16) | 100));
    /* eights, in 64-bit lanes */
    v = _mm_add_epi64(_mm_mul_epu32(v, _mm_set1_epi32(10000)), _mm_srli_epi64(v, 32));
    *va = (uint64_t)_mm_cvtsi128_si64(v);
    *vb = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v));
}

static const uint64_t pow10_u64[17] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull};

/* Blocks are classified while they and 16 more bytes lie before `end`. */
#define FAST_MARGIN (64 + 16)

/* The next non-digit byte (into `at`), consuming it; to `undo` when the next
 * block would come too close to the end. */
#define NEXT_NONDIGIT(at)                        \
    do {                                         \
        while (!m) {                             \
            blk += 64;                           \
            if (blk > lim)                       \
                goto undo;                       \
            m = nondigit_mask(blk);              \
        }                                        \
        (at) = blk + __builtin_ctzll(m);         \
        m &= m - 1;                              \
    } while (0)

/* The features of the line whose first token (not whitespace) is at p, appended
 * to r's indices and values; returns where they end (the line's '\n' or '#'), or
 * NULL (nothing appended) for the general loop to read the line. shift is 1 for
 * one-based files; *unsorted and *dups say whether indices came out of order or
 * repeated (as the general loop's flags).
 * Out of line: compiled on its own, its loop keeps its values in registers
 * (measured 4% faster than inlined into parse_region). */
static __attribute__((noinline)) const char *fast_features(const char *p, const char *end,
                                                           const Opts *o, Result *r,
                                                           uint64_t shift, int *unsorted,
                                                           int *dups)
{
    if (end - p < FAST_MARGIN)
        return NULL;
    const char *lim = end - FAST_MARGIN, *blk = p;
    uint64_t m = nondigit_mask(p);
    const size_t start = r->indices.len;
    size_t len = start, cap = r->indices.cap;
    int64_t *ind = (int64_t *)r->indices.p;
    char *vals = r->values.p;
    const int f64 = o->f64;
    const uint64_t limit = (uint64_t)o->limit;
    int64_t prev = -1, top = -1;
    /* 1: kept as written, for parse_region to sort or merge; 0: an error */
    const int order_ok = !o->strict_order, dup_ok = o->dup_sum;
    int out_of_order = 0, repeated = 0;
    const char *q;
    NEXT_NONDIGIT(q);
    for (;;) {
        if (q == p) { /* no digit here: the line ends, or the general loop decides */
            if (*p != '\n' && *p != '#')
                goto undo;
            break;
        }
        /* ---- index: digits [p, q), then ':' */
        size_t ni = (size_t)(q - p);
        if (*q != ':' || ni > 16)
            goto undo;
        /* ---- value: [+-]? digits [. digits], then whitespace or '\n' */
        const char *s = q + 1, *t;
        NEXT_NONDIGIT(t);
        int neg = 0;
        if (t == s && (*s == '-' || *s == '+')) {
            neg = *s == '-';
            s++;
            NEXT_NONDIGIT(t);
        }
        size_t nint = (size_t)(t - s), nfrac = 0;
        uint64_t w, raw;
        if (*t == '.') {
            const char *f = t + 1;
            NEXT_NONDIGIT(t);
            nfrac = (size_t)(t - f);
            size_t nd = nint + nfrac;
            if (nd - 1 < 7 && ni <= 8) { /* 1-7 digits and the point: 8 bytes, one conversion */
                uint64_t x = load8(s), before = ((uint64_t)1 << (8 * nint)) - 1;
                sse_digits2(load8(p), ni, (x & before) | ((x >> 8) & ~before), nd, &raw, &w);
            } else {
                if (nint > 16 || nfrac > 16 || nd > 19 || nd == 0)
                    goto undo;
                raw = digits_upto16(p, ni);
                w = digits_upto16(s, nint) * pow10_u64[nfrac] + digits_upto16(f, nfrac);
            }
        } else {
            if (nint == 0 || nint > 16)
                goto undo;
            raw = digits_upto16(p, ni);
            w = digits_upto16(s, nint);
        }
        if (raw - shift >= limit) /* below shift wraps around: also out of range */
            goto undo;
        int64_t idx = (int64_t)(raw - shift);
        if (__builtin_expect(idx <= prev, 0)) {
            if (!(idx == prev ? dup_ok : order_ok))
                goto undo; /* an error: the general loop reports it */
            repeated |= idx == prev;
            out_of_order |= idx < prev;
        }
        prev = idx;
        if (!exact_decimal_ok(w, nfrac) || !(cls[(unsigned char)*t] & C_TERM))
            goto undo;
        double d = exact_decimal(w, nfrac);
        if (neg)
            d = -d;
        if (len == cap) {
            r->indices.len = len;
            if (!vec_grow(&r->indices, len + 1) || !vec_grow(&r->values, r->indices.cap))
                goto undo; /* the general loop reports it */
            cap = r->indices.cap;
            ind = (int64_t *)r->indices.p;
            vals = r->values.p;
        }
        ind[len] = idx;
        if (f64)
            ((double *)vals)[len] = d;
        else
            ((float *)vals)[len] = (float)d;
        len++;
        /* ---- what follows the value */
        if (*t != ' ' && (*t == '\n' || *t == '#')) {
            p = t;
            break;
        }
        p = t + 1;
        NEXT_NONDIGIT(q);
        while (q == p && (cls[(unsigned char)*p] & C_WS)) {
            p++;
            NEXT_NONDIGIT(q);
        }
    }
    r->indices.len = len;
    top = prev;
    if (out_of_order)
        for (size_t i = start; i < len; i++)
            top = ind[i] > top ? ind[i] : top;
    if (top > r->max_index)
        r->max_index = top;
    *unsorted = out_of_order;
    *dups = repeated;
    return p;
undo:
    r->indices.len = start;
    return NULL;
}
#undef NEXT_NONDIGIT
#endif

#endif
