"""``python -m mxlite.demo``: train a small network on the digits that ship with mxlite.

A Gluon convolutional network (or an MLP) learns the embedded 8x8 handwritten digits
(:class:`mxlite.gluon.data.vision.Digits`) with the Estimator: a progress bar per
epoch, the training and test accuracy after each epoch, and the final test accuracy.
No download, no GPU; a few seconds on a laptop CPU. ``--help`` lists the options.
"""
import argparse
import logging
import random
import sys
import time

import numpy as np

__all__ = ["main", "build_net", "parse_args"]

# Defaults that reach >= 97% test accuracy in a few seconds (see tests/test_demo.py).
DEFAULTS = {"cnn": {"epochs": 10, "lr": 0.003}, "mlp": {"epochs": 20, "lr": 0.003}}


def parse_args(argv=None):
    """The command line options (``argv`` defaults to ``sys.argv[1:]``)."""
    parser = argparse.ArgumentParser(
        prog="python -m mxlite.demo",
        description="Train a small network on the 8x8 handwritten digits embedded in "
                    "mxlite (gluon.data.vision.Digits, a fixed train/test split) with "
                    "gluon.contrib.estimator, showing a progress bar per epoch, the "
                    "per-epoch accuracy and the final test accuracy.")
    parser.add_argument("--net", choices=("cnn", "mlp"), default="cnn",
                        help="network: a small convolutional network, or a perceptron with "
                             "two hidden layers (default: cnn)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="passes over the training set (default: %d for cnn, %d for mlp)"
                             % (DEFAULTS["cnn"]["epochs"], DEFAULTS["mlp"]["epochs"]))
    parser.add_argument("--batch-size", type=int, default=32,
                        help="images per batch (default: 32)")
    parser.add_argument("--lr", type=float, default=None,
                        help="initial Adam learning rate, decayed along a cosine to 1/50 "
                             "of it by the last batch (default: %g)" % DEFAULTS["cnn"]["lr"])
    parser.add_argument("--seed", type=int, default=0,
                        help="random seed: the same seed gives the same run (default: 0)")
    parser.add_argument("--hybridize", action=argparse.BooleanOptionalAction, default=True,
                        help="trace the network into a graph once and replay it "
                             "(default: --hybridize)")
    parser.add_argument("--workers", type=int, default=0,
                        help="DataLoader worker processes (default: 0, load in the main "
                             "process)")
    parser.add_argument("--verbose", action="store_true",
                        help="also print the Estimator's own log lines (LoggingHandler)")
    args = parser.parse_args(argv)
    if args.epochs is None:
        args.epochs = DEFAULTS[args.net]["epochs"]
    if args.lr is None:
        args.lr = DEFAULTS[args.net]["lr"]
    for name in ("epochs", "batch_size"):
        if getattr(args, name) < 1:
            parser.error("--%s must be at least 1" % name.replace("_", "-"))
    if args.workers < 0:
        parser.error("--workers must be at least 0")
    return args


def build_net(kind):
    """A HybridSequential for 1x8x8 images and 10 classes: 'cnn' or 'mlp'."""
    from .gluon import nn
    net = nn.HybridSequential(prefix=kind + "_")
    with net.name_scope():
        if kind == "cnn":
            net.add(nn.Conv2D(32, kernel_size=3, padding=1, activation="relu"),
                    nn.MaxPool2D(pool_size=2),                       # 32 x 4 x 4
                    nn.Conv2D(64, kernel_size=3, padding=1, activation="relu"),
                    nn.MaxPool2D(pool_size=2),                       # 64 x 2 x 2
                    nn.Flatten(), nn.Dropout(0.25),
                    nn.Dense(128, activation="relu"), nn.Dropout(0.25))
        elif kind == "mlp":
            net.add(nn.Flatten(), nn.Dense(256, activation="relu"), nn.Dropout(0.25),
                    nn.Dense(128, activation="relu"), nn.Dropout(0.25))
        else:
            raise ValueError("build_net: kind must be 'cnn' or 'mlp', got %r" % (kind,))
        net.add(nn.Dense(10))
    return net


