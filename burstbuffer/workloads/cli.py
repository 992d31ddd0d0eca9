"""``burstbuffer workload …``: convert an SWF trace, split a workload (docs/workload.md).

    burstbuffer workload from-swf TRACE.swf --output W.json [--jobs N] [--from-job K] [--seed S]
                                  [--platform P | --bb-capacity 40GB --bb-nodes 12 --nb-res 96]
                                  [--width K --speedup S --days D]   (rescaled for a larger machine)
    burstbuffer workload from-sacct JOBS.txt --output W.json [--cores-per-node C] [--columns KEY=COL,...]
                                    [--platform P ...] [--width K --speedup S --days D]
    burstbuffer workload io-from-darshan W.json LOG.darshan ... --output OUT.json
    burstbuffer workload split W.json --weeks 3 --output DIR
    burstbuffer workload transform W.json --bb-share 0.5 --bb-from-above 0.002778 --seed N --output OUT.json
"""
from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from .. import cliargs
from ..data import input_path
from ..errors import InputError
from ..platforms.units import parse_bytes
from .batsim_json import load_workload, write_workload
from .split import split_workload, write_parts

#: bytes in a GB (`bb_model.GB`, repeated: bb_model imports scipy, which the parser does not need)
GB = 10**9

#: The paper's platform (docs/platform.md): 96 compute nodes, 12 BB nodes of 40 GB.
PAPER_PLATFORM = {"nb_res": 96, "bb_nodes": 12, "bb_capacity": 40 * GB}


def _flat_yaml(text: str) -> dict[str, str]:
    """`key: value  # comment` lines of a flat YAML file (the artifact's platform config)."""
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip().strip("'\"")
    return out


def platform_params(path: str | Path) -> dict[str, int]:
    """{nb_res, bb_nodes, bb_capacity (bytes)} of a platform description.

    Accepts the artifact's YAML (``nb_res``, ``burst_buffer_capacity`` in GB, ``num_groups`` ×
    ``num_chassis`` BB nodes, e.g. reference/dragonfly96.yaml) or a SimGrid XML, read as the simulator
    reads it (`burstbuffer.platforms.simgrid_xml.resolve_machines`: Batsim 4.2.1's master, compute and
    storage hosts): the BB nodes are its storage hosts but the PFS (`burstbuffer.platforms.model.is_pfs`),
    their capacity the smallest ``burst_buffer_capacity`` (host or zone property). Missing values are left
    out, for the options to supply. Raises InputError(path, item, reason) if the file cannot be read or
    parsed, or is a platform the simulator refuses (e.g. no master host).
    """
    from ..fileio import read_input
    p = Path(path)
    text = read_input(p, "platform")
    out: dict[str, int] = {}
    if p.suffix.lower() in (".yaml", ".yml"):
        cfg = _flat_yaml(text)
        try:
            if "nb_res" in cfg:
                out["nb_res"] = int(cfg["nb_res"])
            if "burst_buffer_capacity" in cfg:
                out["bb_capacity"] = parse_bytes(float(cfg["burst_buffer_capacity"]) * GB)
            if "num_groups" in cfg and "num_chassis" in cfg:
                out["bb_nodes"] = int(cfg["num_groups"]) * int(cfg["num_chassis"])
        except ValueError as exc:
            raise InputError(str(p), "platform", f"not a number in range: {exc}") from None
        return out
    from ..platforms.model import bb_capacity_text, is_pfs
    from ..platforms.simgrid_xml import parse_platform, resolve_machines
    machines = resolve_machines(parse_platform(str(p)))
    bbs = [m for m in machines.storage if not is_pfs(m.name, m.properties)]
    if bbs:
        out["bb_nodes"] = len(bbs)
        out["nb_res"] = len(machines.compute)
    caps = [c for c in (bb_capacity_text(m.properties, m.zone_properties) for m in bbs) if c is not None]
    if caps:
        try:
            out["bb_capacity"] = min(parse_bytes(c) for c in caps)
        except ValueError as exc:
            raise InputError(str(p), "burst_buffer_capacity", str(exc)) from None
    return out


