"""The operator registry: declaring ops, typed params from values and strings,
generated functions, shape/type inference."""
import inspect
import re
from typing import Literal

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import (MXNetError, parse_bool, parse_shape, parse_axis, parse_float,
                         parse_int, format_attr)
from mxlite.operator import register_op, Param, get_op, list_ops
from mxlite.operator.registry import OPS


@pytest.mark.smoke
@pytest.mark.parametrize("parse, text, value", [
    (parse_bool, "True", True), (parse_bool, "false", False), (parse_bool, "1", True),
    (parse_int, "3", 3), (parse_int, 4.0, 4), (parse_float, "0.1", 0.1), (parse_float, 2, 2.0),
    (parse_shape, "(3, 3)", (3, 3)), (parse_shape, "[2]", (2,)), (parse_shape, 5, (5,)),
    (parse_shape, "()", ()), (parse_axis, "None", None), (parse_axis, "(0, 2)", (0, 2)),
    (parse_axis, "-1", -1), (parse_axis, [1, 2], (1, 2)),
])
def test_attribute_parsers(parse, text, value):
    assert parse(text) == value


@pytest.mark.parametrize("parse, bad", [(parse_bool, "maybe"), (parse_int, "1.5"),
                                        (parse_float, "abc"), (parse_shape, "(1, x)")])
def test_attribute_parsers_reject(parse, bad):
    with pytest.raises(ValueError):
        parse(bad)


def test_format_attr_round_trips():
    for v in [True, False, 3, 0.5, (3, 3), (2,), "relu"]:
        assert format_attr(v) in (str(v), "True", "False", "(2,)", "(3, 3)")
    assert parse_shape(format_attr((2,))) == (2,)
    assert parse_bool(format_attr(True)) is True


