"""Resizing and sampling ops: BilinearResize2D, AdaptiveAvgPooling2D, GridGenerator,
BilinearSampler and SpatialTransformer."""
