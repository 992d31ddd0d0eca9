"""The simulator core's compiled bridge to SimGrid's C++ API (issue 30): what SimGrid 3.32's Python API
lacks to run jobs without one Python actor each — waiting on the first of several Execs and Comms
(`Activity::wait_any_for`) and learning, without a simulation call, which activities ended and when
(`Activity::on_completion`).

The bridge keeps the running jobs' activities in the order they were started (Batsim's order: its job
actors do ``exec_init`` + ``start`` one after the other), and the completions in the order SimGrid reports
them. It is a ~150-line pybind11 extension against ``libsimgrid-dev``, compiled on first use with the system's
C++ compiler (``$CXX``, else ``c++``) and cached like the plan engine (`schedulers._cbuild.cache_dir`).

`load()` returns the module or raises `NativeUnavailable` (no compiler, no SimGrid or pybind11 headers,
disabled by ``BURSTBUFFER_NATIVE=0``). Which core runs: `burstbuffer.simulator.execution.core_of`.

Source: SimGrid 3.32 ``include/simgrid/s4u/Activity.hpp`` (``wait_any_for``, ``on_completion_cb``,
``get_finish_time``), ``Exec.hpp`` (``get_remaining_ratio``), ``Comm.hpp`` (``sendto_async``).
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import platform as _platform
import shutil
import subprocess
import sysconfig
import tempfile

from ..schedulers._cbuild import NativeUnavailable, cache_dir

#: compiler flags (no fused multiply-add: the bridge computes nothing, but keep the engines' rule)
CXXFLAGS = ("-O2", "-std=c++17", "-ffp-contract=off", "-shared", "-fPIC")

SOURCE = r"""
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <simgrid/s4u.hpp>
#include <unordered_map>
#include <vector>

namespace py = pybind11;
namespace sg4 = simgrid::s4u;

namespace {
std::vector<sg4::Host*> hosts;
// running job activities, in start order (entries whose key is gone are skipped and compacted)
std::vector<std::pair<long, sg4::ActivityPtr>> running;
std::unordered_map<long, sg4::ActivityPtr> by_key;
std::unordered_map<const sg4::Activity*, long> key_of;
// completions reported by SimGrid, in its order: (key, clock); key -1 = the server's message
std::vector<std::pair<long, double>> done;
sg4::CommPtr msg;
// a receive nobody sends to: always waited on, so that a wait with no activity running is a timer alone,
// as the actor core's wait on the server's posted receive is
sg4::CommPtr idle;
void* idle_data = nullptr;
bool hooked = false;

void on_completion(sg4::Activity const& a) {
  auto it = key_of.find(&a);
  if (it == key_of.end())
    return;
  long key = it->second;
  key_of.erase(it);
  // SimGrid 3.32 reports an Exec's completion when an actor waits on or tests it, not when it ends:
  // the date is the activity's own finish time
  if (a.get_state() == sg4::Activity::State::FINISHED)
    done.emplace_back(key, a.get_finish_time());
}

void track(long key, sg4::ActivityPtr a) {
  key_of[a.get()] = key;
  by_key[key] = a;
  running.emplace_back(key, a);
}
}  // namespace