def _model_params(args: argparse.Namespace) -> dict[str, int]:
    """{nb_res, bb_nodes, bb_capacity} from --platform and the options (from-swf, from-sacct)."""
    params = dict(PAPER_PLATFORM)
    if args.platform:
        got = platform_params(args.platform)
        params.update(got)
        missing = [k for k in ("nb_res", "bb_nodes", "bb_capacity")
                   if k not in got and getattr(args, k) is None]
        if missing:
            opts = {"nb_res": "--nb-res", "bb_nodes": "--bb-nodes", "bb_capacity": "--bb-capacity"}
            raise InputError(args.platform, "platform",
                             "cannot tell " + ", ".join(missing) + "; give " + " ".join(opts[m] for m in missing))
    if args.bb_capacity is not None:
        try:
            params["bb_capacity"] = parse_bytes(args.bb_capacity)
        except ValueError as exc:
            raise InputError("--bb-capacity", str(args.bb_capacity), str(exc)) from None
    for key in ("nb_res", "bb_nodes"):
        if getattr(args, key) is not None:
            params[key] = getattr(args, key)
    for key, opt in (("nb_res", "--nb-res"), ("bb_nodes", "--bb-nodes"), ("bb_capacity", "--bb-capacity")):
        if params[key] <= 0:
            raise InputError(opt, str(params[key]), "must be positive")
    return params


def _cmd_from_swf(args: argparse.Namespace) -> int:
    from .bb_model import BBModel
    from .convert import convert_swf
    from .swf import SIZE_HEADERS, machine_size, swf_header
    args.trace = str(input_path(args.trace, "trace"))
    sized = ""
    if args.platform is None and args.nb_res is None:
        got = machine_size(swf_header(args.trace))
        if got is not None:
            args.nb_res, key = got
            sized = f" (from the trace's header {key}; --nb-res N or --platform P to choose)"
        else:
            sized = (f" (the default: the trace's header gives no {' nor '.join(SIZE_HEADERS)}; --nb-res N or "
                     "--platform P to choose)")
    params = _model_params(args)
    if args.jobs is not None and args.jobs <= 0:
        raise InputError("--jobs", str(args.jobs), "must be positive")
    model = BBModel(bb_capacity=params["bb_capacity"], bb_nodes=params["bb_nodes"],
                    distinct_bb=args.artifact_distinct_bb)
    t0 = time.perf_counter()
    if args.artifact_selection and args.walltime_factor is not None:
        raise InputError("--walltime-factor", str(args.walltime_factor),
                         "the artifact's selection takes the requested time as the walltime; drop one of the two")
    if args.delay_grain is not None and args.profiles != "delay":
        raise InputError("--delay-grain", str(args.delay_grain), "rounds delay profiles: add --profiles delay")
    conv = convert_swf(args.trace, name=args.name, nb_res=params["nb_res"], model=model, seed=args.seed,
                       from_job=args.from_job, max_records=args.jobs, drop_oversized=args.drop_oversized,
                       width=args.width, speedup=args.speedup, days=args.days,
                       rule="artifact" if args.artifact_selection else "archive",
                       walltime_factor=args.walltime_factor, profile_type=args.profiles,
                       delay_grain=args.delay_grain)
    return _write_converted(args, conv, params, t0, sized)


def _write_converted(args: argparse.Namespace, conv, params: dict, t0: float, sized: str = "") -> int:
    """Write a converted trace (`from-swf`, `from-sacct`) and print its summary (`sized`: where nb_res came from,
    appended to its line); InputError if no job is left."""
    if not conv.workload.jobs:
        raise InputError(args.trace, "records", "no job left after the filters (" + conv.selection.summary() + ")")
    write_workload(args.output, conv.workload)
    dt = time.perf_counter() - t0
    print(f"{args.trace}: {conv.summary()}")
    print(f"platform: nb_res {params['nb_res']}{sized}, {params['bb_nodes']} BB nodes of "
          f"{params['bb_capacity']} bytes; "
          f"seed {args.seed}")
    print(f"wrote {args.output} ({conv.workload.description}) in {dt:.2f} s")
    return 0


