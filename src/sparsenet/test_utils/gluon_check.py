"""Check that a HybridBlock gives the same results hybridized and not.

>>> import sparsenet as mx
>>> class Cube(mx.gluon.HybridBlock):
...     def hybrid_forward(self, F, x):
...         return x * x * x
>>> check_gluon_hybridize_consistency(lambda prefix: Cube(prefix=prefix),
...                                   [mx.nd.array([1.0, -2.0])], numpy_func=lambda x: x ** 3)
"""
from .. import autograd
from .compare import assert_almost_equal

__all__ = ["check_gluon_hybridize_consistency"]


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1e-4, atol=1e-4):
    """Assert that a block built by ``net_builder`` agrees with itself hybridized.

    The block is built four times (imperative and hybridized, with and
    without autograd), every build getting the first build's initial
    parameter values; outputs, and with ``test_grad`` the gradients of the
    inputs for ``out.backward(out)``, must agree. The network must not draw
    random numbers.

    Parameters
    ----------
    net_builder : callable
        ``net_builder(prefix='net_')`` returns a new HybridBlock.
    data_l : list of NDArray
        The inputs.
    numpy_func : callable, optional
        A NumPy reference for the output, given the inputs as NumPy arrays.
    test_grad : bool
        Also compare the input gradients.
    rtol, atol : float
    """
    saved_out = None
    saved_grads = None
    initial = None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder(prefix="net_")
            net.initialize()
            params = list(net.collect_params().values())
            if initial is None:
                initial = [p.data().copy() for p in params]
            else:
                for p, value in zip(params, initial):
                    p.set_data(value)
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in inputs]
                if saved_grads is None:
                    saved_grads = grads
                else:
                    for got, want in zip(grads, saved_grads):
                        assert_almost_equal(got, want, rtol=rtol, atol=atol)
    if numpy_func is not None:
        reference = numpy_func(*[x.asnumpy() for x in data_l])
        assert_almost_equal(saved_out, reference, rtol=rtol, atol=atol)
