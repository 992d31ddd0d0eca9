"""Workloads (docs/workload.md): SWF reader, burst-buffer request model, Batsim JSON reader/writer, splitter.

Public API:
    read_swf, iter_swf, select_records, SWFRecord, Selection     (swf)
    BBModel, LOGNORM_PARAMS                                      (bb_model)
    convert_swf, convert_records, Conversion                     (convert)
    Job, Workload, load_workload, write_workload, workload_from_dict   (batsim_json)
    split_workload, split_bounds, write_parts                    (split)
"""
from .batsim_json import Job, Workload, load_workload, workload_from_dict, write_workload
from .bb_model import LOGNORM_PARAMS, BBModel
from .convert import Conversion, convert_records, convert_swf
from .split import split_bounds, split_workload, write_parts
from .swf import Selection, SWFRecord, iter_swf, read_swf, select_records

__all__ = [
    "Job", "Workload", "load_workload", "workload_from_dict", "write_workload",
    "LOGNORM_PARAMS", "BBModel", "Conversion", "convert_records", "convert_swf",
    "split_bounds", "split_workload", "write_parts", "Selection", "SWFRecord", "iter_swf", "read_swf",
    "select_records",
]
