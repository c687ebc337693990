"""What an Nsight Systems SQLite export holds that nsprof reads (nsprof.parse.nsys_sqlite): its
tables and their columns as the model names them, the labels of nsys's enumerations for exports
that carry no ENUM_* table, and the SQL that reads the small tables."""

from __future__ import annotations

from dataclasses import dataclass

from nsprof.parse.model import TIMELINE_COLUMNS

# the model's tables and columns that nsys records: what this reader fills (a framework's operators it does not)
COLUMNS = {table: {name: column for name, column in columns.items() if not column.framework}
           for table, columns in TIMELINE_COLUMNS.items()}

# NVTX_EVENTS.eventType values (ENUM_NSYS_EVENT_TYPE in newer exports).
NVTX_PUSH_POP_RANGE = 59
NVTX_START_END_RANGE = 60
NVTX_DOMAIN_CREATE = 75
NVTX_RANGE_KINDS = {NVTX_PUSH_POP_RANGE: "push_pop", NVTX_START_END_RANGE: "start_end"}

# CUPTI memcpy kinds, for exports older than the ENUM_CUDA_MEMCPY_OPER table.
MEMCPY_KINDS = {
    0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array", 4: "Array-to-Host",
    5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array", 8: "Device-to-Device",
    9: "Host-to-Host", 10: "Peer-to-Peer",
}

TABLES_SQL = "SELECT name FROM sqlite_master WHERE type = 'table'"
VIEWS_SQL = "SELECT name FROM sqlite_master WHERE type = 'view'"
TABLE_COLUMNS_SQL = "SELECT name FROM pragma_table_info('{table}')"
STRINGS_SQL = "SELECT id, value FROM StringIds"
MEMCPY_KINDS_SQL = "SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER"
NVTX_SQL = f"""
SELECT n.start AS start_ns, n."end" AS end_ns, n.eventType AS event_type,
       n.globalTid AS global_tid, n.domainId AS domain_id, COALESCE(n.text, s.value) AS name
FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId
WHERE n.eventType IN ({NVTX_PUSH_POP_RANGE}, {NVTX_START_END_RANGE}, {NVTX_DOMAIN_CREATE})
"""
GPUS_SQL = "SELECT {columns} FROM TARGET_INFO_GPU"
GPU_COLUMNS = {  # DataFrame column: TARGET_INFO_GPU column (informational: any may be missing)
    "device_id": "id", "name": "name", "chip": "chipName", "bus_location": "busLocation",
    "sm_count": "smCount", "clock_hz": "clockRate", "memory_bytes": "totalMemory",
    "memory_bandwidth_bytes_per_s": "memoryBandwidth", "l2_cache_bytes": "l2CacheSize",
    "compute_major": "computeMajor", "compute_minor": "computeMinor", "uuid": "uuid",
}
VERSION_SQL = "SELECT value FROM {table} WHERE name = 'EXPORT_PRODUCT_VERSION'"
METADATA_TABLES = ("META_DATA_EXPORT", "EXPORT_META_DATA")  # newer name first

EVENT_TABLES = ("kernels", "memcpys", "memsets", "runtime", "graphs", "syncs")
# Derived columns and the table columns they are computed from (as DataFrame columns).
DERIVED = {"duration_ns": ("start_ns", "end_ns"), "pid": ("global_pid", "global_tid"), "tid": ("global_tid",),
           "name": ("graph_id",)}


@dataclass(frozen=True)
class IntColumns:
    """Integer columns to read from one table: DataFrame column -> table column."""

    table: str
    columns: dict[str, str]
    nullable: frozenset[str] = frozenset()  # may hold NULL (read as <NA>); others must not
    optional: frozenset[str] = frozenset()  # may be absent from the table (read as <NA>); must be nullable


