// SPDX-License-Identifier: MIT
// torch_gcoll: what backend.cpp and p2p.cpp share (gcoll errors as C++
// exceptions, staging helpers).  Private to the extension.
#pragma once

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

#include <gcoll.h>

namespace torch_gcoll {

// A failed gcoll call; rc decides whether the communicator is lost.
class GcError : public std::runtime_error {
 public:
  GcError(gcoll_result_t rc, const std::string &m) : std::runtime_error(m), rc(rc) {}
  gcoll_result_t rc;
};

// Throw for a failed @what: gcoll's error string, its last error message,
// and for a timeout, what usually causes one.
[[noreturn]] inline void gc_throw(gcoll_result_t rc, const std::string &what) {
  std::string m = "gcoll: " + what + " failed: " + gcoll_get_error_string(rc);
  const char *last = gcoll_get_last_error();
  if (last && *last) m += std::string(" (") + last + ")";
  if (rc == GCOLL_ERR_TIMEOUT)
    m += "; the process group's timeout passed (a rank is missing, dead, or "
         "issued a different operation or size)";
  throw GcError(rc, m);
}

inline void gc_check(gcoll_result_t rc, const std::string &what) {
  if (rc != GCOLL_SUCCESS) gc_throw(rc, what);
}

// Copy a staging buffer back into the user's tensor, if it was staged.
inline void unstage(const at::Tensor &user, const at::Tensor &buf) {
  if (!user.is_same(buf)) user.copy_(buf);
}

inline size_t nbytes(const at::Tensor &t) { return t.numel() * t.element_size(); }

}  // namespace torch_gcoll
