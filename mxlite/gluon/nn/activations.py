"""Activation layers of ``mx.gluon.nn`` beyond :class:`Activation` (which lives in
``basic_layers``): LeakyReLU, PReLU, ELU, SELU, GELU and Swish.

>>> mx.gluon.nn.LeakyReLU(0.1)(mx.nd.array([-2., 3.]))
<BLANKLINE>
[-0.2  3. ]
<NDArray 2 @cpu(0)>
"""
from ... import initializer
from ..block import HybridBlock
from ..parameter import _AssertError

__all__ = ["LeakyReLU", "PReLU", "ELU", "SELU", "Swish", "GELU"]


class LeakyReLU(HybridBlock):
    """Leaky rectifier: ``x`` for ``x > 0``, ``alpha * x`` otherwise.

    Parameters
    ----------
    alpha : float
        Slope for negative inputs; must be >= 0.
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, alpha, **kwargs):
        if not alpha >= 0:
            raise _AssertError("Slope coefficient for LeakyReLU must be no less than 0.")
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="leaky", slope=self._alpha, name="fwd")

    def __repr__(self):
        return "{name}({alpha})".format(name=type(self).__name__, alpha=self._alpha)


class PReLU(HybridBlock):
    """Parametric leaky rectifier with a learned slope ``alpha`` (He et al., 2015).

    Parameters
    ----------
    alpha_initializer : Initializer, default Constant(0.25)
    in_channels : int, default 1
        Number of slopes: 1 shares one slope, otherwise one per channel (axis 1).
        As in MXNet, this size is not inferred from the data.

    Examples
    --------
    >>> prelu = mx.gluon.nn.PReLU()
    >>> prelu.initialize()
    >>> prelu(mx.nd.array([-4., 2.]))
    <BLANKLINE>
    [-1.  2.]
    <NDArray 2 @cpu(0)>
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, alpha_initializer=initializer.Constant(0.25), in_channels=1, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get("alpha", shape=(in_channels,), init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, gamma=alpha, act_type="prelu", name="fwd")


class ELU(HybridBlock):
    """Exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise.

    Parameters
    ----------
    alpha : float, default 1.0
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="elu", slope=self._alpha)


class SELU(HybridBlock):
    """Scaled exponential linear unit (Klambauer et al., 2017):
    ``lambda * (x if x > 0 else alpha * (exp(x) - 1))`` with lambda ~ 1.0507, alpha ~ 1.6733."""

    _rows = True        # (see gluon/batch_rows.py)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="selu", name="fwd")


class GELU(HybridBlock):
    """Gaussian error linear unit: ``x * Phi(x)`` with Phi the standard normal CDF."""

    _rows = True        # (see gluon/batch_rows.py)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="gelu", name="fwd")


class Swish(HybridBlock):
    """Swish (Ramachandran et al., 2017): ``x * sigmoid(beta * x)``.

    Parameters
    ----------
    beta : float, default 1.0
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, beta=1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x, name="fwd")


# Names MXNet's module also shows, served from where they live in mxlite.
from ..._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "Activation": "mxlite.gluon.nn.basic_layers",
})
