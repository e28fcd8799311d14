/*
 * format.h: the writer's number formatting for _native_write.c.
 *
 * fmt_f32() writes the shortest decimal that reads back (as a correctly rounded
 * double, then float32, as load_libsvm and numpy do) to the same float32, in
 * Python's repr style ('0.1', '2.0', '1e-08', '3.4e+38'). Candidates come from
 * double arithmetic and every one is verified with the parser's exact
 * conversion, so the output always round-trips; the shortest length is found
 * by bisection (if p digits round-trip, p + 1 do). Included once, by
 * _native_write.c, after numbers.h.
 */
#ifndef SPARSENET_LIBSVM_FORMAT_H
#define SPARSENET_LIBSVM_FORMAT_H

#include <stdio.h>

/* The correctly rounded double of n * 10^q. */
static double decimal_to_double(uint64_t n, int q)
{
    if (n == 0)
        return 0.0;
    if (q >= -22 && q <= 22 && n <= ((uint64_t)1 << 53))
        return q < 0 ? (double)n / exact_p10[-q] : (double)n * exact_p10[q];
    double d;
    if (eisel_lemire(n, q, &d))
        return d;
    char buf[48];
    snprintf(buf, sizeof(buf), "%llue%d", (unsigned long long)n, q);
    return slow_strtod(buf, strlen(buf));
}

static double scale10(double a, int k)
{
    while (k > 22) {
        a *= 1e22;
        k -= 22;
    }
    while (k < -22) {
        a /= 1e22;
        k += 22;
    }
    return k >= 0 ? a * exact_p10[k] : a / exact_p10[-k];
}

/* A p-significant-digit decimal n * 10^q that reads back to x, if one exists. */
static int f32_candidate(double a, float x, int e, int p, uint64_t *n, int *q)
{
    int k = p - 1 - e; /* n = round(a * 10^k) */
    double s = nearbyint(scale10(a, k));
    if (s < 1.0 || s >= 1e10)
        return 0;
    uint64_t c = (uint64_t)s;
    for (int delta = 0; delta < 3; delta++) { /* the nearest, then its neighbours */
        uint64_t t = delta == 0 ? c : delta == 1 ? c - 1 : c + 1;
        if (t && (float)decimal_to_double(t, -k) == x) {
            *n = t;
            *q = -k;
            return 1;
        }
        if (p < 9)
            break; /* shorter lengths: the nearest decimal decides */
    }
    return 0;
}

static int fmt_u64(uint64_t v, char *out)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/* Python-repr layout of digits d[0..nd) with decimal exponent e10 of d[0]. */
static int layout_repr(const char *d, int nd, int e10, char *out)
{
    char *o = out;
    if (e10 >= -4 && e10 < 16) {
        if (e10 >= nd - 1) {
            memcpy(o, d, nd);
            o += nd;
            for (int i = 0; i < e10 - nd + 1; i++)
                *o++ = '0';
            *o++ = '.';
            *o++ = '0';
        } else if (e10 >= 0) {
            memcpy(o, d, e10 + 1);
            o += e10 + 1;
            *o++ = '.';
            memcpy(o, d + e10 + 1, nd - e10 - 1);
            o += nd - e10 - 1;
        } else {
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -e10 - 1; i++)
                *o++ = '0';
            memcpy(o, d, nd);
            o += nd;
        }
        return (int)(o - out);
    }
    *o++ = d[0];
    if (nd > 1) {
        *o++ = '.';
        memcpy(o, d + 1, nd - 1);
        o += nd - 1;
    }
    *o++ = 'e';
    *o++ = e10 < 0 ? '-' : '+';
    int ae = e10 < 0 ? -e10 : e10;
    if (ae < 10)
        *o++ = '0';
    o += fmt_u64((uint64_t)ae, o);
    return (int)(o - out);
}

/* The shortest round-tripping text of x; at most 16 bytes. */
static int fmt_f32(float x, char *out)
{
    char *o = out;
    if (isnan(x)) {
        memcpy(o, "nan", 3);
        return 3;
    }
    if (signbit(x))
        *o++ = '-';
    if (isinf(x)) {
        memcpy(o, "inf", 3);
        return (int)(o - out) + 3;
    }
    double a = fabs((double)x);
    if (a == 0.0) {
        memcpy(o, "0.0", 3);
        return (int)(o - out) + 3;
    }
    int e = (int)floor(log10(a));
    float ax = fabsf(x);
    uint64_t n = 0;
    int q = 0;
    int lo = 1, hi = 9;
    uint64_t hn = 0;
    int hq = 0;
    int ok9 = f32_candidate(a, ax, e, 9, &hn, &hq);
    if (!ok9) { /* approximation trouble: printf's exact 9 digits always round-trip */
        char buf[32];
        snprintf(buf, sizeof(buf), "%.8e", a);
        uint64_t m = 0;
        int nd = 0;
        for (const char *c = buf; *c && *c != 'e'; c++)
            if (*c >= '0' && *c <= '9') {
                m = m * 10 + (uint64_t)(*c - '0');
                nd++;
            }
        hn = m;
        hq = atoi(strchr(buf, 'e') + 1) - (nd - 1);
    }
    n = hn;
    q = hq;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        uint64_t mn;
        int mq;
        if (f32_candidate(a, ax, e, mid, &mn, &mq)) {
            hi = mid;
            n = mn;
            q = mq;
        } else
            lo = mid + 1;
    }
    while (n % 10 == 0) {
        n /= 10;
        q++;
    }
    char d[24];
    int nd = fmt_u64(n, d);
    return (int)(o - out) + layout_repr(d, nd, q + nd - 1, o);
}

#endif
