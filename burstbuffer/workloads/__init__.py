"""Workloads (docs/workload.md): SWF reader, burst-buffer request model, Batsim JSON reader/writer, splitter.

Public API (imported on first use, so that the simulator, which needs only the reader, does not load
scipy with the burst-buffer model):
    read_swf, iter_swf, select_records, SWFRecord, Selection     (swf)
    BBModel, LOGNORM_PARAMS                                      (bb_model)
    convert_swf, convert_records, Conversion                     (convert)
    WorkloadJob, Workload, load_workload, write_workload, workload_from_dict   (batsim_json)
    split_workload, split_bounds, write_parts                    (split)
"""
from __future__ import annotations

import importlib

_HOME = {
    "WorkloadJob": "batsim_json", "Workload": "batsim_json", "load_workload": "batsim_json",
    "workload_from_dict": "batsim_json", "write_workload": "batsim_json",
    "LOGNORM_PARAMS": "bb_model", "BBModel": "bb_model",
    "Conversion": "convert", "convert_records": "convert", "convert_swf": "convert",
    "split_bounds": "split", "split_workload": "split", "write_parts": "split",
    "Selection": "swf", "SWFRecord": "swf", "iter_swf": "swf", "read_swf": "swf", "select_records": "swf",
}

__all__ = list(_HOME)


def __getattr__(name: str):
    """The public name `name`, imported from its module on first use (AttributeError if there is none)."""
    try:
        module = _HOME[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
