"""A ladder's analysis: a capture as a ladder reads it (its pieces of work and stages, from the
ops' FLOPs and bytes), and the profiles of one GPU put together for `roofline` and `report`. Built
on the generic analysis (nsprof.analyze), which never imports it."""
