"""The helper names that code written for MXNet imports from ``mxnet.base``,
``mxnet.test_utils``, ``mxnet.autograd`` and ``mxnet.ndarray.ndarray``."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite import base
from mxlite import test_utils as tu


def test_base_type_tuples_accept_numpy_scalars():
    assert isinstance(np.float32(1.5), base.numeric_types)
    assert isinstance(3, base.numeric_types)
    assert isinstance(np.int64(3), base.integer_types)
    assert isinstance(np.int32(3), base.integer_types)
    assert not isinstance(2.0, base.integer_types)
    assert isinstance("x", base.string_types)
    assert not isinstance(b"x", base.string_types)


def test_py_str_and_as_list():
    assert base.py_str("héllo".encode("utf-8")) == "héllo"
    lst, tup = [1, 2], (3,)
    assert base._as_list(lst) is lst
    assert base._as_list(tup) is tup
    assert base._as_list(7) == [7]
    assert base._as_list(None) == [None]
    assert repr(base._Null) == "_Null"


def test_util_reexports_the_c_api_helpers_of_base():
    # MXNet's util imports check_call, c_str and py_str from base: one of each.
    assert mx.util.check_call is base.check_call
    assert mx.util.c_str("ab").value == b"ab"
    assert mx.util.py_str(b"ab") == "ab"
    assert mx.util.check_call(0) is None
    with pytest.raises(mx.MXNetError, match="returned -1"):
        mx.util.check_call(-1)


def test_not_implemented_for_symbol_names_function_operator_and_arguments():
    def clip_like(*args):
        return args
    err = base.NotImplementedForSymbol(clip_like, "_clip", 1, "a")
    assert isinstance(err, base.MXNetError)
    msg = str(err)
    assert "Function clip_like" in msg and 'operator "_clip"' in msg
    assert "<class 'int'>, <class 'str'>" in msg
    assert msg.endswith("is not implemented for Symbol and only available in NDArray.")
    assert "alias" not in str(base.NotImplementedForSymbol(clip_like, None))
    assert base.error_types["NotImplementedForSymbol"] is base.NotImplementedForSymbol


def test_register_error_by_class_and_by_name():
    @base.register_error
    class MyTestError(base.MXNetError):
        pass

    @base.register_error("OtherName")
    class Second(base.MXNetError):
        pass
    assert base.error_types["MyTestError"] is MyTestError
    assert base.error_types["OtherName"] is Second


def test_data_dir_follows_mxnet_home(monkeypatch, tmp_path):
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    assert base.data_dir() == str(tmp_path)
    monkeypatch.delenv("MXNET_HOME")
    assert base.data_dir() == os.path.join(os.path.expanduser("~"), ".mxnet")


def test_classproperty_reads_through_class_and_instance():
    class Conf:
        _level = 3

        @base.classproperty
        def level(cls):
            return cls._level * 2
    assert Conf.level == 6 and Conf().level == 6


def test_star_imports_give_the_names_mxnet_test_files_use():
    ns = {}
    exec("from mxlite.test_utils import *", ns)
    assert ns["mx"] is mx and ns["np"] is np
    assert ns["NDArray"] is mx.nd.NDArray and ns["array"] is mx.nd.array
    assert ns["np_reduce"] is tu.np_reduce and ns["compare_optimizer"] is tu.compare_optimizer
    assert "_test_checks" not in ns and "_as_numpy" not in ns
    ns = {}
    exec("from mxlite.autograd import *", ns)
    assert ns["NDArray"] is mx.nd.NDArray and ns["record"] is mx.autograd.record
    assert ns["Symbol"] is mx.sym.Symbol


def test_ndarray_module_storage_ids_and_py_slice():
    from mxlite.nd import ndarray as ndm
    assert ndm.py_slice is slice
    assert ndm._STORAGE_TYPE_STR_TO_ID == {"undefined": -1, "default": 0, "row_sparse": 1,
                                           "csr": 2}
    assert ndm._STORAGE_TYPE_ID_TO_STR[2] == "csr"


@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, True), ((0, 2), True),
                                           ([2, 0], False), (-1, True)])
def test_np_reduce_matches_numpy(axis, keepdims):
    x = np.random.rand(2, 3, 4)
    for f in (np.sum, np.max, np.prod):
        want = f(x, axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=keepdims)
        got = tu.np_reduce(x, axis, keepdims, f)
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got, want)


def test_random_sample_draws_distinct_members():
    pop = list(range(20))
    got = tu.random_sample(pop, 5)
    assert len(got) == 5 and len(set(got)) == 5 and set(got) <= set(pop)
    assert pop == list(range(20))        # the population is left as it was
    with pytest.raises(ValueError, match="random_sample"):
        tu.random_sample(pop, 21)


def test_chi_square_p_value_matches_the_distribution():
    from mxlite._test_checks import _chisquare_pvalue, _upper_gamma_regularized
    # chi-square 95% quantiles: df=1: 3.841, df=3: 7.815, df=9: 16.919
    assert abs(_upper_gamma_regularized(0.5, 3.841 / 2) - 0.05) < 1e-3
    assert abs(_upper_gamma_regularized(1.5, 7.815 / 2) - 0.05) < 1e-3
    assert abs(_upper_gamma_regularized(4.5, 16.919 / 2) - 0.05) < 1e-3
    # df=2: Q(1, x/2) = exp(-x/2) exactly
    assert abs(_upper_gamma_regularized(1.0, 3.0) - np.exp(-3.0)) < 1e-12
    assert _chisquare_pvalue([25, 25, 25, 25], [25, 25, 25, 25]) == pytest.approx(1.0)


def test_verify_generator_accepts_a_fair_one_and_rejects_a_biased_one():
    np.random.seed(3)
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda p: p, 4)   # uniform on [0, 1)
    assert buckets[0] == (0.0, 0.25) and probs == [0.25] * 4
    ps = tu.verify_generator(lambda n: np.random.uniform(size=n), buckets, probs,
                             nsamples=20000)
    assert len(ps) == 5
    with pytest.raises(AssertionError, match="Generator test fails"):
        tu.verify_generator(lambda n: np.random.uniform(size=n) ** 1.2, buckets, probs,
                            nsamples=20000)
    # discrete buckets: the values themselves
    tu.verify_generator(lambda n: np.random.randint(0, 3, n), [0, 1, 2], [1 / 3.] * 3,
                        nsamples=9000)


def test_mean_and_var_checks():
    np.random.seed(0)
    gen = lambda n: np.random.normal(2.0, 3.0, size=n)  # noqa: E731
    assert tu.mean_check(gen, 2.0, 3.0, nsamples=100000)
    assert not tu.mean_check(gen, 2.5, 3.0, nsamples=100000)
    assert tu.var_check(gen, 3.0, nsamples=100000)
    assert not tu.var_check(gen, 2.0, nsamples=100000)


def test_compare_optimizer_passes_equal_and_catches_different_steps():
    opt = mx.optimizer.SGD
    tu.compare_optimizer(opt(learning_rate=0.1, momentum=0.9), opt(learning_rate=0.1, momentum=0.9),
                         (3, 4), np.float32)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(opt(learning_rate=0.1), opt(learning_rate=0.3), (3, 4), np.float32)


def test_assert_almost_equal_with_err_tolerates_a_fraction_of_mismatches():
    a = np.zeros(10, np.float32)
    b = a.copy()
    b[3] = 1.0
    tu.assert_almost_equal_with_err(a, b, etol=0.2)
    with pytest.raises(AssertionError, match="etol"):
        tu.assert_almost_equal_with_err(a, b, etol=0.05)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_with_err(a, b)
    with pytest.raises(AssertionError, match="are not equal"):
        tu.checkShapes(np.zeros(2), np.zeros(3))


def test_effective_dtype_is_the_dtype_on_cpu():
    assert tu.effective_dtype(mx.nd.zeros((2,))) == np.float32
    assert tu.effective_dtype(np.zeros(2, np.float16)) == np.float16


def test_test_matrices_have_real_eigenvalues():
    np.random.seed(1)
    m = tu.new_matrix_with_real_eigvals_nd((2, 3, 3))
    assert m.shape == (2, 3, 3)
    for a in m:
        assert np.allclose(np.linalg.eigvals(a).imag, 0, atol=1e-8)
    s = tu.new_sym_matrix_with_real_eigvals_nd((4, 4))
    assert np.allclose(s, s.T)
    assert np.all(np.abs(np.linalg.eigvalsh(s)) <= 10 + 1e-8)
    q = tu.new_orthonormal_matrix_2d(5)
    assert np.allclose(q.T @ q, np.eye(5), atol=1e-10)


def test_np_reduce_and_identity_helpers():
    eye = tu.get_identity_mat(3)
    assert isinstance(eye, mx.nd.NDArray) and np.array_equal(eye.asnumpy(), np.eye(3))
    assert tu.get_identity_mat_batch(2).shape == (2, 2, 2)
    x, y = tu.rand_coord_2d(0, 5, 10, 12)
    assert 0 <= x < 5 and 10 <= y < 12
