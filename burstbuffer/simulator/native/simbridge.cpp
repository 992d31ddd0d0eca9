// The simulator's bridged core (docs/simulator-core.md): every actor but the server is a C++ actor that
// makes the SimGrid calls of its Batsim 4.2.1 counterpart, in Batsim's order:
// - a job's actor (jobs_execution.cpp, execute_job_process; the actor core's Python job actor,
//   burstbuffer/simulator/execution.py job_body): exec_init + wait_for(walltime) (its start and its sleep
//   action), then the job's message to the server (send: by name, then a 1-byte put), and on a timeout
//   the cancel of the task that SimGrid makes when Batsim's job actor ends; a job whose profile is not one
//   activity (delay, composed: task_execution.cpp execute_task) runs a program of such steps (run_node);
// - the master host's actors (burstbuffer/simulator/masters.py, their Python twins): the static job
//   submitter (job_submitter.cpp), the request-reply actor's events (protocol.cpp send_message_at_time),
//   the CALL_ME_LATER waiter and the killer's report (jobs_execution.cpp).
// A put's payload is a Python object the server's `get` receives: it is created and INCREF'd here, under
// the GIL, when the actor is created (the get steals the reference). What a Python job actor does in
// Python when its job ends (the job's state, its machines) is recorded, in the order the actors ran, and
// applied by the server after each of its simulation calls (`take`).
#include <Python.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <xbt/base.h>  // SG_BEGIN_DECL, which simgrid/version.h uses
#include <simgrid/version.h>
#if defined(BB_PY_SIMGRID_MAJOR) && \
    (SIMGRID_VERSION_MAJOR != BB_PY_SIMGRID_MAJOR || SIMGRID_VERSION_MINOR != BB_PY_SIMGRID_MINOR)
#error "SimGrid's C++ headers are not the version of SimGrid's Python module (two libsimgrid would be loaded)"
#endif
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace py = pybind11;
namespace sg4 = simgrid::s4u;

namespace {
std::vector<sg4::Host*> hosts;
sg4::Host* master = nullptr;
std::string server_name;
// the running jobs' actors, current activities and message payloads, by key
std::unordered_map<long, sg4::ActorPtr> actor_of;
std::unordered_map<long, sg4::ActivityPtr> activity_of;
std::unordered_map<long, PyObject*> payload_of;
// job ends in the order the job actors ran: (key, clock, return code, the error step the job reached, whose
// error the server raises, or -1)
std::vector<std::tuple<long, double, int, int>> done;

// a job's program (start_program): the nodes of its profile tree, the root first. A node is a parallel
// task (EXEC: hosts, flops per host, bytes row-major), a delay (SLEEP), a composed profile (SEQ: its steps'
// nodes, its repeat count) or a step the server reports as an error (ERROR: a missing profile, a bad
// parallel task), each with its profile's return code
enum Kind { EXEC = 0, SLEEP = 1, SEQ = 2, ERROR = 3 };
struct Node {
  int kind;
  std::vector<sg4::Host*> hosts;
  std::vector<double> flops, bytes;
  double delay;
  std::vector<int> seq;
  int repeat;
  int ret;
};
// where a program's job is, for KILL_JOB's progress: the composed nodes with their step index, outermost
// first; the current leaf, its kind and the clock it started at; whether that leaf is an error step
struct Where {
  std::vector<std::pair<int, int>> stack;
  int leaf = -1;
  int kind = EXEC;
  double start = 0;
  bool error = false;
};
std::unordered_map<long, Where> where_of;
// the server sent SIMULATION_ENDS or got its acknowledgement: a waiter then says nothing (waiter_process)
bool end_sent = false;

// SimGrid gives every actor a stack of contexts/stack-size (8 MiB by default) and a guard page, taken with
// posix_memalign when the actor is created and freed when it ends: one actor per message to the scheduler
// and per job. Above glibc's mmap threshold (128 KiB, raised only as far as the chunks freed so far) each
// stack is a fresh mmap, page-faulted in, then munmap'ed. Below it, the stacks come from the heap and are
// reused, their pages already there. Only where memory comes from changes: not a SimGrid call.
void stacks_from_heap() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest (HEAP_MAX_SIZE / 2 on 64-bit)
  mallopt(M_TRIM_THRESHOLD, 128 << 20);  // keep up to 16 freed stacks' worth on top of the heap
#endif
}

