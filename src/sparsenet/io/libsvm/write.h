/*
 * write.h: the writer's entry points (_native_write.c), for the method table of the
 * _native module (_native.c).
 */
#ifndef SPARSENET_LIBSVM_WRITE_H
#define SPARSENET_LIBSVM_WRITE_H

/* format_rows_f32(indptr, indices, values, labels, shift) -> bytes */
__attribute__((visibility("hidden"))) PyObject *py_format_rows_f32(PyObject *self,
                                                                   PyObject *args);
/* format_f32(values) -> bytes */
__attribute__((visibility("hidden"))) PyObject *py_format_f32(PyObject *self, PyObject *args);

#endif
