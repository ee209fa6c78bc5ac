"""Smaller ops MXNet models and scripts use: make_loss, batch_take, Crop, amp_cast,
amp_multicast, im2col/col2im and a few contrib helpers."""
