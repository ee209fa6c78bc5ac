"""Detection ops: ROIPooling, ROIAlign and the contrib box ops (box_iou, box_nms,
MultiBoxPrior, box_encode/box_decode)."""
