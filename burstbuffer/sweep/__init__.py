"""`burstbuffer sweep CAMPAIGN.toml --output DIR`: a campaign of simulations, the cross product of its
policies (with options), workloads (files, transforms, parts), job models and seeds, minus its
exclusions, run by the Dask engine (`dask_engine`) or the local pool, resumably.

Campaign file (TOML; relative paths are relative to the file)::

    [campaign]
    platform = "../platforms/dragonfly96.xml"   # default: the bundled Dragonfly
    models = ["io-aware"]                       # job models (default: io-aware)
    seeds = [0]                                 # the policies' seeds (default: [0])
    timeout = 600                               # [s] of simulator silence, or of one decision, before a
                                                #   run fails (docs/reliability.md)
    run-timeout = 86400                         # [s] of wall-clock time before a run fails (default 1 day)
    network-model = "exact"                     # the simulator's --network-model (docs/io-model.md §5;
                                                #   default exact, Batsim's; e.g. uncontended on 10,000 nodes)

    [[policy]]                                  # one table per policy; label defaults to name
    name = "plan"
    label = "plan-2"
    options = { alpha = 2.0 }

    [[workload]]                                # one table per workload; label defaults to the file's stem
    file = "../workloads/kth-1000.json"
    jobs = 60                                   # transform: the first N jobs (file order)
    min-res = 40                                # transform: every job asks for at least N processors
    bb-scenario = "S2"                          # transform: BBSched's S1-S4 (docs/bbsched.md), for the
    bb-seed = 0                                 #   campaign's platform; bb-seed seeds the draw (default 0)
    parts = 2                                   # cut into N parts of equal duration, each run on its own

    [[exclude]]                                 # a run matching every key given here is not run
    policy = "plan-2"                           # (keys: policy (label), workload (label), model, seed)
    model = "alloc-only"

Each run's directory is ``DIR/runs/<id>/``, `<id>` the first 16 hex digits of the SHA-256 of what
determines its result (`run_id`): the workload's and the platform's content, the policy and its
options, the job model, the seed, the network model (when not exact) and the package version. A run whose ``summary.json`` is there is
reused, whatever campaign made it. ``DIR/campaign.csv`` lists every run (key, id, status, summary).

The package: `campaign` reads and checks the file (`fields` the checks of its values), `plan` makes the
runs (their workloads and ids), `command` is the command (run, index, ``--help``).
"""
