// SPDX-License-Identifier: MIT
// torch_gcoll._C: the backend class (a torch Backend subclass) and HBM helpers.
#include "gcoll_torch.hpp"

#include <torch/csrc/utils/pybind.h>
#include <pybind11/chrono.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace {
// Same holder as torch's Backend binding: drops the last reference without
// the GIL, since the destructor joins worker threads.
template <typename T>
class NoGilPtr {
  c10::intrusive_ptr<T> impl_;

 public:
  NoGilPtr() = default;
  NoGilPtr(const NoGilPtr &) = default;
  NoGilPtr(NoGilPtr &&) = default;
  NoGilPtr &operator=(const NoGilPtr &) = default;
  NoGilPtr &operator=(NoGilPtr &&) = default;
  /* implicit */ NoGilPtr(c10::intrusive_ptr<T> impl) : impl_(std::move(impl)) {}
  explicit NoGilPtr(T *impl) : impl_(c10::intrusive_ptr<T>::unsafe_steal_from_new(impl)) {}
  ~NoGilPtr() {
    if (impl_) {
      if (PyGILState_Check()) {
        py::gil_scoped_release nogil;
        impl_.reset();
      } else {
        impl_.reset();
      }
    }
  }
  T &operator*() const noexcept { return *impl_; }
  T *operator->() const noexcept { return impl_.get(); }
  T *get() const noexcept { return impl_.get(); }
  void reset() noexcept { impl_.reset(); }
  operator bool() const noexcept { return impl_; }
};
}  // namespace

PYBIND11_DECLARE_HOLDER_TYPE(T, NoGilPtr<T>, true)

PYBIND11_MODULE(_C, m) {
  using torch_gcoll::ProcessGroupGcoll;
  m.doc() = "torch.distributed backend 'gcoll' on libgcoll";
  py::object backend = py::module::import("torch._C._distributed_c10d").attr("Backend");
  py::class_<ProcessGroupGcoll, NoGilPtr<ProcessGroupGcoll>>(m, "ProcessGroupGcoll", backend)
      .def(py::init([](const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                       std::chrono::milliseconds timeout) {
             return c10::make_intrusive<ProcessGroupGcoll>(store, rank, size, timeout);
           }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>())
      .def("_transport", &ProcessGroupGcoll::transport)
      .def("_shutdown", &ProcessGroupGcoll::shutdown, py::call_guard<py::gil_scoped_release>());
  m.def("_shutdown_all", &torch_gcoll::shutdown_all, py::call_guard<py::gil_scoped_release>());
  m.def(
      "empty_hbm",
      [](std::vector<int64_t> sizes, const at::Tensor &like, int device) {
        return torch_gcoll::empty_hbm(sizes, like.scalar_type(), device);
      },
      py::arg("sizes"), py::arg("dtype_of"), py::arg("device"));
  m.def("is_hbm", &torch_gcoll::is_hbm, py::arg("tensor"));
  m.def("gcoll_version", [] { return gcoll_get_version(); });
}
