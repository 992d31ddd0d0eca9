"""pybatsim 3.2.1's launcher with jobs hashed by their id: ``python tests/pybatsim_det.py SCHEDULER ...``.

Several of pybatsim's bundled schedulers (fillerSched, fillerSchedWithEvents, ...) iterate over a Python
``set`` of `batsim.batsim.Job` objects, which hash by memory address: their choices then depend on the
process's allocation history (e.g. on the order of the profiles in SIMULATION_BEGINS), not only on the
protocol messages. With ``Job.__hash__`` = hash of the job id (and PYTHONHASHSEED fixed by the caller),
the scheduler is a function of the messages it receives, so two simulators can be compared through it.
`random` is seeded with $PYBATSIM_SEED (default 0) for randomSched.
"""
import os
import random
import sys

from batsim.batsim import Job
from batsim.cmds.launcher import main

Job.__hash__ = lambda self: hash(self.id)
random.seed(int(os.environ.get("PYBATSIM_SEED", "0")))  # randomSched draws from `random`

if __name__ == "__main__":
    sys.argv[0] = "pybatsim"
    sys.exit(main())
