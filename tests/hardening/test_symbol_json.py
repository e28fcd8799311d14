"""Issue 19, item 5 (symbols): a crafted symbol JSON raises the documented symbol error
(``MXNetError``) naming the node, at load time, never a bare Python error."""
import json

import pytest
from hypothesis import given, settings, strategies as st

import sparsenet as mx

GOOD = json.loads(mx.sym.relu(mx.sym.var('x', shape=(2, 3)), name='r').tojson())


def _mutated(change):
    doc = json.loads(json.dumps(GOOD))
    change(doc)
    return json.dumps(doc)


CASES = {
    "deeply nested": ("[" * 100000 + "]" * 100000, "not a symbol JSON document"),
    "dict as a name": (_mutated(lambda d: d['nodes'][0].__setitem__('name', {'a': 1})),
                       "must be strings"),
    "negative input": (_mutated(lambda d: d['nodes'][1].__setitem__('inputs', [[-1, 0, 0]])),
                       "refers to node -1"),
    "output out of range": (_mutated(lambda d: d['nodes'][1].__setitem__('inputs',
                                                                         [[0, 5, 0]])),
                            "asks for output 5 of node 'x'"),
    "head out of range": (_mutated(lambda d: d.__setitem__('heads', [[1, 3, 0]])),
                          "asks for output 3 of node 'r'"),
    "negative head": (_mutated(lambda d: d.__setitem__('heads', [[-1, 0, 0]])),
                      "refers to node -1"),
    "bad dtype code": (_mutated(lambda d: d['nodes'][0]['attrs'].__setitem__('__dtype__', '99')),
                       "variable 'x': __dtype__ '99'"),
    "bad stype code": (_mutated(lambda d: d['nodes'][0]['attrs'].__setitem__(
        '__storage_type__', 'x')), "variable 'x': __storage_type__ 'x'"),
    "nested shape": (_mutated(lambda d: d['nodes'][0]['attrs'].__setitem__(
        '__shape__', '(' * 100000)), "variable 'x': __shape__"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_crafted_symbol_json_is_a_symbol_error_at_load(name):
    text, where = CASES[name]
    with pytest.raises(mx.MXNetError, match=where):
        mx.sym.load_json(text)


def test_the_untouched_document_loads():
    assert mx.sym.load_json(json.dumps(GOOD)).infer_shape()[1] == [(2, 3)]


@settings(max_examples=150, deadline=None)
@given(st.binary(min_size=1, max_size=8), st.integers(0, 400))
def test_byte_mutations_raise_only_the_symbol_error(patch, at):
    text = json.dumps(GOOD).encode()
    at = at % len(text)
    mutated = text[:at] + patch + text[at + len(patch):]
    try:
        sym = mx.sym.load_json(mutated.decode("utf-8", errors="replace"))
        sym.infer_shape_partial()
    except mx.MXNetError:
        pass