// a payload for a put: a new reference (the server's get steals it)
PyObject* owned(const py::object& o) {
  o.inc_ref();
  return o.ptr();
}

// ipp.cpp, send_message: the mailbox looked up by name (a simulation call: Mailbox::by_name), then the put
void send(PyObject* payload) { sg4::Mailbox::by_name(server_name)->put(payload, 1); }

void end(long key, int ret, int error_step = -1) {
  activity_of.erase(key);
  actor_of.erase(key);
  where_of.erase(key);
  PyObject* payload = payload_of[key];
  payload_of.erase(key);
  done.emplace_back(key, sg4::Engine::get_clock(), ret, error_step);
  send(payload);
}

// the job actor: its activity `a` (started by wait_for when not yet started), its walltime `rem` (< 0: none);
void run(long key, sg4::ExecPtr a, double rem, int ret) {
  activity_of[key] = a;
  try {
    if (rem < 0)
      a->wait();
    else
      a->wait_for(rem);
  } catch (const simgrid::TimeoutException&) {
    // Batsim 4.2.1 does not cancel it (task_execution.cpp): it loads its hosts and links until the job's
    // actor ends, once the server has the job's message
    end(key, -1);
    a->cancel();
    return;
  }
  end(key, ret);
}

// task_execution.cpp, execute_task (the actor core's run_profile): run node `i` of a program under the
// time left before the walltime, `rem` (< 0: none; updated), and return its return code (-1: the walltime
// was reached; 1 and `error` set in its Where: an error step). A parallel task whose walltime is reached is left in `orphan` (cancelled once
// the job's message is sent, as in `run`).
int run_node(long key, const std::vector<Node>& nodes, int i, double& rem, sg4::ExecPtr& orphan) {
  const Node& n = nodes[i];
  Where& w = where_of[key];  // an unordered_map's elements do not move
  switch (n.kind) {
    case SLEEP: {
      activity_of.erase(key);
      w.leaf = i; w.kind = SLEEP; w.start = sg4::Engine::get_clock();
      if (rem < 0 || n.delay < rem) {
        sg4::this_actor::sleep_for(n.delay);
        if (rem > 0)
          rem = rem - n.delay;
        return n.ret;
      }
      sg4::this_actor::sleep_for(rem);
      rem = 0.0;
      return -1;
    }
    case SEQ:
      for (int r = 0; r < n.repeat; r++)
        for (size_t k = 0; k < n.seq.size(); k++) {
          w.stack.emplace_back(i, static_cast<int>(k));
          int ret = run_node(key, nodes, n.seq[k], rem, orphan);
          w.stack.pop_back();
          if (ret != 0)
            return ret;
        }
      return n.ret;
    case EXEC: {
      sg4::ExecPtr a = sg4::this_actor::exec_init(n.hosts, n.flops, n.bytes);
      activity_of[key] = a;
      w.leaf = i; w.kind = EXEC; w.start = sg4::Engine::get_clock();
      if (rem < 0) {
        a->wait();
        return n.ret;
      }
      double t0 = sg4::Engine::get_clock();
      try {
        a->wait_for(rem);
      } catch (const simgrid::TimeoutException&) {
        orphan = a;
        rem = 0.0;
        return -1;
      }
      rem = rem - (sg4::Engine::get_clock() - t0);
      return n.ret;
    }
    default:
      w.leaf = i; w.kind = ERROR; w.error = true;
      return 1;  // not 0: the composed profiles around it stop there
  }
}

// a program's job actor: its root node under its walltime `rem` (< 0: none), then its message
void run_program(long key, const std::vector<Node>& nodes, double rem) {
  sg4::ExecPtr orphan;
  int ret = run_node(key, nodes, 0, rem, orphan);
  Where const& w = where_of[key];
  int error_step = w.error ? w.leaf : -1;  // the server raises that step's error when it gets the message
  end(key, ret, error_step);
  if (orphan)
    orphan->cancel();
}

