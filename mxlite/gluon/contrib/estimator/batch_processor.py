"""What the Estimator does with one batch: :class:`BatchProcessor`."""
from ...utils import split_and_load
from .... import autograd

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """Forward (and backward) of one batch, the hook to customise a training step.

    Subclass it and override :meth:`fit_batch` / :meth:`evaluate_batch` (for several
    inputs, a different loss call, gradient accumulation...), then pass an instance as
    ``Estimator(..., batch_processor=...)``.

    Both methods split the batch over ``estimator.context`` with
    :func:`~mxlite.gluon.utils.split_and_load` and return
    ``(data, label, pred, loss)``, each a list with one NDArray per context.
    """

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Predictions and losses of ``estimator.val_net`` on one validation batch.

        Parameters
        ----------
        estimator : Estimator
        val_batch : tuple
            ``(data, label)`` from the validation DataLoader.
        batch_axis : int, default 0
            The axis split over the contexts.

        Returns
        -------
        data, label, pred, loss : list of NDArray
        """
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Forward and backward of ``estimator.net`` on one training batch.

        The gradients are left in the parameters; the optimizer step is the job of
        :class:`~.event_handler.GradientUpdateHandler`.

        Parameters
        ----------
        estimator : Estimator
        train_batch : tuple
            ``(data, label)`` from the training DataLoader.
        batch_axis : int, default 0
            The axis split over the contexts.

        Returns
        -------
        data, label, pred, loss : list of NDArray
            One entry per context.
        """
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for l in loss:
            l.backward()
        return data, label, pred, loss
