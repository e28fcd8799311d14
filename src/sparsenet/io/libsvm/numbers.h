/*
 * numbers.h: character classes and number parsing for the LibSVM kernel (_native.c).
 *
 * parse_number() gives the correctly rounded double of a decimal text
 * (Clinger's exact fast path, then Eisel-Lemire with a 128-bit table of powers
 * of five, then strtod for the rare cases neither settles); fast_value() is the
 * inlined common case. Included by _native.c (the parser) and _native_write.c (the
 * writer, which checks its texts with the same conversion): the functions are static,
 * one copy per file; the state they read is declared here and defined once, in
 * _native.c, so the table and locale installed at import serve both.
 */
#ifndef SPARSENET_LIBSVM_NUMBERS_H
#define SPARSENET_LIBSVM_NUMBERS_H

/* character classes */
#define C_WS 1
#define C_NL 2
#define C_HASH 4
#define C_DIGIT 8
#define C_TERM (C_WS | C_NL | C_HASH)
#define SN_SHARED extern __attribute__((visibility("hidden")))
SN_SHARED unsigned char cls[256];

static inline void init_classes(void)
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
 * (high, low); filled from Python at import (kernel.py computes them). */
#define POW5_MIN (-342)
#define POW5_MAX 308
SN_SHARED uint64_t pow5[2 * (POW5_MAX - POW5_MIN + 1)];
SN_SHARED int pow5_ready;

static const double exact_p10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

#if defined(__GLIBC__)
SN_SHARED locale_t c_locale;
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

static inline int lower_eq(const char *p, const char *end, const char *word)
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
static __attribute__((noinline, unused)) const char *parse_number(const char *p,
                                                                  const char *end, int stop,
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


/* Clinger's exact case: digits w with nfrac of them after the point are converted
 * exactly (correctly rounded) by exact_decimal when exact_decimal_ok. fast_value and
 * feature_scan.h's scanner both convert through these, so they accept and round alike. */
static inline int exact_decimal_ok(uint64_t w, size_t nfrac)
{
    return w <= ((uint64_t)1 << 53) && nfrac <= 22;
}

static inline double exact_decimal(uint64_t w, size_t nfrac)
{
    return (double)w / exact_p10[nfrac];
}

/* The common value inline: [+-]? d+ [. d*] with at most 19 digits, no
 * exponent, exactly convertible by Clinger's rule, followed by a terminator.
 * NULL: use parse_number. The scanning loops stop at the region's final
 * '\n', so they need no bounds checks. (Measured: plain loops beat 8-byte
 * SWAR digit runs here, because predictable branches let the CPU run ahead
 * while SWAR chains every token on the previous one; feature_scan.h converts
 * eight digits at a time once a bitmap has given every token's length, and is
 * faster.) */
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
    if (nd == 0 || nd > 19 || !exact_decimal_ok(w, nfrac) || !(cls[(unsigned char)*p] & C_TERM))
        return NULL;
    double v = exact_decimal(w, nfrac);
    *out = neg ? -v : v;
    return p;
}

#endif