KERNEL_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_KERNEL",
    {"start_ns": "start", "end_ns": "end", "device_id": "deviceId", "stream_id": "streamId",
     "correlation_id": "correlationId", "global_pid": "globalPid",
     "kernel": "demangledName", "short_name": "shortName", "mangled_name": "mangledName",
     "grid_x": "gridX", "grid_y": "gridY", "grid_z": "gridZ",
     "block_x": "blockX", "block_y": "blockY", "block_z": "blockZ",
     "registers_per_thread": "registersPerThread",
     "static_smem_bytes": "staticSharedMemory", "dynamic_smem_bytes": "dynamicSharedMemory"},
    frozenset({"correlation_id", "global_pid", "mangled_name"}),
    frozenset({"mangled_name"}),
)
MEMCPY_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    {"start_ns": "start", "end_ns": "end", "device_id": "deviceId", "stream_id": "streamId",
     "correlation_id": "correlationId", "global_pid": "globalPid", "bytes": "bytes",
     "copy_kind": "copyKind", "src_kind": "srcKind", "dst_kind": "dstKind"},
    frozenset({"correlation_id", "global_pid", "src_kind", "dst_kind"}),
)
# nsys's memory kinds, for exports older than the ENUM_CUDA_MEM_KIND table (the same numbers:
# 0 is pageable here, unlike CUPTI's own enumeration).
MEMORY_KINDS = {0: "Pageable", 1: "Pinned", 2: "Device", 3: "Array", 4: "Managed", 5: "Device Static",
                6: "Managed Static", 7: "Unknown"}
MEMORY_KINDS_SQL = "SELECT id, label FROM ENUM_CUDA_MEM_KIND"
MEMSET_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_MEMSET",
    {"start_ns": "start", "end_ns": "end", "device_id": "deviceId", "stream_id": "streamId",
     "correlation_id": "correlationId", "global_pid": "globalPid", "bytes": "bytes"},
    frozenset({"correlation_id", "global_pid"}),
)
GRAPH_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    {"start_ns": "start", "end_ns": "end", "device_id": "deviceId", "stream_id": "streamId",
     "correlation_id": "correlationId", "global_pid": "globalPid", "graph_id": "graphId",
     "graph_exec_id": "graphExecId"},
    frozenset({"correlation_id", "global_pid"}),
)
GRAPH_NAME = "CUDA graph {}"
SYNC_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    {"start_ns": "start", "end_ns": "end", "device_id": "deviceId", "stream_id": "streamId",
     "correlation_id": "correlationId", "global_pid": "globalPid", "sync_type": "syncType"},
    frozenset({"device_id", "stream_id", "correlation_id", "global_pid", "sync_type"}),
)
# CUPTI's synchronization kinds, for exports older than the ENUM_CUPTI_SYNC_TYPE table.
SYNC_TYPES = {0: "Unknown", 1: "Event sync", 2: "Stream wait event", 3: "Stream sync", 4: "Context sync"}
SYNC_TYPES_SQL = "SELECT id, label FROM ENUM_CUPTI_SYNC_TYPE"
THREADS_SQL = """SELECT t.globalTid AS global_tid, s.value AS name FROM ThreadNames AS t
LEFT JOIN StringIds AS s ON s.id = t.nameId"""
RUNTIME_COLUMNS = IntColumns(
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    {"start_ns": "start", "end_ns": "end", "correlation_id": "correlationId",
     "global_tid": "globalTid", "api": "nameId"},
    frozenset({"correlation_id", "global_tid"}),
)

# Every table the parse reads: one of these that is a VIEW (a damaged or edited export) is refused.
READ_TABLES = frozenset({spec.table for spec in (KERNEL_COLUMNS, MEMCPY_COLUMNS, MEMSET_COLUMNS, GRAPH_COLUMNS,
                                                RUNTIME_COLUMNS, SYNC_COLUMNS)} |
                        {"StringIds", "NVTX_EVENTS", "TARGET_INFO_GPU", "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND",
                         "ENUM_CUPTI_SYNC_TYPE", "ThreadNames"})
PROCESSING_ERRORS_SQL = ("SELECT text FROM DIAGNOSTIC_EVENT WHERE severity >= 2 AND text LIKE '%ProcessEventsError%'")
