// SPDX-License-Identifier: MIT
// torch_gcoll.empty_hbm(): CPU tensors whose storage is HBM of gaudi_nic.N,
// allocated through hl-thunk, CPU-mapped and exported as a dma-buf.  The
// storage's deleter drops the allocation; a backend that registered the
// dma-buf keeps its own reference until it deregisters it.
#include "gcoll_torch.hpp"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <vector>

#include <hlthunk.h>

namespace torch_gcoll {

namespace {
std::mutex g_mu;
std::map<int, int> g_devfd;                          // device index -> fd
std::map<uintptr_t, std::weak_ptr<HbmAlloc>> g_allocs;  // cpu address -> allocation

// fds of a device that was reset since they were opened: they only fail
// (EIO), but the allocations made through them still name them in their
// deleters, so they stay open rather than have their numbers reused
std::vector<int> g_retired;

// The live fd of gaudi_nic.<device>, with its device info in *hw (which
// also tells whether the device was reset under a cached fd).
int devfd(int device, struct hlthunk_hw_ip_info *hw) {
  std::lock_guard<std::mutex> l(g_mu);
  auto it = g_devfd.find(device);
  if (it != g_devfd.end()) {
    if (hlthunk_get_hw_ip_info(it->second, hw) == 0) return it->second;
    TORCH_CHECK(errno == EIO, "torch_gcoll.empty_hbm: gaudi_nic.", device,
                ": hlthunk_get_hw_ip_info: ", strerror(errno));
    // a reset (devlink dev reload) killed the context: a new open serves
    // the memory allocated from now on
    g_retired.push_back(it->second);
    g_devfd.erase(it);
  }
  int fd = hlthunk_open_by_index((uint32_t)device);
  TORCH_CHECK(fd >= 0, "torch_gcoll.empty_hbm: no gaudi_nic device ", device,
              " (hlthunk_open_by_index(", device, "): ", strerror(-fd),
              "); load gaudi_nic.ko, and gaudi_nic_sim.ko or the hardware that",
              " creates gaudi_nic.", device, ", first");
  g_devfd[device] = fd;
  TORCH_CHECK(hlthunk_get_hw_ip_info(fd, hw) == 0, "torch_gcoll.empty_hbm: gaudi_nic.",
              device, ": hlthunk_get_hw_ip_info: ", strerror(errno));
  return fd;
}
}  // namespace

HbmAlloc::~HbmAlloc() {
  {
    std::lock_guard<std::mutex> l(g_mu);
    auto it = g_allocs.find((uintptr_t)buf.cpu);
    if (it != g_allocs.end() && it->second.expired()) g_allocs.erase(it);
  }
  hlthunk_hbm_buf_destroy(&buf);
}

std::shared_ptr<HbmAlloc> hbm_find(const void *p, size_t len) {
  std::lock_guard<std::mutex> l(g_mu);
  if (g_allocs.empty()) return nullptr;
  auto it = g_allocs.upper_bound((uintptr_t)p);
  if (it == g_allocs.begin()) return nullptr;
  --it;
  auto a = it->second.lock();
  if (!a) return nullptr;
  uintptr_t b = (uintptr_t)a->buf.cpu;
  if ((uintptr_t)p + len > b + a->buf.size) return nullptr;
  return a;
}

at::Tensor empty_hbm(std::vector<int64_t> sizes, at::ScalarType dtype, int device) {
  TORCH_CHECK(device >= 0, "torch_gcoll.empty_hbm: device must be >= 0, got ", device);
  int64_t numel = 1;
  for (auto s : sizes) {
    TORCH_CHECK(s >= 0, "torch_gcoll.empty_hbm: negative size ", s);
    numel *= s;
  }
  struct hlthunk_hw_ip_info hw;
  memset(&hw, 0, sizeof(hw));
  int fd = devfd(device, &hw);
  uint64_t page = hw.dram_page_size ? hw.dram_page_size : 4096;
  uint64_t want = (uint64_t)numel * c10::elementSize(dtype);
  uint64_t size = want ? (want + page - 1) / page * page : page;
  auto a = std::make_shared<HbmAlloc>();
  a->device = device;
  if (hlthunk_hbm_buf_create(fd, size, HLTHUNK_HBM_CPU_MAP, &a->buf)) {
    int e = errno;
    TORCH_CHECK(strcmp(a->buf.step, "allocation"), "torch_gcoll.empty_hbm: gaudi_nic.", device,
                ": cannot allocate ", size, " bytes of HBM (", hw.dram_free, " free): ",
                strerror(e));
    TORCH_CHECK(false, "torch_gcoll.empty_hbm: gaudi_nic.", device, ": ", a->buf.step,
                " of ", size, " bytes of HBM failed: ", strerror(e));
  }
  {
    std::lock_guard<std::mutex> l(g_mu);
    g_allocs[(uintptr_t)a->buf.cpu] = a;
  }
  auto keep = a;
  return at::from_blob(
      a->buf.cpu, sizes, [keep](void *) mutable { keep.reset(); },
      at::TensorOptions().dtype(dtype).device(at::kCPU));
}

bool is_hbm(const at::Tensor &t) {
  if (!t.defined() || !t.device().is_cpu() || !t.has_storage()) return false;
  const void *p = t.storage().data();
  return p && hbm_find(p, t.storage().nbytes()) != nullptr;
}

}  // namespace torch_gcoll