def _cmd_from_sacct(args: argparse.Namespace) -> int:
    from .bb_model import BBModel
    from .convert import convert_trace
    from .sacct import parse_column_map, read_sacct
    params = _model_params(args)
    model = BBModel(bb_capacity=params["bb_capacity"], bb_nodes=params["bb_nodes"])
    t0 = time.perf_counter()
    trace = read_sacct(args.trace, cores_per_node=args.cores_per_node, columns=parse_column_map(args.columns))
    stem = Path(args.trace).name
    for suffix in (".txt", ".csv", ".sacct", ".psv"):
        stem = stem.removesuffix(suffix)
    conv = convert_trace(trace.records, name=args.name or stem, nb_res=params["nb_res"], model=model,
                         seed=args.seed, drop_oversized=args.drop_oversized, width=args.width,
                         speedup=args.speedup, days=args.days, source=args.trace, bb_given=trace.bb,
                         bb_source=trace.bb_source, trace_kind="sacct")
    conv.selection.ignored.update(trace.dropped)
    conv.selection.scanned += sum(trace.dropped.values())
    return _write_converted(args, conv, params, t0)


def _cmd_io_from_darshan(args: argparse.Namespace) -> int:
    from .darshan_io import io_from_darshan
    res = io_from_darshan(cliargs.input_file(args.workload, "workload"), args.logs, args.output)
    print(f"{args.workload}: {res.summary()}")
    print(f"wrote {args.output}")
    return 0


def _cmd_split(args: argparse.Namespace) -> int:
    w = load_workload(cliargs.input_file(args.workload, "workload"))
    if not w.jobs:
        raise InputError(args.workload, "jobs", "empty workload, nothing to split")
    if args.parts is not None and args.parts > len(w.jobs):
        raise InputError("--parts", str(args.parts), f"more parts than the workload's {len(w.jobs)} jobs")
    parts = split_workload(w, weeks=args.weeks, parts=args.parts)
    paths = write_parts(parts, args.output)
    for path, part in zip(paths, parts):
        print(f"{path}: {len(part.jobs)} jobs" + (f" (ids {part.jobs[0].id}..{part.jobs[-1].id})" if part.jobs else ""))
    print(f"{len(parts)} parts, {sum(len(p.jobs) for p in parts)} jobs in all")
    return 0


def _cmd_transform(args: argparse.Namespace) -> int:
    from .transform import transform_bb
    params = dict(PAPER_PLATFORM)
    if args.platform:
        params.update(platform_params(args.platform))
    if args.bb_capacity is not None:
        try:
            params["bb_capacity"] = parse_bytes(args.bb_capacity)
        except ValueError as exc:
            raise InputError("--bb-capacity", str(args.bb_capacity), str(exc)) from None
    if args.bb_nodes is not None:
        params["bb_nodes"] = args.bb_nodes
    for key, opt in (("bb_nodes", "--bb-nodes"), ("bb_capacity", "--bb-capacity")):
        if params[key] <= 0:
            raise InputError(opt, str(params[key]), "must be positive")
    w = load_workload(args.workload)
    res = transform_bb(w, share=args.bb_share, from_above=args.bb_from_above, seed=args.seed,
                       total_bb=params["bb_nodes"] * params["bb_capacity"], bb_nodes=params["bb_nodes"],
                       bb_capacity=params["bb_capacity"], keep_others=args.keep_others, source=args.workload)
    write_workload(args.output, res.workload)
    print(f"{args.workload}: {res.summary()}")
    print(f"wrote {args.output}")
    return 0


