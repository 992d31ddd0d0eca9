"""Links a compute phase's flows cross under each network model (docs/io-model.md §5): for the first N compute
nodes of a platform, the number of flows, of distinct links (the terms of the phase's one ptask_L07 action in the
bandwidth-sharing system) and the largest load on a link, in units of ``com`` (the node links carry N-1).

Usage: python benchmarks/network_links.py N [PLATFORM]   (default platforms/dragonfly960.xml)
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from burstbuffer.platforms.simgrid_xml import parse_platform, resolve_machines  # noqa: E402
from burstbuffer.simulator.platform_loader import load_into_engine  # noqa: E402
from burstbuffer.simulator.server import import_simgrid  # noqa: E402
from burstbuffer.simulator.network import NETWORK_MODELS, homogeneous_bytes  # noqa: E402

n = int(sys.argv[1])
spec = parse_platform(sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "platforms" / "dragonfly960.xml"))
m = resolve_machines(spec)
sg = import_simgrid(True)
e = sg.Engine(["links", "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
load_into_engine(e, spec)
names = sorted((x.name for x in m.compute), key=lambda s: int("".join(c for c in s if c.isdigit()) or 0))[:n]
hosts = [e.host_by_name(h) for h in names]
for model in NETWORK_MODELS:
    mat = homogeneous_bytes(n, 1.0, model)
    if not mat:
        print(f"{model:<12} flows        0  (the phase is timed alone and run as computation)")
        continue
    links: dict[str, float] = {}
    for k, b in enumerate(mat):
        if b > 0:
            for link in hosts[k // n].route_to(hosts[k % n])[0]:
                links[link.name] = links.get(link.name, 0.0) + b
    print(f"{model:<12} flows {sum(1 for b in mat if b > 0):>8}  distinct links {len(links):>6}  "
          f"max link load {max(links.values()):>9.0f} x com  (node links: {n - 1})")
