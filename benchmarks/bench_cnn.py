"""Convolutional networks on the CPU: mxlite next to MXNet 1.9.1 and PyTorch, same run.

Run: python benchmarks/bench_cnn.py [--rounds 3] [--only resnet18_infer,lenet_train]
     MXNET_PYTHON=<python with mxnet 1.9.1> TORCH_PYTHON=<python with torch> \
         python benchmarks/bench_cnn.py

Workloads (random data, 3x224x224 images unless said; the same model in every framework):

- ``resnet18_infer``: model_zoo ``resnet18_v1``, batch 8, images/s;
- ``resnet18_train``: its training step (softmax cross-entropy, SGD), batch 8, images/s;
- ``lenet_train``: conv 20@5, max-pool 2, conv 50@5, max-pool 2, dense 500 relu,
  dense 10 on 1x28x28, batch 64, steps/s;
- ``resnet50_infer1`` / ``resnet50_infer8``: ``resnet50_v1`` at batch 1 and 8, images/s;
- ``mobilenet_v2_infer``: ``mobilenet_v2_1_0`` (depthwise convolutions), batch 8, images/s.

Each framework runs in its own worker process (this file with ``--worker``), fresh
for each workload, with 2 threads everywhere (OpenMP, BLAS, torch's intra-op pool).
The driver interleaves the workers round by round (mxlite imperative, mxlite hybridized, MXNet, PyTorch,
then again), each timing at least ``--seconds`` per round, and keeps each one's best
round: the machine may be shared, so only ratios from one run mean anything. MXNet
runs hybridized Gluon (its oneDNN kernels), PyTorch eager modules written here
to match the Gluon models layer for layer. ``MXLITE_BASE=<another mxlite checkout>``
adds that version, imperative and hybridized, as ``base`` and ``base-hyb``: before and
after in one run. Where
numba (the extra ``fast``) is installed, ``nonumba-hyb`` is mxlite hybridized with
``MXLITE_NUMBA=0``: its pure NumPy path, in the same run.

Also printed: the FLOP rate each run reaches (2 * multiply-adds of the convolutions and
dense layers per image; a training step counted as 3x the forward) against the
measured float32 GEMM rate of NumPy's BLAS (the ceiling for im2col convolution), and
the peak RSS of a fresh process doing ResNet-18 training steps, per framework.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

THREADS = os.environ.get("BENCH_CNN_THREADS", "2")
CLOCK = os.environ.get("BENCH_CNN_CLOCK", "wall")
WORKLOADS = {
    # name: (model, batch, train, unit)
    "resnet18_infer": ("resnet18", 8, False, "img/s"),
    "resnet18_train": ("resnet18", 8, True, "img/s"),
    "lenet_train": ("lenet", 64, True, "steps/s"),
    "resnet50_infer1": ("resnet50", 1, False, "img/s"),
    "resnet50_infer8": ("resnet50", 8, False, "img/s"),
    "mobilenet_v2_infer": ("mobilenet_v2", 8, False, "img/s"),
}


def _thread_env(threads, clock):
    env = dict(os.environ)
    env["BENCH_CNN_THREADS"], env["BENCH_CNN_CLOCK"] = threads, clock
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "MXNET_OMP_MAX_THREADS", "MXLITE_NUM_THREADS"):
        env[k] = threads
    return env


def _input_shape(model, batch):
    return (batch, 1, 28, 28) if model == "lenet" else (batch, 3, 224, 224)


def _data(model, batch):
    import numpy as np
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, _input_shape(model, batch)).astype(np.float32)
    classes = 10 if model == "lenet" else 1000
    y = rng.randint(0, classes, batch).astype(np.float32)
    return x, y


# -- Gluon (mxlite and MXNet) ------------------------------------------------------------

def _gluon_model(mx, model):
    nn = mx.gluon.nn
    if model == "lenet":
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(20, kernel_size=5), nn.MaxPool2D(2),
                    nn.Conv2D(50, kernel_size=5), nn.MaxPool2D(2),
                    nn.Dense(500, activation="relu"), nn.Dense(10))
        return net
    return getattr(mx.gluon.model_zoo.vision, {"resnet18": "resnet18_v1",
                                               "resnet50": "resnet50_v1",
                                               "mobilenet_v2": "mobilenet_v2_1_0"}[model])()


def gluon_runner(mx, model, batch, train, hybridize, ctx=None):
    """A closure running one inference or training step of a Gluon model (on ``ctx``,
    the current context by default)."""
    mx.random.seed(0)
    net = _gluon_model(mx, model)
    net.initialize(mx.init.Xavier(), ctx=ctx)
    xn, yn = _data(model, batch)
    x, y = mx.nd.array(xn, ctx=ctx), mx.nd.array(yn, ctx=ctx)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    if hybridize:
        net.hybridize()
        loss_fn.hybridize()
    if not train:
        def step():
            net(x).wait_to_read()
        return step, net
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
        loss.wait_to_read()
    return step, net


def gluon_macs(mx, net, model):
    """Multiply-adds per image of the Conv2D and Dense layers (one forward at batch 1)."""
    total = [0]

    def hook(block, inputs, output):
        w = block.weight.shape
        if isinstance(block, mx.gluon.nn.Dense):
            total[0] += int(output.size) * int(w[1])
        else:
            k = 1
            for d in w[1:]:
                k *= int(d)
            total[0] += int(output.size) * k

    for block in _leaves(net):
        if isinstance(block, (mx.gluon.nn.Conv2D, mx.gluon.nn.Dense)):
            block.register_forward_hook(hook)
    xn, _ = _data(model, 1)
    net(mx.nd.array(xn)).wait_to_read()
    return total[0]


def _leaves(block):
    children = list(block._children.values())
    if not children:
        yield block
    for c in children:
        yield from _leaves(c)


# -- PyTorch ----------------------------------------------------------------------------------

def torch_model(torch, model):
    """The Gluon models above, layer for layer, as PyTorch modules."""
    tnn = torch.nn

    def conv_bn(cin, cout, k, s, p, groups=1, act=None, bias=False):
        layers = [tnn.Conv2d(cin, cout, k, s, p, groups=groups, bias=bias), tnn.BatchNorm2d(cout)]
        if act is not None:
            layers.append(act())
        return layers

    class Residual(tnn.Module):
        def __init__(self, body, down):
            super().__init__()
            self.body, self.down = body, down

        def forward(self, x):
            r = self.down(x) if self.down is not None else x
            return torch.relu(self.body(x) + r)

    class Linear(tnn.Module):         # MobileNetV2's inverted residual
        def __init__(self, cin, c, t, s):
            super().__init__()
            self.short = s == 1 and cin == c
            self.body = tnn.Sequential(*conv_bn(cin, cin * t, 1, 1, 0, act=tnn.ReLU6),
                                       *conv_bn(cin * t, cin * t, 3, s, 1, cin * t, tnn.ReLU6),
                                       *conv_bn(cin * t, c, 1, 1, 0))

        def forward(self, x):
            y = self.body(x)
            return y + x if self.short else y

    if model == "lenet":
        return tnn.Sequential(tnn.Conv2d(1, 20, 5), tnn.MaxPool2d(2), tnn.Conv2d(20, 50, 5),
                              tnn.MaxPool2d(2), tnn.Flatten(), tnn.Linear(800, 500), tnn.ReLU(),
                              tnn.Linear(500, 10))
    if model == "mobilenet_v2":
        ins = [32, 16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3
        outs = [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3 + [320]
        ts = [1] + [6] * 16
        strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
        layers = conv_bn(3, 32, 3, 2, 1, act=tnn.ReLU6)
        layers += [Linear(i, c, t, s) for i, c, t, s in zip(ins, outs, ts, strides)]
        layers += conv_bn(320, 1280, 1, 1, 0, act=tnn.ReLU6)
        layers += [tnn.AdaptiveAvgPool2d(1), tnn.Conv2d(1280, 1000, 1, bias=False),
                   tnn.Flatten()]
        return tnn.Sequential(*layers)
    bottleneck = model == "resnet50"
    layers = conv_bn(3, 64, 7, 2, 3, act=tnn.ReLU) + [tnn.MaxPool2d(3, 2, 1)]
    channels = [64, 256, 512, 1024, 2048] if bottleneck else [64, 64, 128, 256, 512]
    counts = [3, 4, 6, 3] if bottleneck else [2, 2, 2, 2]
    cin = channels[0]
    for stage, (c, n) in enumerate(zip(channels[1:], counts)):
        for i in range(n):
            s = 2 if stage > 0 and i == 0 else 1
            if bottleneck:      # stride and bias on the first 1x1, as Gluon's BottleneckV1
                w = c // 4
                body = tnn.Sequential(*conv_bn(cin, w, 1, s, 0, act=tnn.ReLU, bias=True),
                                      *conv_bn(w, w, 3, 1, 1, act=tnn.ReLU),
                                      *conv_bn(w, c, 1, 1, 0, bias=True))
            else:
                body = tnn.Sequential(*conv_bn(cin, c, 3, s, 1, act=tnn.ReLU),
                                      *conv_bn(c, c, 3, 1, 1))
            down = tnn.Sequential(*conv_bn(cin, c, 1, s, 0)) if cin != c else None
            layers.append(Residual(body, down))
            cin = c
    layers += [tnn.AdaptiveAvgPool2d(1), tnn.Flatten(), tnn.Linear(cin, 1000)]
    return tnn.Sequential(*layers)


def torch_runner(torch, model, batch, train):
    torch.manual_seed(0)
    net = torch_model(torch, model)
    xn, yn = _data(model, batch)
    x, y = torch.from_numpy(xn), torch.from_numpy(yn.astype("int64"))
    if not train:
        net.eval()

        def step():
            with torch.no_grad():
                net(x)
        return step
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        loss.item()
    return step


# -- worker ---------------------------------------------------------------------------------

def _status_mb(key):
    """A memory line of /proc/self/status (VmHWM: peak RSS, VmRSS: now), in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _gemm_gflops(np):
    a = np.random.RandomState(0).rand(1024, 1024).astype(np.float32)
    clock = time.process_time if CLOCK == "cpu" else time.perf_counter
    best = float("inf")
    a @ a
    for _ in range(7):
        t0 = clock()
        a @ a
        best = min(best, clock() - t0)
    return 2 * 1024 ** 3 / best / 1e9


