"""`burstbuffer simulate` takes Batsim 4.2.1's command line (docs/batsim.md, "Options"): external events
(--events, --forward-unknown-events), --mmax/--mmax-workload, --sched-cfg-file, -v/--verbosity,
--dump-execution-context, the Redis options, and the options it refuses in one line. The same cases beside
the real Batsim: tests/test_events_batsim.py."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .sim_sched import REPO, run_simulation

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

CLUSTER = REPO / "tests" / "data" / "cluster96.xml"
DRAGONFLY = REPO / "platforms" / "dragonfly96.xml"

#: hand-checked case on 6 compute machines (--mmax 6): j1 runs on 0-3 from 0 to 10; machines 4-5 are
#: unavailable from 0.5 to 12, so j2 (4 machines, submitted at 1) waits for j1's end and runs on 0-3 from
#: 10 to 20, and j3 (2 machines, behind j2 in the FCFS queue) starts on 4-5 when they come back, at 12.
#: A start decided on a job's completion comes 150 us later (Batsim's messages: the completion's, the
#: scheduler's reply; the same beside the real Batsim, tests/test_events_batsim.py).
EVENTS_CASE = {
    "nb_res": 6,
    "jobs": [{"id": 1, "subtime": 0, "walltime": 100, "res": 4, "profile": "d10"},
             {"id": 2, "subtime": 1, "walltime": 100, "res": 4, "profile": "d10"},
             {"id": 3, "subtime": 2, "walltime": 100, "res": 2, "profile": "d5"}],
    "profiles": {"d10": {"type": "delay", "delay": 10}, "d5": {"type": "delay", "delay": 5}},
}
EVENTS = [{"timestamp": 12, "type": "machine_available", "resources": "4-5"},
          {"timestamp": 0.5, "type": "machine_unavailable", "resources": "4-5"},
          {"timestamp": 15, "type": "maintenance", "where": {"rack": 3}, "level": 2.5}]


def write_events(path, events) -> str:
    path.write_text("".join(json.dumps(e) + "\n" for e in events) + "\n")
    return str(path)


def simulate(argv, timeout=60) -> subprocess.CompletedProcess:
    """`python -m burstbuffer.simulator ARGV` without a scheduler (options that stop before connecting)."""
    return subprocess.run([sys.executable, "-m", "burstbuffer.simulator", *map(str, argv)], cwd=str(REPO),
                          capture_output=True, text=True, timeout=timeout)


def test_external_events_hand_checked(tmp_path):
    ev = write_events(tmp_path / "events.txt", EVENTS)
    res = run_simulation(tmp_path, EVENTS_CASE, platform=CLUSTER, scheduler=("fcfs", "--call-on-event"),
                         sim_args=["--mmax", "6", "--events", ev, "--forward-unknown-events"])
    assert res.returncode == 0, res.stderr
    rows = {r["job_id"]: (r["starting_time"], r["finish_time"], r["allocated_resources"]) for r in res.jobs}
    assert rows == {"1": ("0.000000", "10.000000", "0-3"), "2": ("10.000150", "20.000150", "0-3"),
                    "3": ("12.000000", "17.000000", "4-5")}
    notes = [(now, e["data"]) for now, e in res.events("NOTIFY")]
    assert notes == [
        (0.5, {"type": "event_machine_unavailable", "resources": "4-5"}),
        (2.0, {"type": "no_more_static_job_to_submit"}),
        (12.0, {"type": "event_machine_available", "resources": "4-5"}),
        # a generic event: its whole object, as the file has it
        (15.0, {"timestamp": 15, "type": "maintenance", "where": {"rack": 3}, "level": 2.5}),
        (15.0, {"type": "no_more_external_event_to_occur"})]
    # the scheduler's CALL_ME_LATER for the generic event is answered before the simulation ends
    assert [now for now, _ in res.events("REQUESTED_CALL")] == [16.0]
    begins = res.events("SIMULATION_BEGINS")[0][1]["data"]
    assert begins["nb_compute_resources"] == 6 and begins["config"]["forward-unknown-events"] is True
    assert res.schedule[0]["time_unavailable"] == "23.000000"          # 2 machines x 11.5 s
    states = (tmp_path / "out_machine_states.csv").read_text().splitlines()
    # an unavailable machine is in no column; one that comes back while idle is idle
    assert states[1:] == ["5e-10,0,0,0,2,4", "10,0,0,0,4,0", "10.0002,0,0,0,0,4", "12,0,0,0,0,6",
                          "17,0,0,0,2,4", "20.0002,0,0,0,6,0"]


def test_unavailable_machine_keeps_its_job_and_stays_unavailable(tmp_path):
    """Machines 0-3 go away while j1 runs there: j1 ends normally, 0-3 stay out of every column until
    they are back; the scheduler never uses them meanwhile."""
    ev = write_events(tmp_path / "events.txt", [{"timestamp": 5, "type": "machine_unavailable", "resources": "0-3"},
                                                {"timestamp": 30, "type": "machine_available", "resources": "0-3"}])
    res = run_simulation(tmp_path, EVENTS_CASE, platform=CLUSTER, sim_args=["--mmax", "6", "--events", ev])
    assert res.returncode == 0, res.stderr
    rows = {r["job_id"]: (r["starting_time"], r["allocated_resources"]) for r in res.jobs}
    assert rows == {"1": ("0.000000", "0-3"), "2": ("30.000000", "0-3"), "3": ("30.000000", "4-5")}
    states = (tmp_path / "out_machine_states.csv").read_text().splitlines()
    assert states[1:3] == ["5e-10,0,0,0,2,4", "10,0,0,0,2,0"]
    assert res.schedule[0]["time_unavailable"] == "100.000000"         # 4 machines x 25 s
    assert not any(e["data"].get("type") == "no_more_external_event_to_occur" and now < 30
                   for now, e in res.events("NOTIFY"))


@pytest.mark.parametrize("events,forward,where,reason", [
    ([{"timestamp": 1, "type": "reboot"}], False, "line 1", "unknown event type \"reboot\""),
    ([{"timestamp": 1, "type": "machine_unavailable", "resources": "6"}], False, "machine_unavailable at t=1",
     "machine 6 does not exist (there are 6 machines)"),
    ([{"timestamp": 1, "type": "machine_unavailable", "resources": "a-b"}], False, "line 1", "invalid interval set"),
    ([{"timestamp": -1, "type": "reboot"}], True, "line 1", "negative timestamp"),
    ([{"type": "machine_available", "resources": "1"}], False, "line 1", "numeric 'timestamp'"),
    ([{"timestamp": 1, "type": "machine_available"}], False, "line 1", "string 'resources'"),
])
def test_bad_events_file_is_one_line_exit_2(tmp_path, events, forward, where, reason):
    ev = write_events(tmp_path / "events.txt", events)
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(EVENTS_CASE))
    r = simulate(["-p", CLUSTER, "-w", wl, "--mmax", "6", "--events", ev, "-e", tmp_path / "out", "-q"]
                 + (["--forward-unknown-events"] if forward else []))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{ev}: {where}: " in lines[0] and reason in lines[0], r.stderr


def test_inconsistent_availability_event_stops_the_simulation(tmp_path):
    ev = write_events(tmp_path / "events.txt", [{"timestamp": 1, "type": "machine_unavailable", "resources": "2"},
                                                {"timestamp": 2, "type": "machine_unavailable", "resources": "1-2"}])
    res = run_simulation(tmp_path, EVENTS_CASE, platform=CLUSTER, sim_args=["--mmax", "6", "--events", ev])
    assert res.returncode == 1
    assert "machine 2 ('node_10') unavailable was requested but this machine was already in UNAVAILABLE" \
        in res.stderr


def test_dump_execution_context_as_batsim(tmp_path):
    # the line Batsim 4.2.1 prints for the same options
    r = simulate(["-p", CLUSTER, "-s", "tcp://x:1", "--redis-port", "12", "-e", "pre", "--dump-execution-context"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == ('{"socket_endpoint":"tcp://x:1","redis_enabled":false,"redis_hostname":"127.0.0.1",'
                        '"redis_port":12,"redis_prefix":"default","export_prefix":"pre",'
                        '"external_scheduler":true}\n')
    assert not (tmp_path / "pre_jobs.csv").exists()


@pytest.mark.parametrize("argv,named", [
    (["-W", "wf.xml"], "-W/--workflow"), (["--WS", "wf.xml", "10"], "--WS/--workflow-start"),
    (["--enable-redis"], "--enable-redis")])
def test_unsupported_option_is_refused_in_one_line(tmp_path, argv, named):
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(EVENTS_CASE))
    r = simulate(["-p", CLUSTER, "-w", wl, "-e", tmp_path / "out", *argv])
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"burstbuffer simulate: error: {named}: option: not supported")
    assert not (tmp_path / "out_jobs.csv").exists()


def test_profile_reuse_needs_dynamic_jobs(tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(EVENTS_CASE))
    r = simulate(["-p", CLUSTER, "-w", wl, "-e", tmp_path / "out", "--enable-profile-reuse"])
    assert r.returncode == 2
    assert r.stderr.strip() == ("burstbuffer simulate: error: --enable-profile-reuse: option: profile reuse is enabled "
                                "but dynamic registration is not (add --enable-dynamic-jobs)")


def test_sched_cfg_file_reaches_simulation_begins(tmp_path):
    cfg = tmp_path / "sched.json"
    cfg.write_text('{"policy": "x",\n "depth": 2}\n')
    res = run_simulation(tmp_path, EVENTS_CASE, platform=CLUSTER, sim_args=["--sched-cfg-file", str(cfg)])
    assert res.returncode == 0, res.stderr
    config = res.events("SIMULATION_BEGINS")[0][1]["data"]["config"]
    assert config["sched-config"] == '{"policy": "x",\n "depth": 2}\n'
    both = simulate(["-p", CLUSTER, "--sched-cfg", "a", "--sched-cfg-file", cfg])
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
    missing = simulate(["-p", CLUSTER, "-w", tmp_path / "workload.json", "--sched-cfg-file", tmp_path / "none",
                        "-e", tmp_path / "o"])
    assert missing.returncode == 2 and "none: --sched-cfg-file: cannot be read" in missing.stderr


def test_redis_options_are_passed_on_in_the_config(tmp_path):
    res = run_simulation(tmp_path, EVENTS_CASE, platform=CLUSTER,
                         sim_args=["--redis-hostname", "db", "--redis-port", "7000", "--redis-prefix", "p"])
    assert res.returncode == 0, res.stderr
    config = res.events("SIMULATION_BEGINS")[0][1]["data"]["config"]
    assert (config["redis-enabled"], config["redis-hostname"], config["redis-port"], config["redis-prefix"]) == \
        (False, "db", 7000, "p")


def test_mmax_keeps_the_first_compute_machines(tmp_path):
    roles = ",".join(f"node_{9 * k}" for k in range(12)) + ":storage"
    res = run_simulation(tmp_path, EVENTS_CASE, platform=DRAGONFLY, sim_args=["--mmax", "10", "-r", roles])
    assert res.returncode == 0, res.stderr
    d = res.events("SIMULATION_BEGINS")[0][1]["data"]
    # 12 burst-buffer nodes and the PFS host
    assert d["nb_compute_resources"] == 10 and d["nb_storage_resources"] == 13 and d["nb_resources"] == 23
    assert [r["id"] for r in d["compute_resources"]] == list(range(10))
    assert [r["id"] for r in d["storage_resources"]] == list(range(10, 23))
    assert res.schedule[0]["nb_computing_machines"] == "23"


def test_mmax_workload_and_too_many(tmp_path):
    wl = dict(EVENTS_CASE, nb_res=5)
    res = run_simulation(tmp_path, wl, platform=CLUSTER, sim_args=["--mmax-workload"])
    assert res.returncode == 0, res.stderr
    assert res.events("SIMULATION_BEGINS")[0][1]["data"]["nb_compute_resources"] == 5
    (tmp_path / "w.json").write_text(json.dumps(EVENTS_CASE))
    both = simulate(["-p", CLUSTER, "-w", tmp_path / "w.json", "--mmax", "4", "--mmax-workload", "--dump-platform"])
    assert both.returncode == 0     # --dump-platform ignores the limit; the run below does not
    r = simulate(["-p", CLUSTER, "-w", tmp_path / "w.json", "--mmax", "97", "-e", tmp_path / "o"])
    assert r.returncode == 2 and "impossible to compute on M=97 machines: only 96" in r.stderr


@pytest.mark.parametrize("level,sending,summary", [("network-only", True, False), ("information", False, True),
                                                   ("debug", True, True), ("quiet", False, False)])
def test_verbosity(tmp_path, level, sending, summary):
    res = run_simulation(tmp_path, EVENTS_CASE, platform=CLUSTER, sim_args=["-v", level])
    assert res.returncode == 0, res.stderr
    # run_simulation passes -q: it wins, as in Batsim
    assert res.stderr == ""
    res = run_simulation(tmp_path, EVENTS_CASE, platform=CLUSTER, sim_args=["-v", level],
                         scheduler=("fcfs",), quiet=False)
    assert res.returncode == 0, res.stderr
    assert ("[network/INFO] Sending '{\"now\":0.000000,\"events\":[{\"timestamp\":0.000000,"
            "\"type\":\"SIMULATION_BEGINS\"" in res.stderr) == sending
    assert ("[network/INFO] Received '" in res.stderr) == sending
    assert ("burstbuffer simulate: 3 jobs (3 succeeded" in res.stderr) == summary


def test_version_options_print_and_exit():
    r = simulate(["--version"])
    assert r.returncode == 0 and r.stdout.startswith("burstbuffer ") and "Batsim 4.2.1" in r.stdout
    r = simulate(["--simgrid-version"])
    assert r.returncode == 0 and r.stdout.strip() == "3.32.0"


#: Batsim 4.2.1's outputs for this workload under --no-sched on cluster96.xml (recorded): job 2 (1 machine,
#: 1e9 flops at 1 Gflop/s) starts first in Batsim's job table, then job 1 (2 machines, 10 s), both at t=0
NO_SCHED = {"nb_res": 4,
            "jobs": [{"id": "1", "subtime": 0, "walltime": 100, "res": 2, "profile": "a"},
                     {"id": "2", "subtime": 5, "walltime": 100, "res": 1, "profile": "b"}],
            "profiles": {"a": {"type": "delay", "delay": 10},
                         "b": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}


def test_no_sched_runs_every_job_at_zero_without_scheduler(tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(NO_SCHED))
    r = simulate(["-p", CLUSTER, "-w", wl, "--no-sched", "-e", tmp_path / "out", "-s", "tcp://127.0.0.1:1", "-q"])
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out_jobs.csv").read_text().count("\n") == 1         # the header only, as Batsim
    assert (tmp_path / "out_machine_states.csv").read_text().splitlines()[1:] == [
        "0,0,0,0,95,1", "0,0,0,0,94,2", "1,0,0,0,94,2", "10,0,0,0,96,0"]
    with open(tmp_path / "out_schedule.csv") as f:
        row = next(__import__("csv").DictReader(f))
    assert (row["nb_jobs"], row["makespan"], row["time_computing"], row["time_idle"]) == \
        ("0", "0.000000", "20.000000", "0.000000")


def test_no_sched_job_order_is_batsims():
    from burstbuffer.simulator.batexec import job_order
    # 30 jobs in this file order; Batsim 4.2.1 --no-sched started them in the order below (its machine states
    # at t=0 agree; tests/test_events_batsim.py compares the outputs on generated workloads)
    ids = [f"w0!{i}" for i in (14, 4, 16, 10, 6, 3, 19, 20, 22, 26, 25, 7, 27, 29, 11, 17, 13, 12, 15, 8, 28, 9, 1,
                               18, 5, 2, 24, 21, 0, 23)]
    assert [ids[i] for i in job_order(ids)] == [
        f"w0!{i}" for i in (25, 27, 26, 7, 14, 22, 20, 19, 6, 4, 2, 3, 16, 11, 17, 10, 21, 29, 13, 23, 15, 8, 1, 28,
                            9, 18, 5, 24, 12, 0)]


@pytest.mark.parametrize("extra,reason", [(["-E"], "not with -E"), (["--events", "EV"], "not with --events"),
                                          (["--mmax", "1"], "needs 2 machines, the platform has 1")])
def test_no_sched_refusals(tmp_path, extra, reason):
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(NO_SCHED))
    ev = write_events(tmp_path / "e.txt", [])
    r = simulate(["-p", REPO / "tests" / "data" / "energy4.xml" if "-E" in extra else CLUSTER, "-w", wl,
                  "--no-sched", "-e", tmp_path / "out", *[ev if a == "EV" else a for a in extra]])
    assert r.returncode == 2 and reason in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


#: Batsim 4.2.1's inputs (tests/data/batsim-4.2.1/README.md)
BATSIM_DATA = REPO / "tests" / "data" / "batsim-4.2.1"


@pytest.mark.parametrize("args", [
    [],                                                            # docs/cli.rst, "First run"
    ["--enable-dynamic-jobs", "--acknowledge-dynamic-jobs"],       # "Using dynamic jobs"
    ["--sg-log", "surf_energy.thresh:critical"],                   # "Example with various options"
    ["--sg-log", "surf_energy.t:critical ker_engine.threshold=info"],
    ["--sg-cfg", "network/optim:Full,network/maxmin-selective-update:no", "--sg-log", "xbt_cfg.thres:info"],
], ids=["first-run", "dynamic-jobs", "sg-log-thresh", "sg-log-two", "sg-cfg-two"])
def test_batsim_cli_rst_command_lines(tmp_path, args):
    """The command lines of Batsim 4.2.1's docs/cli.rst on its own small_platform.xml and
    test_one_computation_job.json:
    every --sg-log form SimGrid's log parser takes (``thresh``, ``t``, ``threshold=``, two settings in one
    option) and a --sg-cfg holding two settings run, and give the same _jobs.csv as without them."""
    res = run_simulation(tmp_path, BATSIM_DATA / "workloads" / "test_one_computation_job.json",
                         platform=BATSIM_DATA / "platforms" / "small_platform.xml", sim_args=args,
                         scheduler=("fcfs", "--finish-registration") if "--enable-dynamic-jobs" in args else ("fcfs",))
    assert res.returncode == 0, res.stderr[-2000:]
    assert [(r["job_id"], r["final_state"]) for r in res.jobs] == [("1", "COMPLETED_SUCCESSFULLY")]
    if "--sg-cfg" in args:
        assert "Set 'network/maxmin-selective-update' to 'no'" in res.stderr


def test_batsim_cli_rst_energy_line(tmp_path):
    """docs/cli.rst's "Example with various options" as far as this simulator goes (no Redis, refused in one
    line elsewhere): two workloads, -E with ``--sg-log surf_energy.thresh:critical``, --enable-compute-sharing,
    an export folder, on Batsim's energy platform: every job of both workloads completes."""
    wls = ["test_energy_minimal_load100.json", "test_energy_minimal_load0.json"]
    args = ["-w", str(BATSIM_DATA / "workloads" / wls[1]), "--enable-compute-sharing", "-E",
            "--sg-log", "surf_energy.thresh:critical"]
    res = run_simulation(tmp_path, BATSIM_DATA / "workloads" / wls[0],
                         platform=BATSIM_DATA / "platforms" / "energy_platform_homogeneous_no_net_128.xml",
                         sim_args=args)
    assert res.returncode == 0, res.stderr[-2000:]
    n = sum(len(json.loads((BATSIM_DATA / "workloads" / w).read_text())["jobs"]) for w in wls)
    assert len(res.jobs) == n and all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in res.jobs)


