"""Symbol fidelity with MXNet 1.9.1: attributes, AttrScope, fluent methods, gradient storage
types of simple_bind, SparseEmbedding and the recorded graph of an array.

Every expected value below was measured with MXNet 1.9.1 unless it says otherwise.
"""
import json

import numpy as np
import pytest

import sparsenet as mx
from sparsenet.symbol.recorded import symbol_of_recorded


@pytest.fixture(autouse=True)
def _fresh_names():
    with mx.name.NameManager():
        yield


# ---------------------------------------------------------------------- attributes
def test_lr_mult_on_an_operator_goes_to_the_node_and_its_created_variables():
    # measured with MXNet 1.9.1
    y = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=3, name='fc', lr_mult=2.0,
                              wd_mult=0.5)
    node = {'num_hidden': '3', '__wd_mult__': '0.5', 'wd_mult': '0.5', '__lr_mult__': '2.0',
            'lr_mult': '2.0'}
    assert y.list_attr() == node
    assert y.attr_dict() == {'fc_weight': node, 'fc_bias': node, 'fc': node}
    weight = json.loads(y.get_internals()['fc_weight'].tojson())['nodes'][0]
    assert weight['attrs'] == {'__lr_mult__': '2.0', '__wd_mult__': '0.5', 'num_hidden': '3'}


def test_dunder_and_attr_keywords_on_operators():
    # measured with MXNet 1.9.1
    x = mx.sym.var('x')
    y = mx.sym.relu(x, name='r', __layout__='NCHW', attr={'a': 'b'})
    assert y.list_attr() == {'a': 'b', '__layout__': 'NCHW'}
    assert y.attr_dict() == {'r': {'a': 'b', '__layout__': 'NCHW'}}
    assert mx.sym.relu(x, name='r2', __init__='zeros').list_attr() == {'__init__': 'zeros'}
    z = mx.sym.relu(x, name='zz', lr_mult=1.5, ctx_group='cg')
    assert z.list_attr() == {'__ctx_group__': 'cg', 'ctx_group': 'cg', '__lr_mult__': '1.5',
                             'lr_mult': '1.5'}
    assert mx.sym.relu(x, lr_mult=2).list_attr() == {'__lr_mult__': '2', 'lr_mult': '2'}
    f = mx.sym.FullyConnected(x, num_hidden=2, attr={'lr_mult': '3'}, name='f')
    assert f.attr_dict()['f_weight'] == {'num_hidden': '2', '__lr_mult__': '3', 'lr_mult': '3'}


def test_per_input_attribute_keywords_are_rejected_as_in_mxnet():
    # measured with MXNet 1.9.1: MXNetError "setting variable attributes with weight_lr_mult is
    # deprecated. please instead use\nw = Variable(lr_mult=1)\nsym = YourSymbolName(weight=w)"
    with pytest.raises(mx.MXNetError, match=r"weight_lr_mult is deprecated(.|\n)*"
                                            r"w = Variable\(lr_mult=1\)\nsym = YourSymbolName"
                                            r"\(weight=w\)"):
        mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2, weight_lr_mult=1)


def test_variable_attributes():
    # measured with MXNet 1.9.1
    v = mx.sym.var('v', lr_mult=2, wd_mult=3, __layout__='NC', attr={'k': 'v'},
                   init=mx.init.One())
    assert v.list_attr() == {'__layout__': 'NC', '__init__': '["one", {}]', '__wd_mult__': '3',
                             'wd_mult': '3', '__lr_mult__': '2', 'lr_mult': '2', 'k': 'v'}
    assert v.attr('lr_mult') == v.attr('__lr_mult__') == '2'
    assert v.attr('layout') is None and v.attr('__layout__') == 'NC'
    assert v.attr('nothing') is None
    w = mx.sym.var('w', attr={'ctx_group': 'g', '__mirror_stage__': '1'})
    assert w.list_attr() == {'__mirror_stage__': '1', 'mirror_stage': '1', '__ctx_group__': 'g',
                             'ctx_group': 'g'}
    assert mx.sym.var('q', lr_mult=2.0).list_attr() == {'__lr_mult__': '2.0', 'lr_mult': '2.0'}
    assert mx.sym.var('q', wd_mult=np.float32(0.5)).list_attr() == {'__wd_mult__': '0.5',
                                                                     'wd_mult': '0.5'}
    assert mx.sym.var('q', dtype=np.float64).list_attr() == {'__dtype__': '1'}
    assert mx.sym.var('q', dtype='float16', stype='csr').list_attr() == {
        '__storage_type__': '2', '__dtype__': '2'}
    assert json.loads(mx.sym.var('v7', lr_mult=2).tojson())['nodes'][0]['attrs'] == {
        '__lr_mult__': '2'}


