// The order in which Batsim 4.2.1 iterates over a workload's jobs (Jobs::jobs(), jobs.hpp): a
// std::unordered_map keyed by the job identifier, hashed as std::hash<std::string> of "WORKLOAD!NAME"
// (JobIdentifierHasher, jobs.cpp), filled in the workload file's order (Jobs::load_from_json). The
// iteration order of that map is the C++ library's; this builds the same map with the same library and
// reads it back. Batsim's --no-sched starts the jobs in this order (batexec_job_launcher_process,
// job_submitter.cpp); burstbuffer/simulator/batexec.py loads it with ctypes.
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>

namespace {
struct Hasher {
  std::size_t operator()(const std::string& s) const { return std::hash<std::string>()(s); }
};
}  // namespace

// keys: n NUL-terminated strings one after the other; out: n ints, the keys' indices in iteration order.
extern "C" int hash_table_order(const char* keys, int n, int* out) {
  std::unordered_map<std::string, int, Hasher> table;
  const char* p = keys;
  for (int i = 0; i < n; ++i) {
    table[std::string(p)] = i;
    p += std::strlen(p) + 1;
  }
  int k = 0;
  for (const auto& kv : table) out[k++] = kv.second;
  return k;
}
