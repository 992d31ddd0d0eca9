"""`burstbuffer reproduce`: a study (`study`: a run plan, a claims table, figures; the default is
Kopanski & Rzadca, "Plan-based Job Scheduling for Supercomputers with Shared Burst Buffers",
Euro-Par 2021, §4.2) planned into runs (`plan`), executed by a pluggable executor, resumably
(`execute`; the local process pool: `local`), and analysed into tables, figures, verdicts and a report
(`analysis`). The command itself: `command`.
"""
from .analysis import analyse, collect
from .command import register, reproduce
from .execute import MARKER, Executor, RunSettings, execute, read_marker, run_one
from .local import LocalPoolExecutor
from .runs import RunPlan, RunSpec, plan_runs, select_workloads
from .study import DEFAULT_STUDY, GanttRun, Study, get_study, all_studies

__all__ = ["DEFAULT_STUDY", "MARKER", "Executor", "GanttRun", "LocalPoolExecutor", "RunPlan", "RunSettings",
           "RunSpec", "Study", "analyse", "collect", "execute", "get_study", "plan_runs", "read_marker",
           "register", "reproduce", "run_one", "select_workloads", "all_studies"]
