// The simulator's ZeroMQ side (burstbuffer/simulator/transport.py): Batsim's REQ socket to the scheduler,
// on libzmq's C API, so that the simulator's start does not import pyzmq's Python package (docs/startup.md).
// One request at a time, as Batsim's protocol has it: send the message, then wait for the answer in slices
// of 250 ms, watching the socket's EVENT_DISCONNECTED events (a monitor socket) and the signals Python has
// handlers for. The same socket options and waits as transport.PyZmqTransport, its pyzmq twin.
// Source: libzmq 4.3 (zmq.h: zmq_socket, zmq_setsockopt, zmq_socket_monitor, zmq_poll, zmq_msg_recv).
#include <Python.h>
#include <pybind11/pybind11.h>
#include <zmq.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <tuple>

namespace py = pybind11;

namespace {
double monotonic() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// every frame waiting on `s`, read and dropped; whether there was one
bool drain(void* s) {
  bool any = false;
  for (;;) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    int rc = zmq_msg_recv(&m, s, ZMQ_DONTWAIT);
    zmq_msg_close(&m);
    if (rc < 0)
      return any;
    any = true;
  }
}

// a REQ socket connected to the scheduler, with its disconnection monitor
class Client {
 public:
  Client(const std::string& endpoint, int heartbeat_ms) {
    ctx_ = zmq_ctx_new();
    sock_ = zmq_socket(ctx_, ZMQ_REQ);
    int zero = 0, ivl = heartbeat_ms / 6 > 1 ? heartbeat_ms / 6 : 1;
    zmq_setsockopt(sock_, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(sock_, ZMQ_HEARTBEAT_IVL, &ivl, sizeof ivl);
    zmq_setsockopt(sock_, ZMQ_HEARTBEAT_TIMEOUT, &heartbeat_ms, sizeof heartbeat_ms);
    const char* monitor = "inproc://burstbuffer-simulator-monitor";
    if (zmq_socket_monitor(sock_, monitor, ZMQ_EVENT_DISCONNECTED) != 0)
      fail();
    mon_ = zmq_socket(ctx_, ZMQ_PAIR);
    zmq_setsockopt(mon_, ZMQ_LINGER, &zero, sizeof zero);
    if (zmq_connect(mon_, monitor) != 0 || zmq_connect(sock_, endpoint.c_str()) != 0)
      fail();
  }
  ~Client() { close(); }

  // (status, answer): 0 the answer; 1 no answer within `timeout` s (< 0: no limit); 2 the scheduler
  // disconnected for more than `grace` s without answering; 3 a ZeroMQ error (its text as the answer)
  std::tuple<int, py::bytes> request(const std::string& text, double timeout, double grace) {
    if (sock_ == nullptr)
      return {3, py::bytes("socket closed")};
    drain(mon_);  // disconnections before this request do not concern it
    if (zmq_send(sock_, text.data(), text.size(), 0) < 0)
      return {3, py::bytes(zmq_strerror(zmq_errno()))};
    double deadline = timeout < 0 ? -1 : monotonic() + timeout, lost_at = -1;
    for (;;) {
      zmq_pollitem_t item = {sock_, 0, ZMQ_POLLIN, 0};
      int rc;
      {
        py::gil_scoped_release nogil;
        rc = zmq_poll(&item, 1, 250);
      }
      if (rc < 0 && zmq_errno() != EINTR)
        return {3, py::bytes(zmq_strerror(zmq_errno()))};
      if (rc > 0 && (item.revents & ZMQ_POLLIN)) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, sock_, 0) < 0) {
          zmq_msg_close(&m);
          return {3, py::bytes(zmq_strerror(zmq_errno()))};
        }
        py::bytes answer(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
        zmq_msg_close(&m);
        return {0, answer};
      }
      if (PyErr_CheckSignals() != 0)  // a handler raised (SIGINT, or the simulator's own SIGTERM handler)
        throw py::error_already_set();
      if (drain(mon_) && lost_at < 0)
        lost_at = monotonic();
      double now = monotonic();
      if (lost_at >= 0 && now - lost_at > grace)
        return {2, py::bytes()};
      if (deadline >= 0 && now > deadline)
        return {1, py::bytes()};
    }
  }

  void close() {
    if (sock_ == nullptr)
      return;
    zmq_socket_monitor(sock_, nullptr, 0);
    zmq_close(mon_);
    zmq_close(sock_);
    zmq_ctx_term(ctx_);
    sock_ = mon_ = ctx_ = nullptr;
  }

 private:
  [[noreturn]] void fail() {
    std::string why = zmq_strerror(zmq_errno());
    close();
    throw std::invalid_argument(why);
  }
  void* ctx_ = nullptr;
  void* sock_ = nullptr;
  void* mon_ = nullptr;
};
}  // namespace

PYBIND11_MODULE(MODNAME, m) {
  py::class_<Client>(m, "Client")
      .def(py::init<const std::string&, int>(), py::arg("endpoint"), py::arg("heartbeat_ms"),
           "a REQ socket connected to `endpoint` (ZMQ_LINGER 0, heartbeats every heartbeat_ms / 6, their "
           "timeout heartbeat_ms), its EVENT_DISCONNECTED events monitored; ValueError (ZeroMQ's reason) on "
           "a bad endpoint")
      .def("request", &Client::request, py::arg("text"), py::arg("timeout"), py::arg("grace"),
           "send `text`, wait for the answer: (0, answer bytes), (1, b'') after `timeout` s (< 0: none), "
           "(2, b'') once disconnected for more than `grace` s, (3, ZeroMQ's error text)")
      .def("close", &Client::close, "close the sockets and the context (linger 0)")
      .def_property_readonly_static("version", [](py::object) {
        int a, b, c;
        zmq_version(&a, &b, &c);
        return std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(c);
      });
}
