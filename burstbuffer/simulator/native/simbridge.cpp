
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
