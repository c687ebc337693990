"""The ladders' definitions: one module per op under ops/ (its sizes, FLOP and byte formulas,
precisions, stages and how they launch), the op model they are written in, the stage kinds, the CPU
stages' roles and speed-ups, and the registry every command looks them up in."""