def _loaders(batch_size, workers):
    """Training (shuffled) and test DataLoaders of float32 (1, 8, 8) images in [0, 1],
    and the two dataset sizes."""
    from .gluon.data import DataLoader
    from .gluon.data.vision import Digits, transforms
    to_tensor = transforms.ToTensor()
    train = Digits(train=True).transform_first(to_tensor)
    test = Digits(train=False).transform_first(to_tensor)
    return (DataLoader(train, batch_size=batch_size, shuffle=True, num_workers=workers),
            DataLoader(test, batch_size=256, num_workers=workers), len(train), len(test))


def _seed(seed):
    """Seed every RNG the run draws from: mxlite's (initializers), NumPy's (shuffling)."""
    from . import random as mx_random
    random.seed(seed)
    np.random.seed(seed)
    mx_random.seed(seed)


def _epoch_report_handler():
    """A handler printing one line per epoch: training and test accuracy, time."""
    from .gluon.contrib.estimator import EpochBegin, EpochEnd

    class EpochReport(EpochBegin, EpochEnd):
        # After ValidationHandler (-1000): the test metrics are those of this epoch.
        priority = 0

        def __init__(self):
            self.epoch = 0
            self.start = time.time()

        def epoch_begin(self, estimator, *args, **kwargs):
            self.start = time.time()

        def epoch_end(self, estimator, *args, **kwargs):
            train_acc = estimator.train_metrics[0].get()[1]
            test_acc = estimator.val_metrics[0].get()[1]
            print("[Epoch %d] train accuracy %.4f, test accuracy %.4f (%.1fs)"
                  % (self.epoch, train_acc, test_acc, time.time() - self.start), flush=True)
            self.epoch += 1
            return False

    return EpochReport()


def main(argv=None):
    """Run the demo; returns the exit status (0)."""
    args = parse_args(argv)
    from . import engine, gluon, init, lr_scheduler
    from .gluon.contrib.estimator import Estimator
    # NOTE: the matrices here are tiny (32 x 256 x 128); OpenBLAS threads spin-waiting
    # for cores that other processes hold made a run 4x slower on a busy 2-core machine
    # (31 s against 8 s). Best effort (OPENBLAS_NUM_THREADS=1 does the same).
    engine.set_blas_threads(1)
    _seed(args.seed)
    train_data, test_data, n_train, n_test = _loaders(args.batch_size, args.workers)
    net = build_net(args.net)
    net.initialize(init.Xavier())
    if args.hybridize:
        net.hybridize()
    schedule = lr_scheduler.CosineScheduler(max_update=args.epochs * len(train_data),
                                            base_lr=args.lr, final_lr=args.lr * 0.02)
    trainer = gluon.Trainer(net.collect_params(), "adam",
                            {"learning_rate": args.lr, "lr_scheduler": schedule})
    # Default metrics: accuracy and the mean loss, for training and for the test set.
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer)
    if not args.verbose:
        est.logger.setLevel(logging.WARNING)
    print("mxlite demo: %s%s on Digits (%d training, %d test images of 8x8 pixels), "
          "%d epochs, batch size %d, Adam lr %g, seed %d"
          % (args.net, " (hybridized)" if args.hybridize else "",
             n_train, n_test, args.epochs,
             args.batch_size, args.lr, args.seed), flush=True)
    start = time.time()
    est.fit(train_data, val_data=test_data, epochs=args.epochs,
            event_handlers=[_epoch_report_handler()])
    est.evaluate(test_data)
    accuracy = est.val_metrics[0].get()[1]
    print("final test accuracy: %.4f (%d test images, %.1fs in all)"
          % (accuracy, n_test, time.time() - start), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
