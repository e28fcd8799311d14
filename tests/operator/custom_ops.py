"""Custom operators the tests apply, each registered under a ``test_`` name.

Each one is written as an MXNet user writes it (the same code runs under MXNet 1.9.1,
which is how the measured values in the tests were obtained); ``LOG`` records what
the engine handed to the user's code.
"""
import sparsenet as mx

LOG = []


# ---------------------------------------------------------------------- square (dense)
class Square(mx.operator.CustomOp):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        LOG.append(("forward", is_train, list(req), mx.autograd.is_recording(),
                    mx.autograd.is_training()))
        self.assign(out_data[0], req[0], self.scale * in_data[0] * in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        LOG.append(("backward", list(req), mx.autograd.is_recording(),
                    mx.autograd.is_training(), in_grad[0].asnumpy().tolist()))
        self.assign(in_grad[0], req[0], 2 * self.scale * in_data[0] * out_grad[0])


@mx.operator.register("test_square")
class SquareProp(mx.operator.CustomOpProp):
    """``scale * x * x``; records the keywords it is built with."""

    def __init__(self, scale="1", **kwargs):
        super().__init__(need_top_grad=True)
        LOG.append(("prop", dict(scale=scale, **kwargs)))
        self.scale = float(scale)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        LOG.append(("create", ctx, in_shapes, in_dtypes))
        return Square(self.scale)


# ---------------------------------------------------------------------- two in, two out, aux
class SumProd(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] + in_data[1])
        self.assign(out_data[1], req[1], in_data[0] * in_data[1])
        aux[0][:] += 1  # counts the forward passes

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        LOG.append(("backward", list(req)))
        self.assign(in_grad[0], req[0], out_grad[0] + out_grad[1] * in_data[1])
        self.assign(in_grad[1], req[1], out_grad[0] + out_grad[1] * in_data[0])


@mx.operator.register("test_sumprod")
class SumProdProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["a", "b"]

    def list_outputs(self):
        return ["sum", "prod"]

    def list_auxiliary_states(self):
        return ["count"]

    def infer_shape(self, in_shape):
        return [in_shape[0], in_shape[0]], [in_shape[0], in_shape[0]], [(1,)]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return SumProd()


# ---------------------------------------------------------------------- softmax loss
class SoftmaxLoss(mx.operator.CustomOp):
    """MXNet's example/numpy-ops/custom_softmax.py, on NDArrays: a loss-like operator."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.softmax(in_data[0]))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        LOG.append(("loss backward", list(req)))
        label = in_data[1]
        grad = out_data[0] - mx.nd.one_hot(label, out_data[0].shape[1])
        self.assign(in_grad[0], req[0], grad)


@mx.operator.register("test_softmax_loss")
class SoftmaxLossProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        data_shape = in_shape[0]
        return [data_shape, (data_shape[0],)], [data_shape], []

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return SoftmaxLoss()


# ---------------------------------------------------------------------- weighted softmax CE
class WeightedSoftmaxCE(mx.operator.CustomOp):
    """The loss of MXNet's example/sparse/linear_classification (need_top_grad=True)."""

    def __init__(self, positive_cls_weight):
        super().__init__()
        self.positive_cls_weight = float(positive_cls_weight)

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.SoftmaxOutput(in_data[0], in_data[1]))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label, pred = in_data[1], out_data[0]
        dx = pred - mx.nd.one_hot(label, 2)
        w = self.positive_cls_weight
        scale = ((1 + label * w) / w).reshape((pred.shape[0], 1))
        self.assign(in_grad[0], req[0], scale * dx)


@mx.operator.register("test_weighted_softmax_ce")
class WeightedSoftmaxCEProp(mx.operator.CustomOpProp):
    def __init__(self, positive_cls_weight):
        super().__init__(True)
        self.positive_cls_weight = positive_cls_weight

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shapes):
        return in_shapes, (in_shapes[0],), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return WeightedSoftmaxCE(self.positive_cls_weight)


# ---------------------------------------------------------------------- sparse: csr x rsp
class CsrDot(mx.operator.CustomOp):
    """``dot(x, w)`` for a CSR ``x``; the gradient of ``w`` is row_sparse."""

    def forward(self, is_train, req, in_data, out_data, aux):
        LOG.append(("csr forward", [a.stype for a in in_data], [o.stype for o in out_data]))
        self.assign(out_data[0], req[0], mx.nd.sparse.dot(in_data[0], in_data[1]))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        LOG.append(("csr backward", list(req), [g.stype for g in out_grad],
                    [g.stype for g in in_grad]))
        grad_w = mx.nd.sparse.dot(in_data[0], out_grad[0], transpose_a=True)
        self.assign(in_grad[1], req[1], grad_w)


@mx.operator.register("test_csr_dot")
class CsrDotProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["data", "weight"]

    def infer_shape(self, in_shape):
        return in_shape, [(in_shape[0][0], in_shape[1][1])], []

    def infer_storage_type(self, in_stype):
        return in_stype, ["default"], []

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        return ograd_stype, in_stype, out_stype, ["default", "row_sparse"], aux_stype

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return CsrDot()


# ---------------------------------------------------------------------- sparse: rsp -> rsp
class RowScale(mx.operator.CustomOp):
    """``w * 3`` on a row_sparse ``w``, row_sparse output and gradient."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 3)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        LOG.append(("rsp backward", [g.stype for g in out_grad], [g.stype for g in in_grad]))
        self.assign(in_grad[0], req[0], out_grad[0] * 3)


@mx.operator.register("test_row_scale")
class RowScaleProp(mx.operator.CustomOpProp):
    def infer_storage_type(self, in_stype):
        return in_stype, ["row_sparse"], []

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        return ["row_sparse"], in_stype, out_stype, ["row_sparse"], aux_stype

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return RowScale()


# ---------------------------------------------------------------------- errors
class Raising(mx.operator.CustomOp):
    def __init__(self, where, exc):
        super().__init__()
        self.where, self.exc = where, exc

    def forward(self, is_train, req, in_data, out_data, aux):
        if self.where == "forward":
            raise self.exc("raised in forward")
        self.assign(out_data[0], req[0], in_data[0])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        raise self.exc("raised in backward")


_EXCEPTIONS = {"ValueError": ValueError, "KeyError": KeyError, "ZeroDivisionError":
               ZeroDivisionError, "AssertionError": AssertionError, "OSError": OSError}


@mx.operator.register("test_raising")
class RaisingProp(mx.operator.CustomOpProp):
    def __init__(self, where, exc):
        super().__init__()
        self.where, self.exc = where, _EXCEPTIONS[exc]

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Raising(self.where, self.exc)
