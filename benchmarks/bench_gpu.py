"""Convolutional networks on a CUDA GPU: mxlite (CuPy) next to PyTorch, same run, same process.

Run on a machine with a GPU, CuPy and PyTorch:
    python benchmarks/bench_gpu.py [--rounds 3] [--seconds 2] [--batch 32] [--only resnet18_train]

The models are bench_cnn.py's (Gluon model_zoo ``resnet18_v1``/``resnet50_v1`` and the
PyTorch modules written there layer for layer), float32, random data. Each workload runs
mxlite imperative, mxlite hybridized and PyTorch eager, interleaved round by round; each
keeps its best round, and the ratios mxlite / PyTorch are printed. A step ends with a
device synchronisation in both frameworks, so the times are the GPU work's, not the
launch queue's.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cnn import _data, gluon_runner, torch_model  # noqa: E402

WORKLOADS = {
    # name: (model, train)
    "resnet18_infer": ("resnet18", False),
    "resnet18_train": ("resnet18", True),
    "resnet50_infer": ("resnet50", False),
    "resnet50_train": ("resnet50", True),
    "lenet_train": ("lenet", True),
}


def mxlite_runner(mx, model, batch, train, hybridize):
    return gluon_runner(mx, model, batch, train, hybridize, ctx=mx.gpu(0))[0]


def torch_runner(torch, model, batch, train):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    net = torch_model(torch, model).to(dev)
    xn, yn = _data(model, batch)
    x = torch.from_numpy(xn).to(dev)
    y = torch.from_numpy(yn.astype("int64")).to(dev)
    if not train:
        net.eval()

        def step():
            with torch.no_grad():
                net(x)
            torch.cuda.synchronize()
        return step
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
        torch.cuda.synchronize()
    return step


def rate(step, seconds, batch):
    n, t0 = 0, time.perf_counter()
    while True:
        step()
        n += 1
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return n * batch / dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--profile", metavar="WORKLOAD",
                    help="instead of timing: cProfile 5 hybridized mxlite steps of WORKLOAD")
    args = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import mxlite as mx
    try:
        import torch
        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False
    import cupy
    print("GPU: %s, CuPy %s%s" % (cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                                 cupy.__version__,
                                 ", PyTorch %s" % torch.__version__ if have_torch else ""))
    if args.profile:
        import cProfile
        import pstats
        model, train = WORKLOADS[args.profile]
        step = mxlite_runner(mx, model, args.batch, train, True)
        for _ in range(3):
            step()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(5):
            step()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(35)
        return
    print("%-16s %5s %12s %12s %12s %10s %10s" % ("workload", "batch", "mx-imp", "mx-hyb",
                                                  "torch", "imp/torch", "hyb/torch"))
    for name in args.only.split(","):
        model, train = WORKLOADS[name]
        batch = 64 if model == "lenet" else args.batch
        runners = {"mx-imp": mxlite_runner(mx, model, batch, train, False),
                   "mx-hyb": mxlite_runner(mx, model, batch, train, True)}
        if have_torch:
            runners["torch"] = torch_runner(torch, model, batch, train)
        for step in runners.values():       # first calls: kernel compilation, allocator
            for _ in range(3):
                step()
        best = dict.fromkeys(runners, 0.0)
        for _ in range(args.rounds):
            for k, step in runners.items():
                best[k] = max(best[k], rate(step, args.seconds, batch))
        t = best.get("torch", float("nan"))
        print("%-16s %5d %12.1f %12.1f %12.1f %10.2f %10.2f" % (
            name, batch, best["mx-imp"], best["mx-hyb"], t, best["mx-imp"] / t,
            best["mx-hyb"] / t), flush=True)
        del runners
        mx.gpu(0).empty_cache()
    print("(img/s; lenet_train at batch 64)")


if __name__ == "__main__":
    main()
