/*
 * sparsenet.io.libsvm._native, the writer: LibSVM text from CSR parts (the fast path
 * of save_libsvm) with the shortest float32 texts that read back exactly (format.h).
 * Compiled into the same extension as _native.c, whose method table lists these
 * functions (declared in write.h); the number state comes from numbers.h.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numbers.h"
#include "format.h"
#include "write.h"

/* format_rows_f32(indptr, indices, values, labels, shift) -> bytes: LibSVM lines
 * "label index:value ..." for float32 values and labels (the writer's fast path). */
PyObject *py_format_rows_f32(PyObject *self, PyObject *args)
{
    Py_buffer ip, ind, val, lab;
    long long shift;
    if (!PyArg_ParseTuple(args, "y*y*y*y*L", &ip, &ind, &val, &lab, &shift))
        return NULL;
    PyObject *out = NULL;
    Py_ssize_t rows = ip.len / 8 - 1;
    Py_ssize_t nnz = ind.len / 8;
    if (rows < 0 || val.len / 4 != nnz || lab.len / 4 != rows) {
        PyErr_SetString(PyExc_ValueError, "format_rows_f32: inconsistent array lengths");
        goto done;
    }
    const int64_t *indptr = (const int64_t *)ip.buf, *indices = (const int64_t *)ind.buf;
    const float *values = (const float *)val.buf, *labels = (const float *)lab.buf;
    if (indptr[0] != 0 || indptr[rows] != nnz) {
        PyErr_SetString(PyExc_ValueError, "format_rows_f32: indptr does not match indices");
        goto done;
    }
    /* a value token is at most 1 + 20 + 1 + 16 bytes, a label 16 + 1 */
    Py_ssize_t cap = rows * 17 + nnz * 38 + 1;
    out = PyBytes_FromStringAndSize(NULL, cap);
    if (!out)
        goto done;
    char *o = PyBytes_AS_STRING(out);
    char *start = o;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < rows && !bad; r++) {
        o += fmt_f32(labels[r], o);
        for (int64_t k = indptr[r]; k < indptr[r + 1]; k++) {
            if (indices[k] + shift < 0) {
                bad = 1;
                break;
            }
            *o++ = ' ';
            o += fmt_u64((uint64_t)(indices[k] + shift), o);
            *o++ = ':';
            o += fmt_f32(values[k], o);
        }
        *o++ = '\n';
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        Py_CLEAR(out);
        PyErr_SetString(PyExc_ValueError, "format_rows_f32: negative index");
        goto done;
    }
    _PyBytes_Resize(&out, o - start);
done:
    PyBuffer_Release(&ip);
    PyBuffer_Release(&ind);
    PyBuffer_Release(&val);
    PyBuffer_Release(&lab);
    return out;
}

/* format_f32(values) -> bytes: the shortest texts, newline-separated (tests). */
PyObject *py_format_f32(PyObject *self, PyObject *args)
{
    Py_buffer val;
    if (!PyArg_ParseTuple(args, "y*", &val))
        return NULL;
    Py_ssize_t n = val.len / 4;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * 17 + 1);
    if (out) {
        char *o = PyBytes_AS_STRING(out), *start = o;
        for (Py_ssize_t i = 0; i < n; i++) {
            o += fmt_f32(((const float *)val.buf)[i], o);
            *o++ = '\n';
        }
        _PyBytes_Resize(&out, o - start);
    }
    PyBuffer_Release(&val);
    return out;
}