def test_variable_bad_attributes():
    # measured with MXNet 1.9.1: ValueError for both
    with pytest.raises(ValueError, match="Set Attr only accepts string values"):
        mx.sym.var('v', attr={'k': 1})
    with pytest.raises(ValueError, match=r"name=foo is not supported\. Additional attributes "
                                         r"must start and end with double underscores"):
        mx.sym.var('v', foo=5)
    assert mx.sym.var('v', __foo__=3).list_attr() == {'__foo__': '3'}


@pytest.mark.parametrize("shape, text, inferred", [
    ((1), '1', [(1,)]), (5, '5', [(5,)]), ([2, 3], '[2, 3]', [(2, 3)]),
    ((2, 3), '(2, 3)', [(2, 3)]), ((np.int64(4),), '(4,)', [(4,)]),
])
def test_variable_shape_as_int_or_list(shape, text, inferred):
    # measured with MXNet 1.9.1: '__shape__' is str(shape) and infer_shape reads it back
    v = mx.sym.var('v', shape=shape)
    assert v.list_attr() == {'__shape__': text}
    assert v.infer_shape()[0] == inferred


def test_set_attr_converts_hidden_keys_and_needs_strings():
    # measured with MXNet 1.9.1
    v = mx.sym.var('v', __layout__='NC')
    v._set_attr(lr_mult='3', foo='x')
    assert v.list_attr() == {'foo': 'x', '__layout__': 'NC', '__lr_mult__': '3', 'lr_mult': '3'}
    with pytest.raises(ValueError, match="Set Attr only accepts string values"):
        v._set_attr(bar=3)


def test_group_attributes():
    # measured with MXNet 1.9.1: a group lists its first output's attributes; attr() is None
    v = mx.sym.var('v', lr_mult=2)
    g = mx.sym.Group([v, mx.sym.relu(v, name='r')])
    assert g.list_attr() == {'__lr_mult__': '2', 'lr_mult': '2'}
    assert g.attr('lr_mult') is None
    assert g.attr_dict() == {'v': {'__lr_mult__': '2', 'lr_mult': '2'}}


def test_lr_mult_on_an_operator_reaches_the_optimizer():
    y = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=2, name='fc', lr_mult=0.5)
    opt = mx.optimizer.create('sgd', sym=y, param_idx2name={0: 'fc_weight', 1: 'fc_bias'})
    assert opt.lr_mult == {'fc_weight': 0.5, 'fc_bias': 0.5}


# ---------------------------------------------------------------------- AttrScope
def test_attr_scope_sets_attributes_of_symbols_created_inside():
    # measured with MXNet 1.9.1
    assert mx.AttrScope is mx.attribute.AttrScope
    with mx.AttrScope(ctx_group='dev1', __foo__='bar'):
        a = mx.sym.var('a')
        b = mx.sym.relu(a, name='rb')
        c = mx.sym.var('c', attr={'ctx_group': 'other'})
        with mx.AttrScope(group='g2'):
            d = mx.sym.var('d')
            e = mx.sym.relu(d, name='re', attr={'group': 'g3'})
        fc = mx.sym.FullyConnected(a, num_hidden=2, name='fc2')
    outer = {'__foo__': 'bar', '__ctx_group__': 'dev1', 'ctx_group': 'dev1'}
    assert a.list_attr() == outer and b.list_attr() == outer
    assert c.list_attr() == {'__foo__': 'bar', '__ctx_group__': 'other', 'ctx_group': 'other'}
    assert d.list_attr() == dict(outer, group='g2')
    assert e.list_attr() == dict(outer, group='g3')
    assert fc.attr_dict() == {'a': outer, 'fc2_weight': dict(outer, num_hidden='2'),
                              'fc2_bias': dict(outer, num_hidden='2'),
                              'fc2': dict(outer, num_hidden='2')}
    assert mx.sym.var('z').list_attr() == {}


def test_attr_scope_nesting_and_get():
    # measured with MXNet 1.9.1
    with mx.AttrScope(lr_mult='2'):
        assert mx.sym.var('y').list_attr() == {'__lr_mult__': '2', 'lr_mult': '2'}
        assert mx.sym.var('y2', lr_mult=3).list_attr() == {'__lr_mult__': '3', 'lr_mult': '3'}
    with mx.AttrScope(__a__='1'):
        with mx.AttrScope(__b__='2'):
            assert mx.sym.var('z').list_attr() == {'__b__': '2', '__a__': '1'}
        assert mx.sym.var('z').list_attr() == {'__a__': '1'}
    scope = mx.AttrScope(x='1')
    assert scope.get(None) == {'x': '1'} and scope.get({'y': '2'}) == {'x': '1', 'y': '2'}
    assert mx.AttrScope.current.get(None) == {}
    with pytest.raises(ValueError, match="Attributes need to be string"):
        mx.AttrScope(x=1)