@pytest.mark.parametrize("args, reason", [
    (["--sg-log", "root.flavour:debug"], "unknown setting 'flavour'"),
    (["--sg-log", "a.t:debug bogus"], "'bogus': expected CATEGORY.SETTING:VALUE"),
    (["--sg-cfg", "network/optim:Full network/model"], "'network/model': expected NAME:VALUE"),
    (["--sg-log", "root.app:nowhere"], "Unknown appender log type"),
])
def test_simgrid_option_forms_simgrid_would_abort_on(tmp_path, args, reason):
    """What SimGrid would abort the process on (or reject) is one line naming the option, exit 2."""
    out = simulate(["-p", BATSIM_DATA / "platforms" / "small_platform.xml", "-w",
                    BATSIM_DATA / "workloads" / "test_one_computation_job.json", "-e", tmp_path / "o",
                    "-s", "tcp://localhost:1", "--timeout", "1", *args])
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and reason in lines[0] and f"error: {args[0]}: " in lines[0], lines


@pytest.mark.batsim
def test_first_simulation_tutorial_command_line_beside_real_batsim(tmp_path):
    """Batsim 4.2.1's first-simulation tutorial (docs/tuto-first-simulation/run_batsim.bash): ``-p
    platforms/cluster512.xml -w workloads/test_batsim_paper_workload_seed1.json -e PREFIX``, the same command line
    given to the real Batsim and to `simulate`, with the same FCFS scheduler (batsched's easy_bf is not needed to
    compare the simulators): byte-identical _jobs.csv and _machine_states.csv (800 jobs)."""
    import gzip

    from .batsim_diff import find_batsim, same_command_pair
    if find_batsim() is None:
        pytest.skip("no real Batsim 4.2.1 (BATSIM_BIN)")
    wl = tmp_path / "test_batsim_paper_workload_seed1.json"
    packed = BATSIM_DATA / "workloads" / "test_batsim_paper_workload_seed1.json.gz"
    wl.write_bytes(gzip.decompress(packed.read_bytes()))
    sched = [sys.executable, str(REPO / "tests" / "sim_sched.py"), "fcfs", "{endpoint}"]
    real, emb = same_command_pair(tmp_path, ["-p", BATSIM_DATA / "platforms" / "cluster512.xml", "-w", wl,
                                             "-e", "{prefix}", "-s", "{socket}", "-q"], sched)
    assert real.returncode == 0 and emb.returncode == 0, emb.stderr[-2000:]
    for f in ("_jobs.csv", "_machine_states.csv"):
        a, b = Path(real.prefix + f).read_bytes(), Path(emb.prefix + f).read_bytes()
        assert a == b, f
    assert len(real.jobs) == 800


