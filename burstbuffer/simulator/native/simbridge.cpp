// The simulator's bridged core (docs/simulator-core.md): a job runs in a C++ actor that makes the SimGrid
// calls of the actor core's Python job actor (burstbuffer/simulator/execution.py, job_body), which are
// those of Batsim 4.2.1's execute_job_process: exec_init + wait_for(walltime) (its start and its sleep
// action), cancel on timeout, then the 1-byte put to the server's mailbox when the server is receiving.
// What the Python job actor does in Python (the job's state, its machines, its message) is recorded here,
// in the order the actors ran, and applied by the server after each of its simulation calls (`take`).
#include <Python.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace py = pybind11;
namespace sg4 = simgrid::s4u;

namespace {
std::vector<sg4::Host*> hosts;
sg4::Mailbox* server_box = nullptr;
// the running jobs' actors and current activities, by key
std::unordered_map<long, sg4::ActorPtr> actor_of;
std::unordered_map<long, sg4::ActivityPtr> activity_of;
// job ends in the order the job actors ran: (key, clock, return code, put into the server's receive)
std::vector<std::tuple<long, double, int, bool>> done;
// the server waits for a job message (SimState.receiving): the first job ending then puts into it
bool receiving = false;

void end(long key, int ret) {
  activity_of.erase(key);
  actor_of.erase(key);
  bool put = receiving;
  receiving = false;
  done.emplace_back(key, sg4::Engine::get_clock(), ret, put);
  if (put)
    server_box->put(Py_None, 1);  // its reference was taken by `start_exec`/`start_comm` (the server's get steals it)
}

// the job actor: its activity `a` (started by wait_for when not yet started), its walltime `rem` (< 0: none);
// typed (ExecPtr, CommPtr): Comm overrides wait_for
template <class Ptr>
void run(long key, Ptr a, double rem, int ret) {
  activity_of[key] = a;
  try {
    if (rem < 0)
      a->wait();
    else
      a->wait_for(rem);
  } catch (const simgrid::TimeoutException&) {
    a->cancel();
    end(key, -1);
    return;
  }
  end(key, ret);
}
}  // namespace

PYBIND11_MODULE(MODNAME, m) {
  m.def("init", [](const std::vector<std::string>& names, const std::string& mailbox) {
    hosts.clear();
    for (auto const& n : names)
      hosts.push_back(sg4::Host::by_name(n));
    server_box = sg4::Mailbox::by_name(mailbox);
    actor_of.clear(); activity_of.clear(); done.clear(); receiving = false;
  }, "hosts by index (the simulator's machine order), the server's mailbox; forget every job");
  m.def("start_exec", [](long key, int host, const std::vector<int>& h, const std::vector<double>& flops,
                         const std::vector<double>& bytes, double walltime, int ret) {
    std::vector<sg4::Host*> hs;
    hs.reserve(h.size());
    for (int i : h) hs.push_back(hosts.at(i));
    sg4::Host* where = hosts.at(host);
    Py_INCREF(Py_None);
    py::gil_scoped_release nogil;
    actor_of[key] = sg4::Actor::create("job_executor", where, [key, hs, flops, bytes, walltime, ret]() {
      run(key, sg4::this_actor::exec_init(hs, flops, bytes), walltime, ret);
    });
  }, "run job `key` in an actor on host `host`: a parallel task on hosts (indices), flops per host, bytes "
     "row-major, under `walltime` s (< 0: none); `ret`: its return code when it completes");
  m.def("start_comm", [](long key, int host, int src, int dst, double bytes, double walltime, int ret) {
    sg4::Host* where = hosts.at(host);
    sg4::Host* from = hosts.at(src);
    sg4::Host* to = hosts.at(dst);
    Py_INCREF(Py_None);
    py::gil_scoped_release nogil;
    actor_of[key] = sg4::Actor::create("job_executor", where, [key, from, to, bytes, walltime, ret]() {
      run(key, sg4::Comm::sendto_async(from, to, (uint64_t)bytes), walltime, ret);
    });
  }, "run job `key` in an actor on host `host`: a host-to-host transfer of `bytes` (a data staging)");
  m.def("take", []() {
    std::vector<std::tuple<long, double, int, bool>> out;
    out.swap(done);
    return out;
  }, "the (key, clock, return code, put) of the jobs ended since the last call, in the order their actors ran");
  m.def("pending", []() { return !done.empty(); }, "whether `take` has something");
  m.def("set_receiving", [](bool r) { receiving = r; });
  m.def("receiving", []() { return receiving; });
  m.def("kill", [](long key) {
    auto it = actor_of.find(key);
    if (it == actor_of.end()) return;
    sg4::ActorPtr a = it->second;
    actor_of.erase(it);
    activity_of.erase(key);
    py::gil_scoped_release nogil;
    a->kill();
  }, "kill job `key`'s actor");
  m.def("exec_remaining_ratio", [](long key) {
    auto it = activity_of.find(key);
    if (it == activity_of.end()) return 0.0;
    auto e = boost::static_pointer_cast<sg4::Exec>(it->second);
    py::gil_scoped_release nogil;
    return e->get_remaining_ratio();
  });
  m.def("remaining", [](long key) {
    auto it = activity_of.find(key);
    if (it == activity_of.end()) return 0.0;
    sg4::ActivityPtr a = it->second;
    py::gil_scoped_release nogil;
    return a->get_remaining();
  });
  m.def("nb_running", []() { return actor_of.size(); });
}
