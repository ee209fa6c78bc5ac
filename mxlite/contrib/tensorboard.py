"""``mx.contrib.tensorboard``: a ``Module.fit`` callback writing metrics as TensorBoard
scalars."""

__all__ = ["LogMetricsCallback"]


def _summary_writer_class():
    """``SummaryWriter`` from ``mxboard`` (what MXNet uses) or ``tensorboardX`` (the same
    ``add_scalar`` API)."""
    try:
        from mxboard import SummaryWriter
        return SummaryWriter
    except ImportError:
        pass
    try:
        from tensorboardX import SummaryWriter
        return SummaryWriter
    except ImportError:
        raise ImportError("LogMetricsCallback needs mxboard or tensorboardX "
                          "(pip install tensorboardX)") from None


class LogMetricsCallback:
    """Write each metric of ``param.eval_metric`` as a scalar (step: the epoch) into
    TensorBoard event files under ``logging_dir``; names get ``prefix-`` when given.

    >>> mod.fit(train, num_epoch=2,
    ...         batch_end_callback=mx.contrib.tensorboard.LogMetricsCallback('logs/train'))
    """

    def __init__(self, logging_dir, prefix=None):
        self.prefix = prefix
        self.summary_writer = _summary_writer_class()(logging_dir)

    def __call__(self, param):
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            if self.prefix is not None:
                name = "%s-%s" % (self.prefix, name)
            self.summary_writer.add_scalar(name, value, global_step=param.epoch)