class Worker:
    def __init__(self, kind):
        self.kind = kind
        self.runners = {}
        if kind == "torch":
            import torch
            torch.set_num_threads(int(THREADS))
            self.fw = torch
        elif kind == "mxnet":
            import mxnet
            self.fw = mxnet
        else:
            import mxlite
            self.fw = mxlite

    def runner(self, name, hybridize):
        key = (name, hybridize)
        if key not in self.runners:
            model, batch, train, _ = WORKLOADS[name]
            if self.kind == "torch":
                step = torch_runner(self.fw, model, batch, train)
            else:
                step, _ = gluon_runner(self.fw, model, batch, train, hybridize)
            for _ in range(2):          # first-call costs: shapes, tracing, allocator
                step()
            self.runners[key] = step
        return self.runners[key]

    def time(self, name, hybridize, seconds):
        step = self.runner(name, hybridize)
        clock = time.process_time if CLOCK == "cpu" else time.perf_counter
        n, t0 = 0, clock()
        while True:
            step()
            n += 1
            dt = clock() - t0
            if dt >= seconds:
                break
        if self.kind != "torch":
            self.fw.nd.waitall()
            dt = clock() - t0
        _, batch, _, unit = WORKLOADS[name]
        return n * (batch if unit == "img/s" else 1) / dt

    def macs(self, name):
        model = WORKLOADS[name][0]
        _, net = gluon_runner(self.fw, model, 1, False, False)
        return gluon_macs(self.fw, net, model)

    def rss(self, steps):
        base = _status_mb("VmRSS")
        step = self.runner("resnet18_train", self.kind != "torch")
        for _ in range(steps):
            step()
        return {"peak": _status_mb("VmHWM"), "before": base}


