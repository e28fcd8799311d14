/*
 * buffers.h: the parser's output memory for _native.c: pooled
 * mappings, growable arrays, and the buffer type that hands them to
 * NumPy without a copy. Included once, by _native.c.
 */
#ifndef SPARSENET_LIBSVM_BUFFERS_H
#define SPARSENET_LIBSVM_BUFFERS_H

/* ------------------------------------------------------------------ memory */

/* Arrays of 4 MiB or more are mapped directly, in 2 MiB steps. Their
 * capacities are generous upper bounds, so the mappings are large but mostly
 * untouched address space. Released mappings go to a small pool and are
 * reused by the next chunks: fresh pages must be faulted in and zeroed by the
 * kernel, which costs as much as parsing them on a VM (measured), while reused
 * pages are already there. The pages are ordinary 4 KiB ones: advising them
 * onto transparent huge pages made a process's first load 1.3-2x slower
 * (each huge page is zeroed whole, and the kernel may compact memory to find
 * one) and later chunks no faster (BENCHMARKS.md, "LibSVM parsing"). */
#define BIG_ALLOC ((size_t)4 << 20)
#define MAP_STEP ((size_t)2 << 20)
#define POOL_SLOTS 16

#include <pthread.h>
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static char *pool_ptr[POOL_SLOTS];
static size_t pool_map[POOL_SLOTS];
static int pool_n = 0;

/* fork() while a parsing thread holds the pool lock must not leave the child
 * with a lock nobody will release. */
static void pool_prepare(void) { pthread_mutex_lock(&pool_lock); }
static void pool_parent(void) { pthread_mutex_unlock(&pool_lock); }
static void pool_child(void) { pthread_mutex_init(&pool_lock, NULL); }

static char *map_new(size_t m)
{
    char *p = (char *)mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == (char *)MAP_FAILED ? NULL : p;
}

static char *mem_alloc(size_t bytes, size_t *map)
{
    *map = 0;
    if (bytes < BIG_ALLOC)
        return (char *)malloc(bytes ? bytes : 1);
    size_t m = (bytes + MAP_STEP - 1) & ~(MAP_STEP - 1);
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
    .tp_name = "sparsenet.io.libsvm._native.OwnedBuffer",
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

#endif
