"""``burstbuffer platform …``: generate SimGrid platforms (docs/platform.md).

    burstbuffer platform dragonfly --groups G --chassis C --routers R --nodes-per-router K
                                   [--bb-nodes-per-chassis 1] [--bb-capacity 40GB] [--pfs-bandwidth 5GBps]
                                   [--link-bandwidth 1250MBps] --output P.xml|P.cpp|P.so [--format xml|cpp|so]

(A value starting with '-' must be given as --option=VALUE, as argparse reads it as an option otherwise.)

``--groups 3 --chassis 4 --routers 3 --nodes-per-router 3`` is the paper's platform
(platforms/dragonfly96.xml). Impossible parameters give one line ``burstbuffer: OPTION: VALUE: REASON``
and exit status 2, and nothing is written.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from .generator import DragonflyParams, format_bandwidth, format_bytes, write_platform


def _cmd_dragonfly(args: argparse.Namespace) -> int:
    p = DragonflyParams.from_options(args.groups, args.chassis, args.routers, args.nodes_per_router,
                                     args.bb_nodes_per_chassis, args.bb_capacity, args.pfs_bandwidth,
                                     args.link_bandwidth)
    fmt = args.format or {".cpp": "cpp", ".so": "so"}.get(Path(args.output).suffix, "xml")
    if fmt == "xml":
        path = write_platform(p, args.output)
        target = ("the XML loads as is in SimGrid <= 3.27 (a Batsim built on it: batsim -p FILE); burstbuffer "
                  "simulate and run load it on any SimGrid they support, rebuilding the Dragonfly with SimGrid's API; "
                  "for a Batsim built on SimGrid >= 3.28, write a C++ plugin instead: --format so")
    else:
        from ..fileio import atomic_write_text
        from .sg_cpp import compile_platform, dragonfly_cpp
        source = dragonfly_cpp(p)
        path = atomic_write_text(Path(args.output), source) if fmt == "cpp" else compile_platform(source, args.output)
        target = ("C++ platform plugin for SimGrid >= 3.28 (batsim -p P.so once compiled: g++ -shared -fPIC -O2 "
                  "-o P.so P.cpp -lsimgrid)" if fmt == "cpp" else
                  "C++ platform plugin for SimGrid >= 3.28, compiled against the installed SimGrid (batsim -p P.so)")
    print(f"wrote {path}: Dragonfly {p.groups} groups x {p.chassis} chassis x {p.routers} routers x "
          f"{p.nodes_per_router} nodes = {p.nb_hosts} hosts; {p.nb_compute} compute nodes, {p.nb_bb_nodes} BB "
          f"nodes of {format_bytes(p.bb_capacity)} ({format_bytes(p.nb_bb_nodes * p.bb_capacity)} in all), "
          f"pfs link {format_bandwidth(p.pfs_bandwidth)}, links {format_bandwidth(p.link_bandwidth)}; "
          + target)
    return 0


def register(subparsers) -> None:
    """Add the ``platform`` command group (``dragonfly``) to an argparse subparsers object; each action
    sets ``func(args) -> int`` (raises InputError on bad input)."""
    pp = subparsers.add_parser("platform", help="generate SimGrid platforms (Dragonfly with burst buffers)",
                               description="Platform tools (docs/platform.md).")
    sub = pp.add_subparsers(dest="platform_command", metavar="ACTION")

    def _help(args: argparse.Namespace) -> int:
        pp.print_help()
        return 2
    pp.set_defaults(func=_help)

    d = sub.add_parser(
        "dragonfly", help="a Dragonfly platform with BB nodes, a PFS and a master (the paper's, at any size)",
        description="Write a SimGrid platform: a Dragonfly of G groups x C chassis x R routers x K nodes "
                    "(node_0 ...), the first B nodes of each chassis being burst-buffer storage nodes, a 'pfs' "
                    "storage host behind one shared link and a 'master' host. --groups 3 --chassis 4 "
                    "--routers 3 --nodes-per-router 3 is the paper's platform (platforms/dragonfly96.xml). "
                    "The file loads in SimGrid <= 3.27 as is and in SimGrid 3.32 through burstbuffer's "
                    "Batsim-compatible engine (burstbuffer run / simulate). SimGrid's Dragonfly routing needs "
                    "G <= R.")
    d.add_argument("--groups", required=True, metavar="G", help="number of groups")
    d.add_argument("--chassis", required=True, metavar="C", help="chassis per group")
    d.add_argument("--routers", required=True, metavar="R", help="routers (blades) per chassis")
    d.add_argument("--nodes-per-router", required=True, metavar="K", help="nodes per router")
    d.add_argument("--bb-nodes-per-chassis", default=1, metavar="B",
                   help="burst-buffer nodes per chassis, the first B nodes of each chassis (default: 1)")
    d.add_argument("--bb-capacity", default="40GB", metavar="SIZE",
                   help="capacity of one BB node, e.g. 40GB, 1TB, 500GiB (default: 40GB)")
    d.add_argument("--pfs-bandwidth", default="5GBps", metavar="BW",
                   help="bandwidth of the PFS's shared link, e.g. 5GBps, 40Gbps (default: 5GBps)")
    d.add_argument("--link-bandwidth", default="1250MBps", metavar="BW",
                   help="bandwidth of every Dragonfly link and of the master's link (default: 1250MBps)")
    d.add_argument("--output", "-o", required=True, metavar="P.xml", help="platform file to write")
    d.add_argument("--format", choices=("xml", "cpp", "so"),
                   help="xml: SimGrid XML (SimGrid <= 3.27; burstbuffer simulate / run on 3.32); cpp: the same "
                        "platform as a C++ plugin source for SimGrid >= 3.28 (real Batsim 4.2.1 on 3.32); so: that "
                        "plugin compiled against the installed SimGrid (g++, libsimgrid-dev) (default: from the "
                        "--output extension, else xml)")
    d.set_defaults(func=_cmd_dragonfly)
