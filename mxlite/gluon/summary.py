"""``Block.summary``: each layer's output shape and parameter count, as MXNet prints them."""
from collections import OrderedDict

__all__ = []


def _shape_str(args):
    """Shapes of (nested) outputs as MXNet's summary prints them."""
    def shapes(a):
        if isinstance(a, (list, tuple)):
            return [shapes(x) for x in a]
        return a.shape if hasattr(a, "shape") else a
    s = shapes(args)
    return str(s)[1:-1] if isinstance(s, list) else str(s)


def _print_summary(summary):
    line_format = "{:>20}  {:>42} {:>15}"
    print("-" * 80)
    print(line_format.format("Layer (type)", "Output Shape", "Param #"))
    print("=" * 80)
    total = trainable = shared = 0
    for layer, entry in summary.items():
        print(line_format.format(layer, str(entry["output_shape"]), entry["n_params"]))
        total += entry["n_params"]
        trainable += entry["trainable"]
        shared += entry["shared"]
    print("=" * 80)
    print("Parameters in forward computation graph, duplicate included")
    print("   Total params: " + str(total))
    print("   Trainable params: " + str(trainable))
    print("   Non-trainable params: " + str(total - trainable))
    print("Shared params in forward computation graph: " + str(shared))
    print("Unique parameters in model: " + str(total - shared))
    print("-" * 80)


def summarize(net, inputs):
    """Run ``net(*inputs)`` with a hook on every layer and print the table."""
    from .block import HybridBlock
    from .nn.basic_layers import Sequential, HybridSequential
    summary = OrderedDict()
    seen = set()
    hooks = []
    hybridized = []

    def summary_hook(block, _, outputs):
        key = "%s-%i" % (block.__class__.__name__, len(summary))
        entry = summary[key] = OrderedDict(output_shape=_shape_str(outputs), n_params=0,
                                           trainable=0, shared=0)
        for p in block.params.values():
            size = p.data().size
            entry["n_params"] += size
            entry["trainable"] += 0 if p.grad_req == "null" else size
            if p in seen:
                entry["shared"] += size
            else:
                seen.add(p)

    def register(block):
        if isinstance(block, HybridBlock) and block._active:
            hybridized.append(block)
            block._active = False      # the cached graph is kept for afterwards
        if not isinstance(block, (Sequential, HybridSequential)):
            hooks.append(block.register_forward_hook(summary_hook))

    summary["Input"] = OrderedDict(output_shape=_shape_str(inputs), n_params=0,
                                   trainable=0, shared=0)
    try:
        net.apply(register)
        net(*inputs)
        _print_summary(summary)
    finally:
        for h in hooks:
            h.detach()
        for block in hybridized:
            block._active = True