def worker_main(kind):
    w = Worker(kind)
    print(json.dumps({"ready": kind}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd.pop("op")
        if op == "quit":
            break
        if op == "gemm":
            import numpy as np
            out = _gemm_gflops(np)
        else:
            out = getattr(w, op)(**cmd)
        print(json.dumps({"out": out}), flush=True)


# -- driver ---------------------------------------------------------------------------------

class Proc:
    def __init__(self, kind, python, threads, clock):
        here = os.path.dirname(os.path.abspath(__file__))
        env = _thread_env(threads, clock)
        if kind.startswith("mxlite"):
            root = os.environ["MXLITE_BASE"] if kind == "mxlite-base" else os.path.dirname(here)
            env["PYTHONPATH"] = os.pathsep.join(
                [root] + [p for p in [env.get("PYTHONPATH")] if p])
        if kind == "mxlite-nonumba":
            env["MXLITE_NUMBA"] = "0"
        self.p = subprocess.Popen([python, os.path.abspath(__file__), "--worker",
                                   kind.split("-")[0]],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                  text=True)
        self._read()

    def _read(self):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("a benchmark worker died")
            if line.startswith("{"):
                return json.loads(line)

    def call(self, op, **kw):
        kw["op"] = op
        self.p.stdin.write(json.dumps(kw) + "\n")
        self.p.stdin.flush()
        return self._read().get("out")

    def close(self):
        try:
            self.call("quit")
        except (RuntimeError, BrokenPipeError):
            pass
        self.p.wait()


def _contestants():
    out = [("mxlite", "mxlite", False, sys.executable),
           ("mxlite-hyb", "mxlite", True, sys.executable)]
    if os.environ.get("MXLITE_BASE"):
        out += [("base", "mxlite-base", False, sys.executable),
                ("base-hyb", "mxlite-base", True, sys.executable)]
    if importlib.util.find_spec("numba") is not None:
        out.append(("nonumba-hyb", "mxlite-nonumba", True, sys.executable))
    if os.environ.get("MXNET_PYTHON"):
        out.append(("mxnet", "mxnet", True, os.environ["MXNET_PYTHON"]))
    if os.environ.get("TORCH_PYTHON"):
        out.append(("torch", "torch", False, os.environ["TORCH_PYTHON"]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-rss", action="store_true")
    ap.add_argument("--threads", default=THREADS)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="cpu: each worker's process CPU time (all its threads), a steadier "
                         "measure on a busy machine; best with --threads 1")
    args = ap.parse_args()
    if args.worker:
        return worker_main(args.worker)
    names = [n for n in WORKLOADS if not args.only or n in args.only.split(",")]
    contestants = _contestants()
    first = Proc("mxlite", sys.executable, args.threads, args.clock)
    gemm = first.call("gemm")
    macs = {n: first.call("macs", name=n) for n in names}
    first.close()
    print("NumPy float32 GEMM (1024^3, %s threads): %.1f GFLOP/s; %s clock"
          % (args.threads, gemm, args.clock))
    results = {}
    for name in names:
        # fresh workers for each workload: a process that ran other models first can
        # run this one slower (MXNet 1.9.1 after ResNet-18: ResNet-50 at batch 1 ran
        # 0.72x, LeNet 0.53x its speed in a fresh process)
        procs = {}
        for _, kind, _, python in contestants:
            if kind not in procs:
                procs[kind] = Proc(kind, python, args.threads, args.clock)
        best = {}
        for _ in range(args.rounds):
            for label, kind, hyb, _ in contestants:
                r = procs[kind].call("time", name=name, hybridize=hyb, seconds=args.seconds)
                best[label] = max(best.get(label, 0.0), r)
        for p in procs.values():
            p.close()
        results[name] = best
        _print_row(name, best, macs[name], gemm)
    if not args.no_rss:
        print("\nPeak RSS of a fresh process doing 3 ResNet-18 training steps (batch 8), MB:")
        rss = {}
        for label, kind, hyb, python in contestants:
            if kind in rss or kind in ("mxlite-base", "mxlite-nonumba"):
                continue
            p = Proc(kind, python, args.threads, args.clock)
            rss[kind] = p.call("rss", steps=3)
            p.close()
            print("  %-8s peak %7.0f  (after import and model build %5.0f)"
                  % (kind, rss[kind]["peak"], rss[kind]["before"]))
        if "torch" in rss:
            print("  mxlite / torch peak: %.2f" % (rss["mxlite"]["peak"] / rss["torch"]["peak"]))
    return results


def _print_row(name, best, macs, gemm):
    model, batch, train, unit = WORKLOADS[name]
    per = 2 * macs * (3 if train else 1) * (batch if unit == "steps/s" else 1)
    mine = max(best["mxlite"], best["mxlite-hyb"])
    cells = ["%s %.2f" % (k, v) for k, v in best.items()]
    print("%-19s %s  [%s]" % (name, "  ".join(cells), unit))
    print("%-19s GFLOP/s: %s  (GEMM %.0f)" % (
        "", "  ".join("%s %.1f" % (k, v * per / 1e9) for k, v in best.items()), gemm))
    for ref in ("mxnet", "torch"):
        if ref in best:
            print("%-19s mxlite(best) / %s = %.2f" % ("", ref, mine / best[ref]))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
