// The embedded simulator's energy bridge (burstbuffer/simulator/energy.py): SimGrid 3.32's host energy
// plugin, which its Python API does not expose. Sums are long doubles, as Batsim 4.2.1 keeps them
// (machines.cpp: total_consumed_energy, total_wattmin, consumed_energy_on_machines); a long double crosses
// to Python as two doubles (hi, lo) with hi + lo == the value exactly (64-bit significand).
#include <xbt/base.h>  // SG_BEGIN_DECL, which simgrid/version.h uses
#include <simgrid/version.h>
#if defined(BB_PY_SIMGRID_MAJOR) && \
    (SIMGRID_VERSION_MAJOR != BB_PY_SIMGRID_MAJOR || SIMGRID_VERSION_MINOR != BB_PY_SIMGRID_MINOR)
#error "SimGrid's C++ headers are not the version of SimGrid's Python module (two libsimgrid would be loaded)"
#endif
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <simgrid/host.h>
#include <simgrid/plugins/energy.h>
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;
namespace sg4 = simgrid::s4u;

namespace {
std::vector<sg4::Host*> hosts;

std::pair<double, double> split(long double x) {
  double hi = static_cast<double>(x);
  double lo = static_cast<double>(x - static_cast<long double>(hi));
  return {hi, lo};
}

long double join(double hi, double lo) { return static_cast<long double>(hi) + static_cast<long double>(lo); }
}  // namespace

PYBIND11_MODULE(MODNAME, m) {
  m.def("plugin_init", []() { sg_host_energy_plugin_init(); },
        "enable SimGrid's host energy plugin (before the platform is loaded)");
  m.def("bind", [](const std::vector<std::string>& names) {
    hosts.clear();
    for (auto const& n : names)
      hosts.push_back(sg4::Host::by_name(n));
  }, "hosts by index (the simulator's machine order)");
  m.def("consumed", [](const std::vector<int>& idx) {
    long double total = 0;
    for (int i : idx)
      total += static_cast<long double>(sg_host_get_consumed_energy(hosts.at(i)));
    return split(total);
  }, py::call_guard<py::gil_scoped_release>(),  // may be a simulation call: other actors run meanwhile
     "long double sum, in the given order, of the hosts' consumed energy [J], as (hi, lo)");
  m.def("wattmin", [](const std::vector<int>& idx) {
    long double total = 0;
    for (int i : idx) {
      sg4::Host* h = hosts.at(i);
      total += static_cast<long double>(sg_host_get_wattmin_at(h, static_cast<int>(h->get_pstate())));
    }
    return split(total);
  }, "long double sum of the hosts' epsilon wattage at their current pstate [W], as (hi, lo)");
  m.def("get_pstate", [](int i) { return static_cast<long>(hosts.at(i)->get_pstate()); });
  m.def("set_pstate", [](int i, int ps) { hosts.at(i)->set_pstate(ps); },
        py::call_guard<py::gil_scoped_release>());
  m.def("fmt_Lf", [](double hi, double lo) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%Lf", join(hi, lo));
    return std::string(buf);
  }, "C's %Lf of the long double hi + lo");
}
