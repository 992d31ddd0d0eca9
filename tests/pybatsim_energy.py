"""pybatsim 3.2.1's fcfsSchedSleep, runnable against Batsim 4: ``python tests/pybatsim_energy.py fcfsSchedSleep ...``
(pybatsim's launcher options). pybatsim hands RESOURCE_STATE_CHANGED's ``state`` to the scheduler as the
protocol's string ("3"), which fcfsSchedSleep compares with integers and so stops at the first switch
("Switched to an unhandled pstate"); here it gets the integer. Jobs hash by id, as in tests/pybatsim_det.py.
"""
import sys

import schedulers.fcfsSchedSleep as fcfs_sleep
from batsim.batsim import Job
from batsim.cmds.launcher import main

_changed = fcfs_sleep.FcfsSchedSleep.onMachinePStateChanged
fcfs_sleep.FcfsSchedSleep.onMachinePStateChanged = lambda self, machines, state: _changed(self, machines, int(state))
Job.__hash__ = lambda self: hash(self.id)

if __name__ == "__main__":
    sys.argv[0] = "pybatsim"
    sys.exit(main())
