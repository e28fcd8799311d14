"""LibSVM text: the validating parser (native C kernel and its Python reference), the
streaming reader behind :class:`~sparsenet.io.LibSVMIter`, and whole-file
:func:`~sparsenet.io.load_libsvm` / :func:`~sparsenet.io.save_libsvm`.

One module per concept: ``options`` (what the parser accepts), ``kernel`` (which
parser runs), ``reference`` (the parser in Python), ``errors`` (located format
errors), ``compression`` (gzip, zstd, xz, bz2 by suffix), ``source`` (files,
shards and chunks), ``stream`` (chunks parsed in
background threads), ``rows`` (growing CSR parts), ``load``, ``save`` and
``iterator``.

>>> from sparsenet.io.libsvm import kernel
>>> kernel.BACKEND in ('native', 'python')
True
"""
