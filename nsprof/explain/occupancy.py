"""How many blocks of a kernel fit on one SM at once, from its registers and block size.

Limits of compute capability 9.0 (H100/H200; CUDA C++ Programming Guide, technical
specifications): 64K 32-bit registers per SM split over 4 schedulers (sub-partitions), 64
resident warps, 32 resident blocks. Registers are allocated per warp in units of 256, and a warp
lives on one sub-partition, so a sub-partition holds floor(16384 / registers per warp) warps.
The shared-memory limit depends on the carveout the driver picked for the launch; Nsight Compute
reports it (launch__occupancy_limit_shared_mem) and nsprof takes it from there.
"""

from __future__ import annotations

WARP_SIZE = 32
REGISTERS_PER_SM = 65536
SUB_PARTITIONS = 4
REGISTER_UNIT = 256  # registers per warp are rounded up to a multiple of this


def blocks_by_registers(registers_per_thread: int, threads_per_block: int) -> int:
    """Blocks of this shape whose registers fit on one SM at once."""
    warps_per_block = -(-threads_per_block // WARP_SIZE)
    registers_per_warp = -(-registers_per_thread * WARP_SIZE // REGISTER_UNIT) * REGISTER_UNIT
    warps_by_registers = (REGISTERS_PER_SM // SUB_PARTITIONS // registers_per_warp) * SUB_PARTITIONS
    return warps_by_registers // warps_per_block
