"""`burstbuffer reproduce`: a study (`study`: a run plan, a claims table, figures; the default is
Kopanski & Rzadca, "Plan-based Job Scheduling for Supercomputers with Shared Burst Buffers",
Euro-Par 2021, §4.2) planned into runs (`runs`), executed by a pluggable executor, resumably
(`execute`; the local process pool: `local`), and analysed into tables, figures, verdicts and a report
(`analysis`). The command itself: `command`.
"""
# `execute` is both a submodule and a function: imported here so that the name stays the function.
from .execute import MARKER, Executor, RunSettings, execute, read_marker, run_one

#: public name → the submodule defining it, imported on first use (PEP 562): the `reproduce` command's
#: parser (`command.register`) does not need the analysis (pandas) nor the executors.
_WHERE = {
    "analyse": "analysis", "collect": "analysis", "register": "command", "reproduce": "command",
    "MARKER": "execute", "Executor": "execute", "RunSettings": "execute", "execute": "execute",
    "read_marker": "execute", "run_one": "execute", "LocalPoolExecutor": "local", "RunPlan": "runs",
    "PlannedRun": "runs", "plan_runs": "runs", "select_workloads": "runs", "DEFAULT_STUDY": "study",
    "GanttRun": "study", "Study": "study", "get_study": "study", "all_studies": "study",
}

__all__ = ["DEFAULT_STUDY", "MARKER", "Executor", "GanttRun", "LocalPoolExecutor", "RunPlan", "RunSettings",
           "PlannedRun", "Study", "analyse", "collect", "execute", "get_study", "plan_runs", "read_marker",
           "register", "reproduce", "run_one", "select_workloads", "all_studies"]


from ..lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals(), __all__)