// job_submitter.cpp, static_job_submitter_process: hello; for each job in (subtime, id) order, if its
// subtime is after the current submission date, send the jobs gathered so far, then sleep until it; the
// last group; bye. `subtimes` in that order; `group[i]`: the message that sends jobs up to i.
void submitter(std::vector<double> subtimes, PyObject* hello, std::vector<PyObject*> group, PyObject* bye) {
  send(hello);
  long double current = static_cast<long double>(sg4::Engine::get_clock());
  long last = -1;
  for (size_t i = 0; i < subtimes.size(); i++) {
    long double subtime = subtimes[i];
    if (subtime > current) {
      if (last >= 0)
        send(group[last]);
      last = -1;
      sg4::this_actor::sleep_for(static_cast<double>(subtime - current));
      current = static_cast<long double>(sg4::Engine::get_clock());
    }
    last = static_cast<long>(i);
  }
  if (last >= 0)
    send(group[last]);
  send(bye);
}

// protocol.cpp, send_message_at_time: sleep until `when` if it is ahead, then send
void at_times(std::vector<std::pair<double, PyObject*>> items) {
  for (auto const& [when, payload] : items) {
    double now = sg4::Engine::get_clock();
    if (when > now)
      sg4::this_actor::sleep_for(when - now);
    send(payload);
  }
}
}  // namespace