PYBIND11_MODULE(MODNAME, m) {
  m.def("init", [](const std::vector<std::string>& names) {
    hosts.clear();
    for (auto const& n : names)
      hosts.push_back(sg4::Host::by_name(n));
    running.clear(); by_key.clear(); key_of.clear(); done.clear(); msg = nullptr; idle = nullptr;
    if (!hooked) {
      sg4::Activity::on_completion_cb(on_completion);
      hooked = true;
    }
  }, "hosts by index (the simulator's machine order); forget every activity");
  m.def("start_exec", [](long key, const std::vector<int>& h, const std::vector<double>& flops,
                         const std::vector<double>& bytes) {
    std::vector<sg4::Host*> hs;
    hs.reserve(h.size());
    for (int i : h) hs.push_back(hosts.at(i));
    sg4::ExecPtr e = sg4::this_actor::exec_init(hs, flops, bytes);
    e->start();
    track(key, e);
  }, "start a parallel task of job `key` on hosts (indices), flops per host, bytes row-major");
  m.def("start_comm", [](long key, int src, int dst, double bytes) {
    sg4::CommPtr c = sg4::Comm::sendto_async(hosts.at(src), hosts.at(dst), (uint64_t)bytes);
    track(key, c);
  }, "start a host-to-host transfer of job `key`");
  m.def("send_msg", [](int src, int dst) {
    msg = sg4::Comm::sendto_async(hosts.at(src), hosts.at(dst), 1);
    key_of[msg.get()] = -1;
  }, "start the server's 1-byte message from host src to host dst");
  m.def("wait", [](double timeout) {
    if (!idle)
      idle = sg4::Mailbox::by_name("burstbuffer-bridge-idle")->get_async<void>(&idle_data);
    std::vector<sg4::ActivityPtr> v;
    v.reserve(running.size() + 2);
    v.push_back(idle);
    if (msg) v.push_back(msg);
    size_t k = 0;
    for (auto& p : running)
      if (by_key.count(p.first)) {
        v.push_back(p.second);
        running[k++] = p;
      }
    running.resize(k);
    ssize_t r;
    {
      py::gil_scoped_release nogil;
      r = sg4::Activity::wait_any_for(v, timeout);
    }
    return r >= 0;
  }, "block until one of the activities ends (True) or `timeout` s pass (False; < 0: no timeout)");
  m.def("poll", []() {
    std::vector<sg4::ActivityPtr> v;
    v.reserve(running.size() + 1);
    if (msg) v.push_back(msg);
    for (auto& p : running)
      if (by_key.count(p.first) && key_of.count(p.second.get()))
        v.push_back(p.second);
    py::gil_scoped_release nogil;
    while (!v.empty()) {
      ssize_t r = sg4::Activity::test_any(v);
      if (r < 0) break;
      v.erase(v.begin() + r);
    }
  }, "report the activities that ended while the server did something else (SimGrid reports an end when "
     "it is tested): to `take`, in start order");
  m.def("take", []() {
    std::vector<std::pair<long, double>> out;
    out.swap(done);
    for (auto const& p : out) {
      if (p.first == -1) msg = nullptr;
      else by_key.erase(p.first);
    }
    return out;
  }, "the (key, clock) of the activities ended since the last call, in SimGrid's order (key -1: message)");
  m.def("cancel", [](long key) {
    auto it = by_key.find(key);
    if (it == by_key.end()) return;
    sg4::ActivityPtr a = it->second;
    by_key.erase(it);
    key_of.erase(a.get());
    a->cancel();
  }, "cancel job `key`'s activity");
  m.def("exec_remaining_ratio", [](long key) {
    auto it = by_key.find(key);
    if (it == by_key.end()) return 0.0;
    return boost::static_pointer_cast<sg4::Exec>(it->second)->get_remaining_ratio();
  });
  m.def("remaining", [](long key) {
    auto it = by_key.find(key);
    if (it == by_key.end()) return 0.0;
    return it->second->get_remaining();
  });
  m.def("nb_running", []() { return by_key.size(); });
}
"""


def _includes() -> list[str]:
    flags = [f"-I{sysconfig.get_paths()['include']}"]
    try:
        import pybind11  # noqa: PLC0415  (pip's pybind11, when the Debian headers are absent)
        flags.append(f"-I{pybind11.get_include()}")
    except ImportError:
        pass
    return flags


def load():
    """The compiled bridge module (built on first use, cached). Raises NativeUnavailable when it cannot
    be built (one line: why)."""
    if os.environ.get("BURSTBUFFER_NATIVE", "1").strip().lower() in ("0", "no", "false", "off"):
        raise NativeUnavailable("disabled by BURSTBUFFER_NATIVE")
    cxx = os.environ.get("CXX", "c++")
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    inc = _includes()
    tag = hashlib.sha256("\0".join([SOURCE, cxx, *CXXFLAGS, *inc, _platform.machine(), suffix]).encode()
                         ).hexdigest()[:16]
    name = f"_bb_simbridge_{tag}"
    d = cache_dir()
    so = d / f"{name}{suffix}"
    if not so.exists():
        if shutil.which(cxx) is None:
            raise NativeUnavailable(f"no C++ compiler ({cxx!r} not found)")
        fd, src = tempfile.mkstemp(suffix=".cpp", dir=d)
        with os.fdopen(fd, "w") as f:
            f.write(SOURCE)
        tmp = src[:-4] + suffix
        try:
            r = subprocess.run([cxx, *CXXFLAGS, f"-DMODNAME={name}", *inc, "-o", tmp, src, "-lsimgrid"],
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                last = [ln for ln in r.stderr.strip().splitlines() if "error" in ln][:1] or [str(r.returncode)]
                raise NativeUnavailable(f"compilation failed: {last[0]}")
            os.replace(tmp, so)
        finally:
            for x in (src, tmp):
                try:
                    os.unlink(x)
                except OSError:
                    pass
    spec = importlib.util.spec_from_file_location(name, so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