def test_cli_rst_energy_platform_is_refused_in_one_line(tmp_path):
    """docs/cli.rst's "Example with various options" (its Redis options left out) on Batsim 4.2.1's own
    energy_platform.xml: host Earth declares 9 pstates and 6 power profiles, which SimGrid 3.32's energy plugin
    rejects (the real Batsim 4.2.1 aborts there: "Found 6 energetic profiles for 7 pstates"); `simulate` says so
    in one line and exits 2, before connecting to any scheduler."""
    d = BATSIM_DATA
    out = simulate(["-p", d / "platforms" / "energy_platform.xml", "-w", d / "workloads" / "test_long_workload.json",
                    "-w", d / "workloads" / "test_energy_minimal_load100.json", "--add-role-to-hosts", "Mars:storage",
                    "--enable-compute-sharing", "-E", "--sg-log", "surf_energy.thresh:critical",
                    "--export", tmp_path / "simu_outputs" / "out", "-s", "tcp://localhost:1", "--timeout", "1",
                    "-v", "debug"])
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr
    assert "energy_platform.xml: host 'Earth': 'wattage_per_state' gives 6 power profiles for 9 pstates" in lines[0]


def test_host_model_stays_ptask_l07_as_in_batsim(tmp_path):
    """Batsim 4.2.1 sets host/model:ptask_L07 after the user's --sg-cfg (batsim.cpp): a user's host/model is
    overridden, so test_one_computation_job's parallel task lasts as without the option."""
    wl = BATSIM_DATA / "workloads" / "test_one_computation_job.json"
    plat = BATSIM_DATA / "platforms" / "small_platform.xml"
    rows = []
    for args in ([], ["--sg-cfg", "host/model:compound", "--sg-log", "xbt_cfg.thres:info"]):
        (tmp_path / str(len(rows))).mkdir()
        res = run_simulation(tmp_path / str(len(rows)), wl, platform=plat, sim_args=args)
        assert res.returncode == 0, res.stderr[-2000:]
        rows.append([(r["starting_time"], r["execution_time"]) for r in res.jobs])
    assert rows[0] == rows[1]
    assert res.stderr.index("Set 'host/model' to 'compound'") < res.stderr.rindex("Set 'host/model' to 'ptask_L07'")