PYBIND11_MODULE(MODNAME, m) {
  m.def("init", [](const std::vector<std::string>& names, const std::string& master_name,
                   const std::string& mailbox) {
    hosts.clear();
    for (auto const& n : names)
      hosts.push_back(sg4::Host::by_name(n));
    master = sg4::Host::by_name(master_name);
    server_name = mailbox;
    actor_of.clear(); activity_of.clear(); payload_of.clear(); where_of.clear(); done.clear(); end_sent = false;
    stacks_from_heap();
  }, "hosts by index (the simulator's machine order), the master host's name, the server's mailbox; "
     "forget every job; actors' stacks from the heap (glibc)");
  m.def("start_exec", [](long key, int host, const std::vector<int>& h, const std::vector<double>& flops,
                         const std::vector<double>& bytes, double walltime, int ret, py::object payload) {
    std::vector<sg4::Host*> hs;
    hs.reserve(h.size());
    for (int i : h) hs.push_back(hosts.at(i));
    sg4::Host* where = hosts.at(host);
    payload_of[key] = owned(payload);
    py::gil_scoped_release nogil;
    actor_of[key] = sg4::Actor::create("job_executor", where, [key, hs, flops, bytes, walltime, ret]() {
      run(key, sg4::this_actor::exec_init(hs, flops, bytes), walltime, ret);
    });
  }, "run job `key` in an actor on host `host`: a parallel task on hosts (indices), flops per host, bytes "
     "row-major, under `walltime` s (< 0: none); `ret`: its return code when it completes; `payload`: its "
     "message to the server");
  m.def("start_program", [](long key, int host,
                            const std::vector<std::tuple<int, std::vector<int>, std::vector<double>,
                                                         std::vector<double>, double, std::vector<int>, int, int>>&
                                nodes_in,
                            double walltime, py::object payload) {
    if (nodes_in.empty())
      throw std::invalid_argument("start_program: no node");
    std::vector<Node> nodes;
    nodes.reserve(nodes_in.size());
    for (auto const& [kind, h, flops, bytes, delay, seq, repeat, ret] : nodes_in) {
      Node n{kind, {}, flops, bytes, delay, seq, repeat, ret};
      n.hosts.reserve(h.size());
      for (int j : h) n.hosts.push_back(hosts.at(j));
      for (int j : seq)
        if (j < 0 || static_cast<size_t>(j) >= nodes_in.size())
          throw std::invalid_argument("start_program: a step out of the program");
      nodes.push_back(std::move(n));
    }
    sg4::Host* where = hosts.at(host);
    payload_of[key] = owned(payload);
    where_of[key] = Where();
    py::gil_scoped_release nogil;
    actor_of[key] = sg4::Actor::create("job_executor", where, [key, nodes = std::move(nodes), walltime]() {
      run_program(key, nodes, walltime);
    });
  }, "run job `key` in an actor on host `host` through a program: nodes (kind 0 parallel task, 1 delay, "
     "2 composed, 3 error; host indices, flops per host, bytes row-major, delay [s], steps' node indices, "
     "repeat, return code), the root first, under `walltime` s (< 0: none); `payload`: its message");
  m.def("where", [](long key) -> py::tuple {  // one type for both returns (pybind11 >= 3 types make_tuple)
    auto it = where_of.find(key);
    if (it == where_of.end()) return py::make_tuple(py::list(), -1, -1, 0.0);
    py::list stack;
    for (auto const& [node, k] : it->second.stack) stack.append(py::make_tuple(node, k));
    return py::make_tuple(stack, it->second.leaf, it->second.kind, it->second.start);
  }, "where program job `key` is: ([(composed node, step index)] outermost first, leaf node, its kind, the "
     "clock it started at) (leaf -1: none, or not a program's job)");
  m.def("submitter", [](const std::string& name, const std::vector<double>& subtimes, py::object hello,
                        const std::vector<py::object>& group, py::object bye) {
    if (group.size() != subtimes.size())
      throw std::invalid_argument("submitter: one group message per job");
    PyObject* h = owned(hello);
    std::vector<PyObject*> g;
    g.reserve(group.size());
    for (auto const& o : group) g.push_back(owned(o));  // the unsent ones keep a reference: they live anyway
    PyObject* b = owned(bye);
    py::gil_scoped_release nogil;
    sg4::Actor::create(name, master, [subtimes, h, g, b]() { submitter(subtimes, h, g, b); });
  }, "start the static job submitter `name` of a workload on the master host: jobs' subtimes [s] in "
     "(subtime, id) order, its hello, per job the message that sends the jobs up to it, its bye");
  m.def("at_times", [](const std::string& name, const std::vector<std::pair<double, py::object>>& items) {
    std::vector<std::pair<double, PyObject*>> its;
    its.reserve(items.size());
    for (auto const& [when, o] : items) its.emplace_back(when, owned(o));
    py::gil_scoped_release nogil;
    sg4::Actor::create(name, master, [its]() { at_times(its); });
  }, "start an actor `name` on the master host that sends each (date [s], message) in turn, at its date "
     "if it is ahead (the request-reply actor's events, a killer's report)");
  m.def("waiter", [](double target, py::object payload) {
    PyObject* p = owned(payload);
    py::gil_scoped_release nogil;
    sg4::Actor::create("waiter " + std::to_string(target), master, [target, p]() {
      double now = sg4::Engine::get_clock();
      if (now < target) {
        double d = target - now;
        if (d < 1e-5)
          d = 1e-5;
        sg4::this_actor::sleep_for(d);
      }
      if (!end_sent)
        send(p);
    });
  }, "start a CALL_ME_LATER waiter (waiter_process): it sends `payload` at `target` [s] (at least 1e-5 s "
     "later), unless the simulation has ended meanwhile");
  m.def("set_end_sent", []() { end_sent = true; }, "SIMULATION_ENDS was sent: the waiters say nothing");
  m.def("take", []() {
    std::vector<std::tuple<long, double, int, int>> out;
    out.swap(done);
    return out;
  }, "the (key, clock, return code, error step or -1) of the jobs ended since the last call, in the order "
     "their actors ran");
  m.def("pending", []() { return !done.empty(); }, "whether `take` has something");
  m.def("kill", [](long key) {
    auto it = actor_of.find(key);
    if (it == actor_of.end()) return;
    sg4::ActorPtr a = it->second;
    actor_of.erase(it);
    activity_of.erase(key);
    where_of.erase(key);
    auto p = payload_of.find(key);
    if (p != payload_of.end()) {
      Py_DECREF(p->second);  // never sent
      payload_of.erase(p);
    }
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
  m.def("nb_running", []() { return actor_of.size(); });
  m.def("listen", [](const std::string& name) {
    py::gil_scoped_release nogil;
    return static_cast<int>(sg4::Mailbox::by_name(name)->listen());
  }, "SimGrid's sg_mailbox_listen: the mailbox `name` looked up (a simulation call), then whether a message "
     "is queued there (1) or not (0)");
}
