"""Running an example program on its ``small`` recipe and comparing with MXNet 1.9.1's numbers.

The MXNet numbers in the tests were measured by running the same program file
under MXNet 1.9.1 on the same generated data::

    OMP_NUM_THREADS=1 /tmp/mx/bin/python tests/examples/run_mxnet.py PROGRAM small DIR

Both runs start from the same weights (``common.fixed_params``) and see the
batches in the same order, so what is left between them is float32 rounding
(different summation orders in the kernels): the loss metrics agree to about
1e-6 relative, and the parameter summaries to about 1e-5.
"""
import importlib
import os

import numpy as np

import sparsenet as mx
from tests.examples import datagen, recipes

# float32 rounding, accumulated over a few dozen steps, on sums over up to 2M weights
PARAM_RTOL = 2e-4


def run(program, tmp_path, data_sha256, **options):
    """Write ``program``'s small data into ``tmp_path``, check it is the data MXNet was
    measured on, train with fresh symbol names, and return the result dict."""
    data_dir = str(tmp_path)
    kwargs = recipes.prepare(program, "small", data_dir)
    got_sha = {}
    for root, _, files in os.walk(data_dir):
        for f in files:
            got_sha[os.path.relpath(os.path.join(root, f), data_dir)] = datagen.sha256(
                os.path.join(root, f))
    assert got_sha == data_sha256, "the generated data changed: re-measure MXNet's numbers"
    kwargs.update(options)
    module = importlib.import_module(f"tests.examples.{program}_program")
    with mx.name.NameManager():
        return module.train(data_dir, **kwargs)


def assert_params_close(got, want, rtol=PARAM_RTOL):
    """Parameter summaries ``{name: [sum, sum of squares, squared change]}`` agree.

    A sum may be near 0 with large terms, so its tolerance scales with the root of
    the sum of squares; the squared change is compared relative to itself (it is
    what training did, small next to the weights themselves).
    """
    assert sorted(got) == sorted(want)
    for name in want:
        s, ss, dd = got[name]
        ws, wss, wdd = want[name]
        np.testing.assert_allclose(s, ws, rtol=rtol, atol=rtol * np.sqrt(wss), err_msg=name)
        np.testing.assert_allclose(ss, wss, rtol=rtol, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(dd, wdd, rtol=10 * rtol, atol=1e-9, err_msg=name)
