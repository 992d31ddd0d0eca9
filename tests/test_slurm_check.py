"""slurm/check.py (`make slurm-check`, docs/deployment.md §4): the slurm.conf it writes and its comparison of two
sweep folders. The real single-node Slurm runs in `make slurm-check`, not in this suite."""
import csv
import importlib.util
from pathlib import Path

from .conftest import ROOT


def _check():
    spec = importlib.util.spec_from_file_location("slurm_check", ROOT / "slurm" / "check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_slurm_conf_is_self_contained(tmp_path, monkeypatch):
    check = _check()
    monkeypatch.setattr(check, "node_line", lambda env: "NodeName=vm CPUs=2 RealMemory=24000 NodeAddr=127.0.0.1")
    conf = dict(ln.split("=", 1) for ln in check.slurm_conf(tmp_path, {}, "vm").splitlines()
                if "=" in ln and not ln.startswith(("#", "NodeName", "PartitionName")))
    assert conf["SlurmctldHost"] == "vm(127.0.0.1)"
    assert conf["AuthInfo"] == f"socket={tmp_path}/munge.sock"
    assert conf["ProctrackType"] == "proctrack/linuxproc" and conf["TaskPlugin"] == "task/none"
    assert conf["SelectType"] == "select/cons_tres" and conf["SelectTypeParameters"] == "CR_Core_Memory"
    assert conf["AccountingStorageType"] == "accounting_storage/none"
    # every file Slurm writes is in the scratch folder, nothing in /etc or /var
    for key in ("StateSaveLocation", "SlurmdSpoolDir", "SlurmctldPidFile", "SlurmdPidFile", "SlurmctldLogFile",
                "SlurmdLogFile"):
        assert conf[key].startswith(str(tmp_path)), key
    assert conf["SlurmctldPort"] != conf["SlurmdPort"]


def _sweep(folder: Path, rows: list[dict], jobs: dict[str, str]) -> Path:
    cols = ["key", "workload", "policy", "options", "model", "seed", "jobs", "dir", "status", "error",
            "mean_waiting_h", "mean_bounded_slowdown", "wall_time_s"]
    folder.mkdir()
    with open(folder / "campaign.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        for r in rows:
            run = folder / "runs" / r["id"]
            run.mkdir(parents=True)
            (run / "jobs.csv").write_text(jobs[r["key"]])
            w.writerow({c: r.get(c, "") for c in cols} | {"dir": str(run), "status": "done"})
    return folder


def test_compare_two_sweeps(tmp_path):
    check = _check()
    rows = [{"key": "w/fcfs-bb/io-aware/seed-0", "id": "abc", "mean_waiting_h": "1.5", "wall_time_s": "3.1"},
            {"key": "w/sjf-bb/io-aware/seed-0", "id": "def", "mean_waiting_h": "1.2", "wall_time_s": "2.0"}]
    jobs = {"w/fcfs-bb/io-aware/seed-0": "job_id\nw0!1\n", "w/sjf-bb/io-aware/seed-0": "job_id\nw0!2\n"}
    a = _sweep(tmp_path / "local", rows, jobs)
    # another folder and other wall times: equal
    b = _sweep(tmp_path / "slurm", [dict(r, wall_time_s="9") for r in rows], jobs)
    assert check.compare(a, b) == []
    c = _sweep(tmp_path / "other", [rows[0], dict(rows[1], mean_waiting_h="1.3")],
               dict(jobs, **{"w/fcfs-bb/io-aware/seed-0": "job_id\nw0!9\n"}))
    assert check.compare(a, c) == ["run w/fcfs-bb/io-aware/seed-0: jobs.csv differs (or is missing)",
                                   "run w/sjf-bb/io-aware/seed-0: mean_waiting_h: 1.2 vs 1.3"]