def test_attr_scope_applies_to_python_operators():
    with mx.AttrScope(ctx_group='g'):
        s = mx.sym.var('a') + 1
    assert s.attr('ctx_group') == 'g'


# ---------------------------------------------------------------------- out=, fluent methods
def test_symbol_operators_accept_and_ignore_out():
    # measured with MXNet 1.9.1: relu(x, out=<anything>) builds the same node, out ignored
    x = mx.sym.var('x')
    r = mx.sym.relu(x, out=mx.sym.var('o'), name='rr')
    assert r.list_attr() == {} and r.list_arguments() == ['x']
    assert mx.sym.relu(x, out=mx.nd.ones((2,))).list_arguments() == ['x']


# (name, call, argument shapes, list_attr(), output shapes): measured with MXNet 1.9.1
FLUENT = [
    ('abs', lambda x, i: x.abs(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('arccos', lambda x, i: x.arccos(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('arccosh', lambda x, i: x.arccosh(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('arcsin', lambda x, i: x.arcsin(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('arcsinh', lambda x, i: x.arcsinh(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('arctan', lambda x, i: x.arctan(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('arctanh', lambda x, i: x.arctanh(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('argmax', lambda x, i: x.argmax(axis=1), dict(x=(2, 3)), {'axis': '1'}, [(2,)]),
    ('argmax_channel', lambda x, i: x.argmax_channel(), dict(x=(2, 3)), {}, [(2,)]),
    ('argmin', lambda x, i: x.argmin(axis=0, keepdims=True), dict(x=(2, 3)),
     {'axis': '0', 'keepdims': 'True'}, [(1, 3)]),
    ('argsort', lambda x, i: x.argsort(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('astype', lambda x, i: x.astype('float16'), dict(x=(2, 3)), {'dtype': 'float16'}, [(2, 3)]),
    ('broadcast_axes', lambda x, i: x.broadcast_axes(axis=0, size=4), dict(x=(1, 3)),
     {'axis': '0', 'size': '4'}, [(4, 3)]),
    ('broadcast_to', lambda x, i: x.broadcast_to(shape=(4, 3)), dict(x=(1, 3)),
     {'shape': '(4, 3)'}, [(4, 3)]),
    ('cbrt', lambda x, i: x.cbrt(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('ceil', lambda x, i: x.ceil(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('clip', lambda x, i: x.clip(0, 1), dict(x=(2, 3)), {'a_max': '1', 'a_min': '0'}, [(2, 3)]),
    ('cos', lambda x, i: x.cos(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('cosh', lambda x, i: x.cosh(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('degrees', lambda x, i: x.degrees(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('exp', lambda x, i: x.exp(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('expand_dims', lambda x, i: x.expand_dims(1), dict(x=(2, 3)), {'axis': '1'}, [(2, 1, 3)]),
    ('expm1', lambda x, i: x.expm1(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('fix', lambda x, i: x.fix(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('flatten', lambda x, i: x.flatten(), dict(x=(2, 3, 2)), {}, [(2, 6)]),
    ('flip', lambda x, i: x.flip(axis=1), dict(x=(2, 3)), {'axis': '1'}, [(2, 3)]),
    ('floor', lambda x, i: x.floor(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('log', lambda x, i: x.log(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('log10', lambda x, i: x.log10(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('log1p', lambda x, i: x.log1p(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('log2', lambda x, i: x.log2(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('log_softmax', lambda x, i: x.log_softmax(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('max', lambda x, i: x.max(axis=1, keepdims=True), dict(x=(2, 3)),
     {'axis': '1', 'keepdims': 'True'}, [(2, 1)]),
    ('mean', lambda x, i: x.mean(axis=(0, 1)), dict(x=(2, 3)), {'axis': '(0, 1)'}, [(1,)]),
    ('min', lambda x, i: x.min(), dict(x=(2, 3)), {}, [(1,)]),
    ('nanprod', lambda x, i: x.nanprod(axis=0, keepdims=True), dict(x=(2, 3)),
     {'axis': '0', 'keepdims': 'True'}, [(1, 3)]),
    ('nansum', lambda x, i: x.nansum(), dict(x=(2, 3)), {}, [(1,)]),
    ('norm', lambda x, i: x.norm(ord=1, axis=1), dict(x=(2, 3)),
     {'axis': '1', 'ord': '1'}, [(2,)]),
    ('one_hot', lambda x, i: i.one_hot(4), dict(i=(2,)), {'depth': '4'}, [(2, 4)]),
    ('ones_like', lambda x, i: x.ones_like(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('pick', lambda x, i: x.pick(i, axis=1), dict(x=(2, 3), i=(2,)), {'axis': '1'}, [(2,)]),
    ('prod', lambda x, i: x.prod(axis=0), dict(x=(2, 3)), {'axis': '0'}, [(3,)]),
    ('radians', lambda x, i: x.radians(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('rcbrt', lambda x, i: x.rcbrt(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('reciprocal', lambda x, i: x.reciprocal(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('relu', lambda x, i: x.relu(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('repeat', lambda x, i: x.repeat(repeats=2, axis=0), dict(x=(2, 3)),
     {'axis': '0', 'repeats': '2'}, [(4, 3)]),
    ('reshape', lambda x, i: x.reshape((3, 2)), dict(x=(2, 3)), {'shape': '(3, 2)'}, [(3, 2)]),
    ('reshape_kw', lambda x, i: x.reshape(shape=(-1,)), dict(x=(2, 3)),
     {'shape': '(-1,)'}, [(6,)]),
    ('rint', lambda x, i: x.rint(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('round', lambda x, i: x.round(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('rsqrt', lambda x, i: x.rsqrt(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('sigmoid', lambda x, i: x.sigmoid(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('sign', lambda x, i: x.sign(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('sin', lambda x, i: x.sin(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('sinh', lambda x, i: x.sinh(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('slice', lambda x, i: x.slice(begin=(0, 1), end=(2, 3)), dict(x=(2, 3)),
     {'begin': '(0, 1)', 'end': '(2, 3)'}, [(2, 2)]),
    ('slice_axis', lambda x, i: x.slice_axis(axis=1, begin=0, end=2), dict(x=(2, 3)),
     {'axis': '1', 'begin': '0', 'end': '2'}, [(2, 2)]),
    ('slice_like', lambda x, i: x.slice_like(i, axes=(0,)), dict(x=(4, 3), i=(2, 3)),
     {'axes': '(0,)'}, [(2, 3)]),
    ('softmax', lambda x, i: x.softmax(axis=0), dict(x=(2, 3)), {'axis': '0'}, [(2, 3)]),
    ('sort', lambda x, i: x.sort(axis=0), dict(x=(2, 3)), {'axis': '0'}, [(2, 3)]),
    ('split', lambda x, i: x.split(num_outputs=3, axis=1), dict(x=(2, 3)),
     {'axis': '1', 'num_outputs': '3'}, [(2, 1), (2, 1), (2, 1)]),
    ('sqrt', lambda x, i: x.sqrt(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('square', lambda x, i: x.square(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('squeeze', lambda x, i: x.squeeze(), dict(x=(2, 1)), {'axis': 'None'}, [(2,)]),
    ('sum', lambda x, i: x.sum(axis=1), dict(x=(2, 3)), {'axis': '1'}, [(2,)]),
    ('sum_pos', lambda x, i: x.sum(1), dict(x=(2, 3)), {'axis': '1'}, [(2,)]),
    ('swapaxes', lambda x, i: x.swapaxes(dim1=0, dim2=1), dict(x=(2, 3)),
     {'dim1': '0', 'dim2': '1'}, [(3, 2)]),
    ('take', lambda x, i: x.take(i, axis=1), dict(x=(2, 3), i=(2,)), {'axis': '1'}, [(2, 2)]),
    ('take_pos', lambda x, i: x.take(i, 1), dict(x=(2, 3), i=(2,)), {'axis': '1'}, [(2, 2)]),
    ('tan', lambda x, i: x.tan(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('tanh', lambda x, i: x.tanh(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('tile', lambda x, i: x.tile(reps=(2, 1)), dict(x=(2, 3)), {'reps': '(2, 1)'}, [(4, 3)]),
    ('topk', lambda x, i: x.topk(k=2), dict(x=(2, 3)), {'k': '2'}, [(2, 2)]),
    ('transpose', lambda x, i: x.transpose(), dict(x=(2, 3)), {}, [(3, 2)]),
    ('transpose_axes', lambda x, i: x.transpose(axes=(1, 0)), dict(x=(2, 3)),
     {'axes': '(1, 0)'}, [(3, 2)]),
    ('trunc', lambda x, i: x.trunc(), dict(x=(2, 3)), {}, [(2, 3)]),
    ('zeros_like', lambda x, i: x.zeros_like(), dict(x=(2, 3)), {}, [(2, 3)]),]


@pytest.mark.parametrize("name, call, shapes, attrs, out_shapes", FLUENT,
                         ids=[c[0] for c in FLUENT])
def test_fluent_methods_match_mxnet(name, call, shapes, attrs, out_shapes):
    s = call(mx.sym.var('x'), mx.sym.var('i'))
    assert s.list_attr() == attrs
    assert s.infer_shape(**shapes)[1] == out_shapes


def test_fluent_method_computes_like_the_operator():
    x, i = mx.sym.var('x'), mx.sym.var('i')
    assert x.take(i, axis=1, name='t').name == 't'
    assert x.sum(name='s', lr_mult=2).list_attr() == {'__lr_mult__': '2', 'lr_mult': '2'}
    a = mx.nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    got = x.take(i, axis=1).eval(x=a, i=mx.nd.array([2, 0]))[0].asnumpy()
    np.testing.assert_array_equal(got, [[3.0, 1.0], [6.0, 4.0]])  # NumPy: a[:, [2, 0]]
    np.testing.assert_allclose(x.norm(ord=1, axis=1).eval(x=a)[0].asnumpy(), [6.0, 15.0])


def test_symbol_methods_mxnet_has():
    # measured with MXNet 1.9.1
    x = mx.sym.var('x')
    assert x.infer_type_partial() == ([None], [None], [])
    y = mx.sym.var('y')
    assert (x + y).infer_type_partial(x='float64') == ([np.float64, np.float64], [np.float64],
                                                       [])
    assert (mx.sym.relu(x, name='r') + y).infer_type_partial() == ([None, None], [None], [])
    assert x.as_nd_ndarray() is x
    text = mx.sym.FullyConnected(x, num_hidden=2, name='fc').debug_str()
    assert text == ("Symbol Outputs:\n\toutput[0]=fc(0)\nVariable:x\nVariable:fc_weight\n"
                    "Variable:fc_bias\n--------------------\nOp:FullyConnected, Name=fc\n"
                    "Inputs:\n\targ[0]=x(0) version=0\n\targ[1]=fc_weight(0) version=0\n"
                    "\targ[2]=fc_bias(0) version=0\nAttrs:\n\tnum_hidden=2\n")


# ---------------------------------------------------------------------- gradient storage types
def _grad_stype(sym, **shapes):
    req = {n: ('write' if n == 'w' else 'null') for n in sym.list_arguments()}
    with mx.config.storage_fallback('silent'):
        exe = sym.simple_bind(mx.cpu(), grad_req=req, **shapes)
    return exe.arg_dict['w'].stype, exe.grad_dict['w'].stype


def _cases():
    x = mx.sym.var('x', stype='csr')
    w, wr = mx.sym.var('w'), mx.sym.var('w', stype='row_sparse')
    d, i = mx.sym.var('x'), mx.sym.var('i')
    # (label, symbol, shapes, (arg stype, grad stype)): measured with MXNet 1.9.1
    return [
        ('dot csr dns', mx.sym.dot(x, w), dict(x=(2, 3), w=(3, 1)), ('default', 'row_sparse')),
        ('dot csrT dns', mx.sym.dot(x, w, transpose_a=True), dict(x=(3, 2), w=(3, 1)),
         ('default', 'default')),
        ('dot csr rsp', mx.sym.dot(x, wr), dict(x=(2, 3), w=(3, 1)),
         ('row_sparse', 'row_sparse')),
        ('dot csrT rsp', mx.sym.dot(x, wr, transpose_a=True), dict(x=(3, 2), w=(3, 1)),
         ('row_sparse', 'default')),
        ('sparse.dot csr dns', mx.sym.sparse.dot(x, w), dict(x=(2, 3), w=(3, 1)),
         ('default', 'row_sparse')),
        ('dot dns dns', mx.sym.dot(d, w), dict(x=(2, 3), w=(3, 1)), ('default', 'default')),
        ('dot csr dns transpose_b', mx.sym.dot(x, w, transpose_b=True), dict(x=(2, 3), w=(1, 3)),
         ('default', 'default')),
        ('rsp*2', wr * 2, dict(w=(3, 1)), ('row_sparse', 'row_sparse')),
        ('rsp+rsp', wr + wr, dict(w=(3, 1)), ('row_sparse', 'row_sparse')),
        ('sum(rsp)', mx.sym.sum(wr), dict(w=(3, 1)), ('row_sparse', 'default')),
        ('relu(rsp)', mx.sym.relu(wr), dict(w=(3, 1)), ('row_sparse', 'row_sparse')),
        ('square(rsp)', mx.sym.square(wr), dict(w=(3, 1)), ('row_sparse', 'row_sparse')),
        ('sqrt(rsp)', mx.sym.sqrt(wr), dict(w=(3, 1)), ('row_sparse', 'default')),
        ('tanh(rsp)', mx.sym.tanh(wr), dict(w=(3, 1)), ('row_sparse', 'default')),
        ('negative(rsp)', mx.sym.negative(wr), dict(w=(3, 1)), ('row_sparse', 'row_sparse')),
        ('rsp/2', wr / 2, dict(w=(3, 1)), ('row_sparse', 'row_sparse')),
        ('clip(rsp)', mx.sym.clip(wr, a_min=-1, a_max=1), dict(w=(3, 1)),
         ('row_sparse', 'default')),
        ('elemwise_mul(rsp, dns)', mx.sym.elemwise_mul(wr, d), dict(w=(3, 1), x=(3, 1)),
         ('row_sparse', 'default')),
        ('elemwise_mul(rsp, rsp)', mx.sym.elemwise_mul(wr, wr), dict(w=(3, 1)),
         ('row_sparse', 'default')),
        ('add_n(rsp, rsp)', mx.sym.add_n(wr, mx.sym.var('x', stype='row_sparse')),
         dict(w=(3, 1), x=(3, 1)), ('row_sparse', 'row_sparse')),
        ('FullyConnected(csr, dns)', mx.sym.FullyConnected(x, w, num_hidden=1, no_bias=True),
         dict(x=(2, 3), w=(1, 3)), ('default', 'default')),
        ('FullyConnected(csr, rsp)', mx.sym.FullyConnected(x, wr, num_hidden=1, no_bias=True),
         dict(x=(2, 3), w=(1, 3)), ('row_sparse', 'default')),
        ('dot + LinearRegressionOutput', mx.sym.LinearRegressionOutput(mx.sym.dot(x, w)),
         dict(x=(2, 3), w=(3, 1)), ('default', 'row_sparse')),
        ('dot(x, w) + sum(w)', mx.sym.broadcast_add(mx.sym.dot(x, w), mx.sym.sum(w)),
         dict(x=(2, 3), w=(3, 1)), ('default', 'default')),
        ('two dot uses', mx.sym.dot(x, w) + mx.sym.dot(x, w), dict(x=(2, 3), w=(3, 1)),
         ('default', 'row_sparse')),
        ('take', mx.sym.take(w, i), dict(i=(2,), w=(3, 1)), ('default', 'default')),
        ('cast_storage to rsp', mx.sym.cast_storage(w, stype='row_sparse'), dict(w=(3, 1)),
         ('default', 'row_sparse')),
        ('cast_storage to dns', mx.sym.cast_storage(wr, stype='default'), dict(w=(3, 1)),
         ('row_sparse', 'default')),
        ('rsp output', wr, dict(w=(3, 1)), ('row_sparse', 'row_sparse')),
        ('dns output', w, dict(w=(3, 1)), ('default', 'default')),
        ('Embedding sparse_grad + dot',
         mx.sym.Embedding(i, w, input_dim=3, output_dim=1, sparse_grad=True)
         + mx.sym.dot(mx.sym.var('x2', stype='csr'), w), dict(i=(2,), x2=(2, 3), w=(3, 1)),
         ('default', 'row_sparse')),
        ('SparseEmbedding dns weight', mx.sym.contrib.SparseEmbedding(i, w, input_dim=3,
                                                                      output_dim=1),
         dict(i=(2,), w=(3, 1)), ('default', 'row_sparse')),
    ]


def test_simple_bind_gradient_storage_types_follow_mxnet():
    for label, sym, shapes, expected in _cases():
        assert _grad_stype(sym, **shapes) == expected, label


@pytest.mark.parametrize("w_stype", [None, 'row_sparse', 'default'])
@pytest.mark.parametrize("sparse_grad", [True, False])
def test_embedding_gradient_storage_type_follows_sparse_grad(w_stype, sparse_grad):
    # measured with MXNet 1.9.1: the weight's stype as declared (default when not), the
    # gradient's row_sparse exactly when sparse_grad
    w = mx.sym.var('weight', stype=w_stype) if w_stype else mx.sym.var('weight')
    e = mx.sym.Embedding(mx.sym.var('data'), w, input_dim=5, output_dim=2,
                         sparse_grad=sparse_grad, name='emb')
    exe = e.simple_bind(mx.cpu(), data=(3,), grad_req={'weight': 'write', 'data': 'null'})
    assert exe.arg_dict['weight'].stype == (w_stype or 'default')
    assert exe.grad_dict['weight'].stype == ('row_sparse' if sparse_grad else 'default')


def test_embedding_sparse_grad_values_through_simple_bind():
    # measured with MXNet 1.9.1 (grad_req 'write' and 'add' both give a row_sparse buffer)
    e = mx.sym.Embedding(mx.sym.var('data'), input_dim=5, output_dim=2, sparse_grad=True,
                         name='emb')
    for req in ('write', 'add'):
        exe = e.simple_bind(mx.cpu(), data=(3,), grad_req={'emb_weight': req, 'data': 'null'})
        assert exe.grad_dict['emb_weight'].stype == 'row_sparse'
    exe.arg_dict['emb_weight'][:] = mx.nd.arange(10).reshape((5, 2))
    exe.arg_dict['data'][:] = mx.nd.array([1, 3, 1])
    out = exe.forward(is_train=True)[0]
    np.testing.assert_array_equal(out.asnumpy(), [[2, 3], [6, 7], [2, 3]])
    exe.backward(mx.nd.ones((3, 2)))
    g = exe.grad_dict['emb_weight']
    np.testing.assert_array_equal(g.indices.asnumpy(), [1, 3])
    np.testing.assert_array_equal(g.data.asnumpy(), [[2, 2], [1, 1]])


# ---------------------------------------------------------------------- SparseEmbedding
def test_sparse_embedding_symbol():
    # measured with MXNet 1.9.1
    d, w = mx.sym.var('data'), mx.sym.var('weight', stype='row_sparse')
    se = mx.sym.contrib.SparseEmbedding(d, w, input_dim=5, output_dim=2, name='se')
    assert se.list_arguments() == ['data', 'weight']
    assert se.list_attr() == {'output_dim': '2', 'input_dim': '5'}
    assert json.loads(se.tojson())['nodes'][-1]['op'] == '_contrib_SparseEmbedding'
    assert mx.sym.contrib.SparseEmbedding(d, input_dim=5, output_dim=2).name == \
        'sparseembedding0'
    exe = se.simple_bind(mx.cpu(), data=(3,), grad_req={'weight': 'write', 'data': 'null'})
    assert (exe.arg_dict['weight'].stype, exe.grad_dict['weight'].stype) == \
        ('row_sparse', 'row_sparse')
    exe.arg_dict['weight'][:] = mx.nd.arange(10).reshape((5, 2)).tostype('row_sparse')
    exe.arg_dict['data'][:] = mx.nd.array([1, 3, 1])
    np.testing.assert_array_equal(exe.forward(is_train=True)[0].asnumpy(),
                                  [[2, 3], [6, 7], [2, 3]])
    exe.backward(mx.nd.ones((3, 2)))
    g = exe.grad_dict['weight']
    assert g.stype == 'row_sparse'
    np.testing.assert_array_equal(g.indices.asnumpy(), [1, 3])
    np.testing.assert_array_equal(g.data.asnumpy(), [[2, 2], [1, 1]])
    se2 = mx.sym.contrib.SparseEmbedding(d, input_dim=5, output_dim=2, name='se2')
    exe = se2.simple_bind(mx.cpu(), data=(3,), grad_req={'se2_weight': 'write', 'data': 'null'})
    assert (exe.arg_dict['se2_weight'].stype, exe.grad_dict['se2_weight'].stype) == \
        ('default', 'row_sparse')


def test_sparse_embedding_ndarray():
    # measured with MXNet 1.9.1 (rows a row_sparse weight does not store read as zeros)
    ids = mx.nd.array([1, 3, 1])
    w = mx.nd.arange(10).reshape((5, 2))
    for weight in (w, w.tostype('row_sparse')):
        out = mx.nd.contrib.SparseEmbedding(ids, weight, input_dim=5, output_dim=2)
        np.testing.assert_array_equal(out.asnumpy(), [[2, 3], [6, 7], [2, 3]])
    part = mx.nd.sparse.row_sparse_array(([[1.0, 2.0]], [3]), shape=(5, 2))
    out = mx.nd.contrib.SparseEmbedding(mx.nd.array([3, 1]), part, input_dim=5, output_dim=2)
    np.testing.assert_array_equal(out.asnumpy(), [[1, 2], [0, 0]])
    with pytest.raises(IndexError, match="out of range"):
        mx.nd.contrib.SparseEmbedding(mx.nd.array([7]), w, input_dim=5, output_dim=2)
    rsp = w.tostype('row_sparse')
    rsp.attach_grad(stype='row_sparse')
    with mx.autograd.record():
        y = mx.nd.contrib.SparseEmbedding(ids, rsp, input_dim=5, output_dim=2)
    y.backward()
    assert rsp.grad.stype == 'row_sparse'
    np.testing.assert_array_equal(rsp.grad.indices.asnumpy(), [1, 3])
    np.testing.assert_array_equal(rsp.grad.data.asnumpy(), [[2, 2], [1, 1]])


def test_sparse_embedding_dense_gradient_buffer():
    # MXNet 1.9.1 raises "Operator not implemented: _backward_SparseEmbedding" for a dense
    # gradient buffer; sparsenet writes the gradient densely (hand-computed: rows 1 and 3
    # receive 2 and 1 ones)
    w = mx.nd.arange(10).reshape((5, 2))
    w.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.SparseEmbedding(mx.nd.array([1, 3, 1]), w, input_dim=5, output_dim=2)
    y.backward()
    assert w.grad.stype == 'default'
    np.testing.assert_array_equal(w.grad.asnumpy(), [[0, 0], [2, 2], [0, 0], [1, 1], [0, 0]])


# ---------------------------------------------------------------------- recorded graph
def _recorded(op, *inputs, **params):
    return op(*inputs, **params)  # the registry tags every recorded call


def test_symbol_of_recorded_rebuilds_the_graph():
    # the structure MXNet 1.9.1's autograd.get_symbol gave for the same computation:
    # arguments var0, var1; one node per operator; explicit parameters kept
    x = mx.nd.array([1.0, 2.0])
    w = mx.nd.array([3.0, 4.0])
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        y = _recorded(mx.nd.elemwise_mul, x, w)
        z = _recorded(mx.nd.plus_scalar, y, scalar=1.0)
        r = _recorded(mx.nd.relu, z)
        q = _recorded(mx.nd.sum, _recorded(mx.nd.mul_scalar, r, scalar=2.0))
    s = mx.autograd.get_symbol(q)
    assert s.list_arguments() == ['var0', 'var1']
    assert s.get_internals().list_outputs() == ['var0', 'var1', 'node_0_output',
                                                'node_1_output', 'node_2_output',
                                                'node_3_output', 'node_4_output']
    nodes = json.loads(s.tojson())['nodes']
    assert [n['op'] for n in nodes] == ['null', 'null', 'elemwise_mul', '_plus_scalar', 'relu',
                                        '_mul_scalar', 'sum']
    assert nodes[3]['attrs'] == {'scalar': '1.0'} and 'attrs' not in nodes[6]
    # NumPy: sum(2 * relu(x * w + 1)) = 2 * (4 + 9) = 26, as MXNet's eval gave
    np.testing.assert_allclose(s.eval(var0=x, var1=w)[0].asnumpy(), [26.0])


def test_symbol_of_recorded_constants_and_errors():
    # MXNet 1.9.1: an input outside the graph becomes a variable named null<k>
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    c = mx.nd.array([5.0, 6.0])
    with mx.autograd.record():
        y = _recorded(mx.nd.elemwise_mul, x, c)
    s = symbol_of_recorded(y)
    assert s.list_arguments() == ['var0', 'null0']
    np.testing.assert_allclose(s.eval(var0=x, null0=c)[0].asnumpy(), [5.0, 12.0])
    # measured with MXNet 1.9.1: MXNetError "NDArray is not part of a computation graph. Did
    # you forget to turn on recording?"
    with pytest.raises(mx.MXNetError, match="not part of a computation graph"):
        symbol_of_recorded(mx.nd.ones((2,)))
    with pytest.raises(mx.MXNetError, match="not part of a computation graph"):
        symbol_of_recorded(x)


def test_symbol_of_recorded_shared_subexpression_and_deep_chain():
    x = mx.nd.array([0.5])
    x.attach_grad()
    with mx.autograd.record():
        y = _recorded(mx.nd.relu, x)
        z = _recorded(mx.nd.elemwise_add, y, y)
        for _ in range(1500):  # deeper than Python's recursion limit
            z = _recorded(mx.nd.negative, z)
    s = symbol_of_recorded(z)
    assert s.list_arguments() == ['var0']
    assert len(s.get_internals().list_outputs()) == 1 + 2 + 1500
    np.testing.assert_allclose(s.eval(var0=x)[0].asnumpy(), [1.0])  # 1500 negations: +(2x)


def test_get_symbol_of_python_operators_and_sparse_inputs():
    # the hook in the registry tags calls made through Python operators too
    x = mx.nd.array([[1.0, 0.0], [0.0, 2.0]])
    x.attach_grad()
    c = mx.nd.array([[0.0, 3.0], [0.0, 0.0]]).tostype('csr')
    with mx.autograd.record():
        y = mx.nd.dot(c, x * 2)
    s = mx.autograd.get_symbol(y)
    assert [n['op'] for n in json.loads(s.tojson())['nodes']
            if n['op'] != 'null'] == ['_mul_scalar', 'dot']
    # NumPy: [[0, 3], [0, 0]] @ (2 x) = [[0, 12], [0, 0]]
    assert s.list_arguments() == ['null0', 'var0']  # MXNet 1.9.1: constant first, as met
    np.testing.assert_allclose(s.eval(null0=c, var0=x)[0].asnumpy(), [[0, 12], [0, 0]])
