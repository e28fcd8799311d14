"""Issue 19: random byte mutations and truncations of valid files make the loaders raise only
their documented error (FileFormatError for arrays, LibSVMFormatError for LibSVM text),
naming the file."""
import os

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import sparsenet as mx
from sparsenet.base import FileFormatError, ParameterAssertionError
from sparsenet.io.libsvm.errors import LibSVMFormatError

ARRAYS = {'w': mx.nd.sparse.csr_matrix(([1.0, 2.0], [0, 2], [0, 1, 2]), shape=(2, 3)),
          'b': mx.nd.ones((3,)), 'r': mx.nd.ones((4, 2)).tostype('row_sparse')}


def _mutate(data, patch, at, cut):
    at %= len(data)
    out = data[:at] + patch + data[at + len(patch):]
    return out[:cut % len(out)] if cut % 4 == 0 else out


@pytest.mark.parametrize("fmt", ["mxnet", "sparsenet"])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(patch=st.binary(min_size=1, max_size=8), at=st.integers(0, 10**6),
       cut=st.integers(0, 10**6))
def test_nd_load_of_mutated_files(tmp_path, fmt, patch, at, cut):
    good = tmp_path / f"good-{fmt}.params"
    if not good.exists():
        mx.nd.save(str(good), ARRAYS, format=fmt)
    path = tmp_path / "m.params"
    path.write_bytes(_mutate(good.read_bytes(), patch, at, cut))
    try:
        out = mx.nd.load(str(path))
    except FileFormatError as e:
        assert str(path) in str(e)
        return
    for v in (out.values() if isinstance(out, dict) else out):  # what loads is valid
        if v.stype == 'default':
            v.asnumpy()  # its values are in the file
        else:
            v.check_format()  # (a sparse array may legitimately have a huge shape)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(patch=st.binary(min_size=1, max_size=4), at=st.integers(0, 10**6),
       cut=st.integers(0, 10**6))
def test_load_libsvm_of_mutated_text(tmp_path, patch, at, cut):
    text = b"1 0:1.5 3:2\n0 1:-1 2:0.25\n1 4:3e2\n"
    path = tmp_path / "m.libsvm"
    path.write_bytes(_mutate(text, patch, at, cut))
    try:
        mx.io.load_libsvm(str(path))
    except LibSVMFormatError as e:
        assert os.fspath(path) in str(e)


# ---------------------------------------------------------------------- models and states
def _small_net():
    net = mx.gluon.nn.Sequential()
    net.add(mx.gluon.nn.Dense(3, in_units=4), mx.gluon.nn.Dense(2, in_units=3))
    net.initialize()
    return net


def _trained(tmp_path):
    """A network, its Trainer (Adam, one step taken) and their files, written once."""
    net = _small_net()
    trainer = mx.gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.1})
    params, states = tmp_path / "good.params", tmp_path / "good.states"
    if not params.exists():
        with mx.autograd.record():
            loss = net(mx.nd.ones((2, 4))).sum()
        loss.backward()
        trainer.step(2)
        net.save_parameters(str(params))
        trainer.save_states(str(states))
    return net, trainer, params, states


FEW = dict(max_examples=60, deadline=None,
           suppress_health_check=[HealthCheck.function_scoped_fixture])
MUTATION = dict(patch=st.binary(min_size=1, max_size=8), at=st.integers(0, 10**6),
                cut=st.integers(0, 10**6))


@settings(**FEW)
@given(**MUTATION)
def test_load_parameters_of_mutated_files(tmp_path, patch, at, cut):
    net, _, good, _ = _trained(tmp_path)
    path = tmp_path / "m.params"
    path.write_bytes(_mutate(good.read_bytes(), patch, at, cut))
    try:
        net.load_parameters(str(path))
    except (FileFormatError, ParameterAssertionError) as e:  # a renamed or reshaped parameter
        assert str(path) in str(e)


@settings(**FEW)
@given(**MUTATION)
def test_trainer_load_states_of_mutated_files(tmp_path, patch, at, cut):
    _, trainer, _, good = _trained(tmp_path)
    path = tmp_path / "m.states"
    path.write_bytes(_mutate(good.read_bytes(), patch, at, cut))
    try:
        trainer.load_states(str(path))
    except FileFormatError as e:
        assert str(path) in str(e)
        assert "weights_only=False" not in str(e) and "weights_only` set to `False" not in str(e)


def _checkpoint(tmp_path):
    prefix = tmp_path / "good"
    if not (tmp_path / "good-symbol.json").exists():
        sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
        mod = mx.mod.Module(sym, label_names=None)
        mod.bind(data_shapes=[("data", (2, 4))])
        mod.init_params()
        mod.save_checkpoint(str(prefix), 1)
    return {"symbol.json": (tmp_path / "good-symbol.json").read_bytes(),
            "0001.params": (tmp_path / "good-0001.params").read_bytes()}


@settings(**FEW)
@given(part=st.sampled_from(["symbol.json", "0001.params"]), **MUTATION)
def test_load_checkpoint_of_mutated_files(tmp_path, part, patch, at, cut):
    files = _checkpoint(tmp_path)
    for name, data in files.items():
        (tmp_path / f"m-{name}").write_bytes(_mutate(data, patch, at, cut) if name == part
                                             else data)
    mutated = str(tmp_path / f"m-{part}")
    try:
        mx.model.load_checkpoint(str(tmp_path / "m"), 1)
    except FileFormatError as e:
        assert mutated in str(e)
    except mx.MXNetError as e:  # the symbol error (MXNetError) names the file
        assert part == "symbol.json" and mutated in str(e)


@pytest.mark.parametrize("cache_bytes", [None, 0])  # cached part, streamed part
@settings(**FEW)
@given(patch=st.binary(min_size=1, max_size=4), at=st.integers(0, 10**6),
       cut=st.integers(0, 10**6))
def test_libsvm_iter_of_mutated_text(tmp_path, cache_bytes, patch, at, cut):
    text = b"1 0:1.5 3:2\n0 1:-1 2:0.25\n1 4:3e2\n0 0:1 4:1\n"
    path = tmp_path / "m.libsvm"
    path.write_bytes(_mutate(text, patch, at, cut))
    try:
        it = mx.io.LibSVMIter(data_libsvm=str(path), data_shape=(5,), batch_size=2,
                              cache_bytes=cache_bytes)
        for batch in it:
            batch.data[0].check_format()
    except LibSVMFormatError as e:
        assert os.fspath(path) in str(e)


@pytest.mark.parametrize("blob", [b"not a dict", {0: "text"}, {b"k": None}, [1, 2], (1, 2)])
def test_trainer_load_states_of_another_shape_names_the_file(tmp_path, blob):
    # found by the mutation test above: a mutated file that unpickles to bytes (allowed by
    # the allow-list) raised AttributeError from Updater.set_states
    import pickle
    _, trainer, _, _ = _trained(tmp_path)
    path = tmp_path / "odd.states"
    path.write_bytes(pickle.dumps(blob))
    with pytest.raises(FileFormatError, match=r"odd\.states: not an optimizer-states file"):
        trainer.load_states(str(path))
