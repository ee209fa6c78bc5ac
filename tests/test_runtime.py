"""mx.runtime: the features this build really has, in MXNet 1.9.1's names and order."""
import pytest

import mxlite as mx

MXNET_NAMES = ["CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2",
               "CPU_SSE3", "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2",
               "OPENMP", "SSE", "F16C", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL",
               "BLAS_APPLE", "LAPACK", "MKLDNN", "OPENCV", "CAFFE", "PROFILER",
               "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG",
               "TVM_OP"]


def test_features_list_mxnets_names_and_what_mxlite_has():
    f = mx.runtime.Features()
    assert list(f.keys()) == MXNET_NAMES
    for absent in ("CUDNN", "NCCL", "TENSORRT", "MKLDNN", "OPENCV", "DIST_KVSTORE"):
        assert not f.is_enabled(absent)
    assert f.is_enabled("cuda") == (mx.context.num_gpus() > 0)
    assert f.is_enabled("INT64_TENSOR_SIZE")
    feature = f["MKLDNN"]
    assert feature.name == "MKLDNN" and feature.enabled is False
    assert repr(feature) == "✖ MKLDNN"
    assert [x.name for x in mx.runtime.feature_list()] == MXNET_NAMES


def test_unknown_feature_is_an_error_listing_the_known_ones():
    with pytest.raises(RuntimeError, match="Feature 'FOO' is unknown.*CUDA"):
        mx.runtime.Features().is_enabled("FOO")
