"""Neural-network ops (FullyConnected, Convolution, Pooling, normalisation, losses, RNN ...)."""
