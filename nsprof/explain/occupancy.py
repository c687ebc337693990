"""How many blocks of a kernel fit on one SM at once, from its registers and block size.

Limits of compute capability 9.0 (H100/H200; CUDA C++ Programming Guide, technical
specifications): 64K 32-bit registers per SM split over 4 schedulers (sub-partitions), 64
resident warps, 32 resident blocks. Registers are allocated per warp in units of 256, and a warp
lives on one sub-partition, so a sub-partition holds floor(16384 / registers per warp) warps.
The shared-memory limit depends on the carveout the driver picked for the launch; Nsight Compute
reports it (launch__occupancy_limit_shared_mem) and nsprof takes it from there.
"""

from __future__ import annotations

from dataclasses import dataclass

WARP_SIZE = 32
REGISTERS_PER_SM = 65536
SUB_PARTITIONS = 4
REGISTER_UNIT = 256  # registers per warp are rounded up to a multiple of this
MAX_WARPS = 64
MAX_BLOCKS = 32


@dataclass(frozen=True)
class Occupancy:
    blocks_by_registers: int
    blocks_by_warps: int
    blocks: int  # resident blocks per SM: the tightest limit
    warps_per_block: int

    @property
    def theoretical_pct(self) -> float:
        return 100 * self.blocks * self.warps_per_block / MAX_WARPS


def occupancy(registers_per_thread: int, threads_per_block: int, blocks_by_shared_memory: int | None = None) -> Occupancy:
    warps_per_block = -(-threads_per_block // WARP_SIZE)
    registers_per_warp = -(-registers_per_thread * WARP_SIZE // REGISTER_UNIT) * REGISTER_UNIT
    warps_by_registers = (REGISTERS_PER_SM // SUB_PARTITIONS // registers_per_warp) * SUB_PARTITIONS
    by_registers = warps_by_registers // warps_per_block
    by_warps = MAX_WARPS // warps_per_block
    limits = [by_registers, by_warps, MAX_BLOCKS] + ([blocks_by_shared_memory] if blocks_by_shared_memory is not None else [])
    return Occupancy(by_registers, by_warps, min(limits), warps_per_block)