@pytest.mark.smoke
def test_user_declared_op_gets_function_gradient_and_higher_order():
    def compute(p, xp, x):
        return p.scale * x * x * x

    def gradient(p, x, y, gy, need):
        return [gy[0] * 3 * p.scale * x[0] * x[0]]

    register_op("_test_scaled_cube", compute, gradient=gradient,
                params=[Param("scale", parse_float, 1.0, "Multiplier.")],
                doc="scale * x**3 (a test op).")
    assert "_test_scaled_cube" in list_ops()
    fn = mx.nd._internal._test_scaled_cube
    assert "scale" in inspect.signature(fn).parameters
    assert "Multiplier." in fn.__doc__
    x = mx.nd.array([1.0, 2.0], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = fn(x, scale="2")            # string params parse as in symbol JSON
        g = mx.autograd.grad(y.sum(), [x], create_graph=True)[0]
        z = g.sum()
    z.backward()
    np.testing.assert_allclose(y.asnumpy(), [2, 16])
    np.testing.assert_allclose(g.asnumpy(), [6, 24])
    np.testing.assert_allclose(x.grad.asnumpy(), [12, 24])     # d/dx 6x^2


def test_public_op_name_appears_in_nd():
    register_op("test_public_double", lambda p, xp, x: x * 2,
                gradient=lambda p, x, y, gy, need: [gy[0] * 2], saves="")
    assert mx.nd.test_public_double(mx.nd.array([3])).asnumpy().tolist() == [6]


def test_get_op_suggests_names():
    with pytest.raises(MXNetError, match="did you mean"):
        get_op("broadcast_ad")
    assert get_op("elemwise_add") is get_op("_plus")


def test_errors_name_the_op_and_argument():
    with pytest.raises(TypeError, match="clip: missing required"):
        mx.nd.clip(mx.nd.ones((2,)))
    with pytest.raises(ValueError, match="Cast: invalid value 'nope' for argument 'dtype'"):
        mx.nd.Cast(mx.nd.ones((2,)), dtype="nope")


def test_compute_errors_are_prefixed_with_op_name():
    def compute(p, xp, x):
        raise ValueError("bad thing")

    register_op("_test_raises", compute)
    with pytest.raises(MXNetError, match="^_test_raises: bad thing"):
        mx.nd._internal._test_raises(mx.nd.ones((1,)))


def test_infer_shape_and_type_defaults():
    op = get_op("broadcast_add")
    p = op.parse_params({})
    shapes, outs = op.infer_shape(p, [(2, 1, 4), (3, 1)])
    assert outs == [(2, 3, 4)]
    assert op.infer_type(p, [np.dtype("float16"), np.dtype("float16")]) == [np.dtype("float16")]
    shapes, outs = op.infer_shape(p, [(2, 3), None])
    assert outs is None


def test_infer_shape_from_dummy_inputs_raises_no_numpy_warning():
    # Shapes come from running the kernel on zeros (0/0 here): only shapes are read, so
    # NumPy's floating-point warnings (errors in this suite) must stay quiet.
    op = get_op("broadcast_div")
    assert op.infer_shape(op.parse_params({}), [(2, 3, 4), (2, 1, 4)])[1] == [(2, 3, 4)]


def test_params_are_cached_and_immutable():
    op = get_op("clip")
    p1 = op.parse_params({"a_min": 0, "a_max": 1})
    p2 = op.parse_params({"a_min": 0, "a_max": 1})
    assert p1 is p2
    with pytest.raises(AttributeError):
        p1.a_min = 5
    assert p1.to_attrs() == {"a_min": "0.0", "a_max": "1.0"}


# -- choices and ranges in the param schema ---------------------------------------------

_RELUX = ("Activation: act_type must be one of relu, sigmoid, tanh, softrelu, softsign, "
          "log_sigmoid, mish; got 'relux'")


def test_choices_are_checked_at_the_edge_in_nd_sym_and_json():
    x = mx.nd.ones((2,))
    with pytest.raises(mx.MXNetError, match=re.escape(_RELUX)):
        mx.nd.Activation(x, act_type="relux")
    with pytest.raises(ValueError, match=re.escape(_RELUX)):      # also a ValueError
        mx.sym.Activation(mx.sym.var("x"), act_type="relux")
    good = mx.sym.Activation(mx.sym.var("x"), act_type="relu", name="act").tojson()
    with pytest.raises(mx.MXNetError, match="node 'act'.*" + re.escape(_RELUX)):
        mx.sym.load_json(good.replace('"relu"', '"relux"'))


def test_choices_feed_the_signature_and_the_docstring():
    sig = inspect.signature(mx.nd.Pooling)
    assert sig.parameters["pool_type"].annotation == Literal["max", "avg", "sum", "lp"]
    assert "pool_type : {'max', 'avg', 'sum', 'lp'}, optional, default 'max'" in \
        mx.nd.Pooling.__doc__
    assert "stride : tuple of int (each >= 1)" in mx.sym.Convolution.__doc__


@pytest.mark.parametrize("call,msg", [
    (lambda x: mx.nd.Pooling(x, kernel=(2, 2), stride=(-1, -1)),
     "Pooling: stride must be >= 1; got (-1, -1)"),
    (lambda x: mx.nd.Deconvolution(x, mx.nd.ones((2, 1, 3, 3)), kernel=(3, 3), num_filter=1,
                                   pad=(-2, -2)),
     "Deconvolution: pad must be >= 0; got (-2, -2)"),
    (lambda x: mx.nd.Convolution(x, mx.nd.ones((1, 2, 1, 1)), kernel=(1, 1), num_filter=0,
                                 no_bias=True),
     "Convolution: num_filter must be >= 1; got 0"),
    (lambda x: mx.nd.contrib.arange_like(x, repeat=-3),
     "_contrib_arange_like: repeat must be >= 1; got -3"),
    (lambda x: mx.nd.UpSampling(x, scale=2, multi_input_mode="foo"),
     "UpSampling: multi_input_mode must be one of concat, sum; got 'foo'"),
    (lambda x: mx.nd.Dropout(x, p=1.5), "Dropout: p must be <= 1.0; got 1.5"),
    (lambda x: mx.nd.RNN(x, mx.nd.ones((4,)), mx.nd.ones((1, 1, 2)), state_size=2,
                         num_layers=0, mode="lstm"),
     "RNN: num_layers must be >= 1; got 0"),
    (lambda x: mx.nd.slice_axis(x, axis=3, begin=0, end=7),
     "slice_axis: begin=0, end=7 out of range for axis 3 of size 4"),
    (lambda x: mx.nd.Pooling(x, kernel=(2, 2), layout="NHWC"),
     "Pooling: layout='NHWC' is not supported for 4-D data"),
    (lambda x: mx.nd.add_n(x, x, num_args="two"),
     "add_n: invalid value 'two' for argument 'num_args'"),
    (lambda x: mx.nd.Concat(x, x, num_args="a", dim=0),
     "Concat: invalid value 'a' for argument 'num_args'"),
])
def test_params_mxnet_rejects_are_rejected(call, msg):
    x = mx.nd.ones((1, 2, 4, 4))
    with pytest.raises(mx.MXNetError, match=re.escape(msg)):
        call(x)


def test_variadic_count_must_match_the_inputs():
    x = mx.nd.ones((2,))
    with pytest.raises(ValueError, match=re.escape("add_n: num_args=3 but 2 inputs were given")):
        mx.nd.add_n(x, x, num_args=3)
    assert mx.nd.add_n(x, x, num_args="2").asnumpy().tolist() == [2.0, 2.0]


def test_every_string_param_declares_its_choices():
    """A string param is an enumeration with ``choices`` unless its value is free text."""
    free_text = {("Custom", "op_type"), ("_contrib_SyncBatchNorm", "key"),
                 ("_contrib_arange_like", "ctx"), ("_npi_einsum", "subscripts")}
    loose = []
    for op in {id(op): op for op in OPS.values()}.values():
        for prm in op.params.values():
            if prm.choices is None and prm.parse.__name__ in ("parse_str", "optional_parse_str"):
                if (op.name, prm.name) not in free_text:
                    loose.append("%s.%s" % (op.name, prm.name))
    assert not loose, "string params without choices: %s" % ", ".join(sorted(loose))


def test_declared_rank_rules_run_before_the_kernel():
    with pytest.raises(MXNetError, match=r"^LRN: data expected at least 3 dims, got shape "
                                         r"\(3,\)$"):
        mx.nd.LRN(mx.nd.ones((3,)), nsize=3)
    with pytest.raises(MXNetError, match=r"^UpSampling: arg0 expected 4 dims, got shape "
                                         r"\(2, 3\)$"):
        mx.nd.UpSampling(mx.nd.ones((2, 3)), scale=2)
    with pytest.raises(MXNetError, match=r"^_split_v2: give indices .* or sections > 0"):
        mx.nd._internal._split_v2(mx.nd.ones((2, 3)))


def test_dtype_rules_remember_passing_dtypes_only():
    # run_step admits a dtype a rule has seen pass without calling the rule again; any
    # other dtype still meets the rule, first input or second, before or after.
    from mxlite.operator.registry import dtypes
    op = register_op("_test_numeric_add", lambda p, xp, a, b: a + b, inputs=("lhs", "rhs"),
                     check=dtypes(inputs="fiu"))
    f = mx.nd.ones((2,))
    i = mx.nd.ones((2,), dtype="int32")
    b = mx.nd.array(np.array([True, False]), dtype="bool")
    for _ in range(2):
        assert mx.nd._internal._test_numeric_add(f, f).asnumpy().tolist() == [2, 2]
        assert mx.nd._internal._test_numeric_add(i, i).dtype == np.int32
        with pytest.raises(MXNetError, match=r"^_test_numeric_add: rhs expected a numeric "
                                             r"dtype \(not bool\), got bool$"):
            mx.nd._internal._test_numeric_add(f, b)
        with pytest.raises(MXNetError, match=r"^_test_numeric_add: lhs expected a numeric"):
            mx.nd._internal._test_numeric_add(b, f)
    assert op.admitted == {np.dtype("float32"), np.dtype("int32")}


def test_dtype_rule_naming_every_input_admits_seen_dtypes_alike():
    # One kind for each of an op's fixed inputs is the same rule as ``inputs=``: a dtype
    # seen to pass is admitted without calling the check; others are still refused.
    from mxlite.operator.registry import dtypes
    op = register_op("_test_float_mul", lambda p, xp, a, b: a * b, inputs=("lhs", "rhs"),
                     check=dtypes(lhs="f", rhs="f"))
    half = register_op("_test_float_lhs", lambda p, xp, a, b: a * b, inputs=("lhs", "rhs"),
                       check=dtypes(lhs="f"))
    assert half.admitted is None        # rhs has no rule: the check must run
    f = mx.nd.ones((2,))
    for _ in range(2):
        assert mx.nd._internal._test_float_mul(f, f).asnumpy().tolist() == [1, 1]
        with pytest.raises(MXNetError, match=r"^_test_float_mul: rhs expected a floating-point "
                                             r"dtype, got int32$"):
            mx.nd._internal._test_float_mul(f, mx.nd.ones((2,), dtype="int32"))
    assert op.admitted == {np.dtype("float32")}
    assert mx.operator.get_op("relu").admitted is not None


def test_raw_numpy_errors_name_the_op_inputs_and_params():
    # A raw NumPy error ("tuple index out of range" alone says nothing) that escapes an
    # op's rules becomes an MXNetError saying what the op got
    op = get_op("take")
    p = op.parse_params({"axis": 1})
    e = mx.operator.registry._fail(op, IndexError("tuple index out of range"), p,
                                   [np.ones(()), np.ones(2)])
    assert isinstance(e, MXNetError) and isinstance(e, IndexError)
    assert str(e) == ("take: tuple index out of range, for a float64 (), indices float64 "
                      "(2,); axis=1")
    zeros = get_op("_zeros")
    e = mx.operator.registry._fail(zeros, MemoryError(),
                                   zeros.parse_params({"shape": (10 ** 6, 10 ** 6)}), [])
    assert str(e) == "_zeros: out of memory (MemoryError), for no inputs; shape=(1000000, 1000000)"
    # an op whose size params say what it allocates refuses before allocating
    with pytest.raises(MXNetError, match=r"^_zeros: shape=\(1000000, 1000000\) needs 3\.6 TiB, "
                                         r"more than this machine's memory"):
        mx.nd.zeros((10 ** 6, 10 ** 6))
    with pytest.raises(MXNetError, match=r"^tile: reps=\(1000000, 1000000\) needs "):
        mx.nd.tile(mx.nd.ones((10, 10)), reps=(10 ** 6, 10 ** 6))


def test_huge_count_param_is_refused_without_building_its_input_names():
    # num_weights=10**9 declares two billion inputs: the call is refused by comparing
    # lengths at once, not after building every name (which would take hours)
    from mxlite.operator.util import PerItemNames
    w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    with pytest.raises(TypeError, match=r"^multi_sgd_update: missing input 'weight_1' "
                                        r"\(inputs: weight_0, grad_0, weight_1, .*"
                                        r"\(2000000000 in all\)\)$"):
        mx.nd.multi_sgd_update(w, g, lrs=(0.1,), wds=(0.,), num_weights=10 ** 9)
    names = PerItemNames(("weight", "grad"), 2, ("lrs", "wds"))
    assert list(names) == ["weight_0", "grad_0", "weight_1", "grad_1", "lrs", "wds"]
    assert len(names) == 6 and names[-1] == "wds" and names[1:3] == ["grad_0", "weight_1"]
    assert "grad_1" in names and "lrs" in names
    assert "grad_2" not in names and "grad_01" not in names and "bias_0" not in names
    with pytest.raises(IndexError):
        names[6]
    # a count that fits still runs, with the same names
    out = mx.nd.multi_sgd_update(w, g, lrs=(0.1,), wds=(0.,), num_weights=1)
    np.testing.assert_allclose(out.asnumpy(), [0.9, 0.9], rtol=1e-6)


def test_shape_rules_name_argument_expected_and_actual():
    # The op's rules run before its kernel: what NumPy got wrong is said in the op's words
    with pytest.raises(MXNetError, match=r"^SequenceLast: data expected at least one time "
                                         r"step on axis 0, got shape \(0, 3\)$"):
        mx.nd.SequenceLast(mx.nd.ones((0, 3)))
    with pytest.raises(MXNetError, match=r"^take: a expected at least 1 dims, got shape \(\)$"):
        mx.nd.take(mx.nd.ones(()), mx.nd.ones((2,)))
    with pytest.raises(MXNetError, match=r"^argmax: data expected a non-empty axis 0"):
        mx.nd.argmax(mx.nd.ones((0, 3)))
    with pytest.raises(MXNetError, match=r"^SwapAxis: data expected at least 1 dims"):
        mx.nd.swapaxes(mx.nd.ones(()), dim1=0, dim2=0)


def test_gradient_rule_takes_need_and_old_form_is_refused():
    with pytest.raises(TypeError, match=r"_test_old_form: a gradient rule takes \(p, x, y, gy, need\)"):
        register_op("_test_old_form", lambda p, xp, x: x * 2,
                    gradient=lambda p, x, y, gy: [gy[0] * 2])
    assert "_test_old_form" not in list_ops()
    seen = []

    def gradient(p, x, y, gy, need):
        seen.append((type(x[0]), list(need)))
        return [gy[0] * x[1] if need[0] else None, gy[0] * x[0] if need[1] else None]

    register_op("_test_need_mul", lambda p, xp, a, b: a * b, inputs=("a", "b"),
                gradient=gradient)
    a, b = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd._internal._test_need_mul(a, b)
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [3.0, 4.0])
    # a plain backward hands the rule raw arrays; only ``a`` wants a gradient
    assert seen == [(np.ndarray, [True, False])]


def test_on_ndarrays_rule_gets_ndarrays_in_a_plain_backward():
    seen = []

    @mx.operator.on_ndarrays
    def gradient(p, x, y, gy, need):
        seen.append(type(x[0]))
        return [gy[0] * 2 * x[0].context.device_id + gy[0] * 2]

    register_op("_test_nd_rule", lambda p, xp, x: x * 2, gradient=gradient, saves="x")
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd._internal._test_nd_rule(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2.0, 2.0])
    assert seen == [mx.nd.NDArray]


@pytest.mark.parametrize("face", ["nd", "sym"])
def test_nd_and_sym_split_call_arguments_alike(face):
    ns = getattr(mx, face)
    x = mx.nd.ones((2, 3)) if face == "nd" else mx.sym.var("x")
    # positionals after the inputs are params in declaration order (axis, keepdims)
    y = ns.sum(x, 1, True)
    if face == "sym":
        y = y.eval(x=mx.nd.ones((2, 3)))[0]
    assert y.shape == (2, 1)
    with pytest.raises(TypeError, match="sum: argument 'axis' given twice"):
        ns.sum(x, 1, axis=0)
    with pytest.raises(TypeError, match="sum: too many positional arguments"):
        ns.sum(x, 1, True, False, 0, 9)