def register(subparsers) -> None:
    """Add the ``workload`` command group (``from-swf``, ``split``) to an argparse subparsers
    object; each action sets ``func(args) -> int`` (raises InputError on bad input)."""
    wp = subparsers.add_parser("workload", help="convert an SWF trace to a Batsim workload; split or transform a "
                                                "workload",
                               description="Workload tools (docs/workload.md): SWF → Batsim JSON with the "
                                           "burst-buffer request model, splitting into equal-duration parts, and "
                                           "the BBSched transforms (docs/bbsched.md).")
    sub = wp.add_subparsers(dest="workload_command", metavar="ACTION")

    def _help(args: argparse.Namespace) -> int:
        wp.print_help()
        return 2
    wp.set_defaults(func=_help)

    f = sub.add_parser("from-swf", help="convert an SWF trace (Parallel Workloads Archive)",
                       description="Convert an SWF trace to a Batsim workload with per-node burst-buffer "
                                   "requests, compute and communication (docs/workload.md). Fields are read as the "
                                   "SWF definition says: 0 is a value, -1 is missing; a record is ignored (counted "
                                   "by reason) only when the job lacks a submit time, a run time, processors "
                                   "(requested, else allocated) or a walltime (the requested time, or with "
                                   "--walltime-factor F max(requested time, F x run time)); the first kept job is "
                                   "submitted at t = 0. --artifact-selection applies the paper artifact's rules "
                                   "instead (the bundled workloads).")
    f.add_argument("trace", metavar="TRACE.swf")
    f.add_argument("--output", "-o", required=True, metavar="W.json", help="workload file to write")
    f.add_argument("--jobs", type=cliargs.positive_int, metavar="N",
                   help="read at most N SWF records (kept or ignored) from --from-job on, as the artifact's "
                        "num_jobs (default: all)")
    f.add_argument("--from-job", type=cliargs.nonneg_int, default=0, metavar="K",
                   help="skip records whose job number is < K (default: 0)")
    f.add_argument("--seed", type=cliargs.seed, default=0, help="seed of the random BB/communication draws (default: 0)")
    f.add_argument("--platform", metavar="P",
                   help="platform giving nb_res, BB nodes and capacity (artifact YAML such as dragonfly96.yaml, "
                        "or a SimGrid XML with storage roles and burst_buffer_capacity)")
    f.add_argument("--bb-capacity", metavar="SIZE", help="capacity of one BB node (default: 40GB)")
    f.add_argument("--bb-nodes", type=cliargs.positive_int, metavar="B", help="number of BB nodes (default: 12)")
    f.add_argument("--nb-res", type=cliargs.positive_int, metavar="N",
                   help="number of compute nodes (default: the trace header's MaxProcs, else its MaxNodes, else 96)")
    f.add_argument("--name", help="workload name (default: the trace's file name without .swf)")
    f.add_argument("--profiles", choices=("parallel_homogeneous", "delay"), default="parallel_homogeneous",
                   help="parallel_homogeneous: the paper's model (computation and communication from the run "
                        "time, docs/workload.md); delay: Batsim's delay profiles, each job lasting its recorded run "
                        "time exactly (replaying the trace: run it with --model alloc-only; docs/inputs.md) "
                        "[default: parallel_homogeneous]")
    f.add_argument("--delay-grain", type=cliargs.positive_float, metavar="G",
                   help="with --profiles delay: delay = (floor(run time / G) + 1) x G, the rounding of Batsim's "
                        "swf_to_batsim_workload_delay.py (its --jobGrain, 1 there) (default: the run time as "
                        "recorded)")
    f.add_argument("--drop-oversized", action="store_true",
                   help="drop jobs requesting more than nb_res processors (default: keep; they are rejected "
                        "at run time)")
    f.add_argument("--width", type=cliargs.positive_int, default=1, metavar="K",
                   help="for a larger machine: every job asks for K times its processors, with its per-pair "
                        "communication divided by K (each node sends what it did) (default: 1)")
    f.add_argument("--speedup", type=cliargs.positive_float, default=1.0, metavar="S",
                   help="for a larger machine: submit S times faster (submission times / S) (default: 1)")
    f.add_argument("--days", type=cliargs.positive_float, metavar="D",
                   help="keep only the records submitted within D days of the first, after --speedup "
                        "(e.g. 30: a month of the rescaled trace)")
    wt = f.add_mutually_exclusive_group()
    wt.add_argument("--walltime-factor", type=cliargs.positive_float, metavar="F",
                    help="walltime = max(requested time, F x run time), as Batsim's converter "
                         "(swf_to_batsim_workload_compute_only.py, F = 2 there); for traces without requested "
                         "times (default: the requested time)")
    wt.add_argument("--given-walltime-only", action="store_true",
                    help="walltime = the trace's requested time; jobs without one are ignored and counted (the "
                         "default; as Batsim's converter --given_walltime_only)")
    f.add_argument("--artifact-selection", action="store_true",
                   help="the paper artifact's rules (the bundled workloads and the studies): records whose job "
                        "number, submit time, requested time, run time or requested processors is <= 0 are "
                        "ignored, the first kept job is submitted at t = 1")
    f.add_argument("--artifact-distinct-bb", action="store_true",
                   help="lower bb by 1 byte while another job has the same (walltime, bb), as the paper's "
                        "artifact did")
    f.set_defaults(func=_cmd_from_swf)

    c = sub.add_parser("from-sacct", help="convert a Slurm accounting dump (sacct --parsable2, or CSV)",
                       description="Convert Slurm accounting (sacct --parsable2 output, or a CSV export with "
                                   "--columns) to a Batsim workload (docs/inputs-traces.md). Produce the input with: "
                                   "sacct --allusers --allocations --parsable2 --starttime ... --endtime ... "
                                   "--format JobIDRaw,Submit,Start,End,TimelimitRaw,NNodes,NCPUS,State,ReqTRES,"
                                   "AllocTRES. A job's BB request is its bb/... TRES (ReqTRES, else AllocTRES) per "
                                   "node, else the paper's model (docs/workload.md); each job profile's bb_source says "
                                   "which. Job steps, jobs cancelled before start and jobs not ended are dropped "
                                   "and counted; then the SWF rules apply. A job's simulated duration is not its "
                                   "recorded run time: its compute comes from the paper's model (run time minus its "
                                   "I/O phases at 1250 MB/s, at least 5 %% of it; docs/workload.md §4) and its I/O "
                                   "phases are simulated.")
    c.add_argument("trace", metavar="FILE")
    c.add_argument("--output", "-o", required=True, metavar="W.json", help="workload file to write")
    c.add_argument("--cores-per-node", type=cliargs.positive_int, metavar="C",
                   help="nodes = ceil(CPUs / C) from the NCPUS column (default: the NNodes column)")
    c.add_argument("--columns", metavar="KEY=COL,...",
                   help="for another export: the header name of each key (job_id, submit, start, end, timelimit, "
                        "nodes, cpus, state, req_tres, alloc_tres), e.g. job_id=id,submit=submitted")
    c.add_argument("--seed", type=cliargs.seed, default=0, help="seed of the model's draws (default: 0)")
    c.add_argument("--platform", metavar="P", help="platform giving nb_res, BB nodes and capacity (as from-swf)")
    c.add_argument("--bb-capacity", metavar="SIZE", help="capacity of one BB node (default: 40GB)")
    c.add_argument("--bb-nodes", type=cliargs.positive_int, metavar="B", help="number of BB nodes (default: 12)")
    c.add_argument("--nb-res", type=cliargs.positive_int, metavar="N", help="number of compute nodes (default: 96)")
    c.add_argument("--name", help="workload name (default: the file name without .txt/.csv/.sacct)")
    c.add_argument("--drop-oversized", action="store_true",
                   help="drop jobs requesting more than nb_res nodes (default: keep; they are rejected at run time)")
    c.add_argument("--width", type=cliargs.positive_int, default=1, metavar="K", help="as from-swf --width")
    c.add_argument("--speedup", type=cliargs.positive_float, default=1.0, metavar="S", help="as from-swf --speedup")
    c.add_argument("--days", type=cliargs.positive_float, metavar="D", help="as from-swf --days")
    c.set_defaults(func=_cmd_from_sacct)

    d = sub.add_parser("io-from-darshan", help="set the io-aware model's I/O volumes from Darshan logs",
                       description="Give the jobs of a workload whose id a Darshan log names the I/O volumes the "
                                   "log records (PyDarshan: pip install darshan): per compute node, stage-in = "
                                   "bytes read / nodes, each checkpoint and the stage-out = bytes written / (nodes x "
                                   "compute phases), as job profile fields io_stage_in, io_checkpoint, io_stage_out "
                                   "(docs/inputs-traces.md). bb and the compute are unchanged; jobs without a log "
                                   "keep the model's defaults.")
    d.add_argument("workload", metavar="W.json")
    d.add_argument("logs", nargs="+", metavar="LOG.darshan")
    d.add_argument("--output", "-o", required=True, metavar="OUT.json")
    d.set_defaults(func=_cmd_io_from_darshan)

    s = sub.add_parser("split", help="split a workload into equal-duration parts",
                       description="Split a workload into non-overlapping parts of equal duration (the fewest "
                                   "no longer than --weeks), re-basing each part's submission times to 1 s "
                                   "(the paper's 16 KTH parts). Writes DIR/part-K.json.")
    s.add_argument("workload", metavar="W.json")
    s.add_argument("--weeks", type=cliargs.positive_float, default=3.0, help="longest part, in weeks (default: 3)")
    s.add_argument("--parts", type=cliargs.positive_int, metavar="N", help="exactly N parts (overrides --weeks)")
    s.add_argument("--output", "-o", required=True, metavar="DIR")
    s.set_defaults(func=_cmd_split)

    t = sub.add_parser("transform", help="BBSched's S1-S4: give a share of jobs large BB requests",
                       description="Fan et al. 2019 §4.1 (Fan et al., HPDC'19): give round(SHARE x jobs) jobs, chosen "
                                   "at random, a BB request drawn from the original total requests larger than "
                                   "FRACTION of the machine's total BB (the paper: 5 TB or 20 TB of 1.8 PB, i.e. "
                                   "0.002778 or 0.011111); the other jobs get none. KTH-S1..S4: shares 0.5, 0.75, "
                                   "0.5, 0.75 with fractions 0.002778, 0.002778, 0.011111, 0.011111 (docs/bbsched.md).")
    t.add_argument("workload", metavar="IN.json")
    t.add_argument("--bb-share", type=cliargs.fraction, required=True, metavar="SHARE",
                   help="share of jobs given a BB request (the paper: 0.5 or 0.75)")
    t.add_argument("--bb-from-above", type=cliargs.fraction, required=True, metavar="FRACTION",
                   help="draw from original requests above FRACTION of the machine's total BB")
    t.add_argument("--seed", type=cliargs.seed, default=0, help="seed of the draws (default: 0)")
    t.add_argument("--output", "-o", required=True, metavar="OUT.json")
    t.add_argument("--keep-others", action="store_true",
                   help="the jobs not drawn keep their original request (default: none)")
    t.add_argument("--platform", metavar="P", help="platform giving the BB nodes and capacity (as from-swf)")
    t.add_argument("--bb-capacity", metavar="SIZE", help="capacity of one BB node (default: 40GB)")
    t.add_argument("--bb-nodes", type=cliargs.positive_int, metavar="B", help="number of BB nodes (default: 12)")
    t.set_defaults(func=_cmd_transform)
