// SPDX-License-Identifier: MIT
// torch_gcoll: a c10d::Backend on libgcoll, and HBM tensors (hl-thunk).
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gcoll.h>
#include <hlthunk.h>

namespace torch_gcoll {

// ---- HBM allocations (hbm.cpp) ----
// One allocation of device memory: CPU-mapped, exported as a dma-buf.
// Freed when the last reference goes (the tensor's storage holds one, a
// backend holds one while the dma-buf is registered with its communicator).
struct HbmAlloc {
  int device = -1;
  hlthunk_hbm_buf buf{};  // made by hlthunk_hbm_buf_create
  HbmAlloc() {
    buf.fd = -1;
    buf.dmabuf_fd = -1;
  }
  ~HbmAlloc();
};
// The allocation holding [p, p+len), or null.
std::shared_ptr<HbmAlloc> hbm_find(const void *p, size_t len);
at::Tensor empty_hbm(std::vector<int64_t> sizes, at::ScalarType dtype, int device);
bool is_hbm(const at::Tensor &t);

// ---- the backend (backend.cpp) ----
class WorkGcoll : public c10d::Work {
 public:
  WorkGcoll(c10d::OpType op, const char *title, std::vector<at::Tensor> outputs);
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  std::vector<at::Tensor> result() override { return outputs_; }
  void complete(std::exception_ptr e);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::string title_;
};

class ProcessGroupGcoll;

// A send or recv with a tag, for the send/recv thread (p2p.cpp): every
// message is a 16-byte header, then the payload.
struct P2p {
  c10::intrusive_ptr<WorkGcoll> work;
  int peer;
  int tag;
  bool is_send;
  at::Tensor user;   // the user's tensor
  at::Tensor buf;    // contiguous staging (or user itself)
};

// One gcoll communicator and the thread that drives it: gcoll allows one
// thread at a time per communicator family.
class Channel {
 public:
  Channel(const char *name, ProcessGroupGcoll *pg) : name_(name), pg_(pg) {}
  ~Channel();
  void init(const c10::intrusive_ptr<c10d::Store> &store, const std::string &key,
            int rank, int size, std::chrono::milliseconds timeout);
  void start(std::function<void()> loop) { thread_ = std::thread(std::move(loop)); }
  void stop();
  // destroy (bounded flush) when healthy, abort otherwise; after stop()
  void close(bool healthy);
  // Wait for a request, polling so that stop() and abort are noticed.
  void wait_req(gcoll_request_t req, const char *what);
  gcoll_comm_t comm = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  std::atomic<bool> stop_flag{false};
  std::string failed;  // first fatal error: later work fails fast with it
  std::map<HbmAlloc *, std::pair<std::shared_ptr<HbmAlloc>, gcoll_mem_t>> hbm;
  void *reg_hbm(const at::Tensor &t);  // registers t's HBM if any
  void sweep_hbm(bool all);
  // HBM registrations so far: native dma-buf MRs, and those the provider
  // could only take through a fallback (CPU mapping or staging)
  std::atomic<uint64_t> hbm_native{0}, hbm_fallback{0};

 private:
  const char *name_;
  ProcessGroupGcoll *pg_;
  std::thread thread_;
};

class ProcessGroupGcoll : public c10d::Backend {
 public:
  ProcessGroupGcoll(const c10::intrusive_ptr<c10d::Store> &store, int rank, int size,
                    std::chrono::milliseconds timeout);
  ~ProcessGroupGcoll() override;

  const std::string getBackendName() const override { return "gcoll"; }
  void shutdown();

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor> &tensors,
      const c10d::BroadcastOptions &opts = c10d::BroadcastOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor> &tensors,
      const c10d::AllreduceOptions &opts = c10d::AllreduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor> &tensors,
      const c10d::AllreduceCoalescedOptions &opts = c10d::AllreduceCoalescedOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor> &tensors,
      const c10d::ReduceOptions &opts = c10d::ReduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>> &outputs,
      std::vector<at::Tensor> &inputs,
      const c10d::AllgatherOptions &opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor &output, at::Tensor &input,
      const c10d::AllgatherOptions &opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
      const c10d::AllgatherOptions &opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor> &outputs,
      std::vector<std::vector<at::Tensor>> &inputs,
      const c10d::ReduceScatterOptions &opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor &output, at::Tensor &input,
      const c10d::ReduceScatterOptions &opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
      const c10d::ReduceScatterOptions &opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor &output, at::Tensor &input,
      std::vector<int64_t> &outputSplits, std::vector<int64_t> &inputSplits,
      const c10d::AllToAllOptions &opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor> &outputs,
      std::vector<at::Tensor> &inputs,
      const c10d::AllToAllOptions &opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>> &outputs,
      std::vector<at::Tensor> &inputs,
      const c10d::GatherOptions &opts = c10d::GatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor> &outputs,
      std::vector<std::vector<at::Tensor>> &inputs,
      const c10d::ScatterOptions &opts = c10d::ScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor> &tensors, int dstRank,
      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor> &tensors, int srcRank,
      int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor> &tensors,
      int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(
      const c10d::BarrierOptions &opts = c10d::BarrierOptions()) override;

  // what the transport of both communicators does (for tests and users):
  // provider, rails, dmabuf_native, rx_cq_data, hbm_native, hbm_fallback
  std::map<std::string, std::string> transport() const;
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  using Fn = std::function<void(Channel &)>;
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType op, const char *title,
                                         std::vector<at::Tensor> outputs, Fn fn);
  void coll_loop();
  void p2p_loop();

  std::chrono::milliseconds timeout_;
  Channel coll_{"collectives", this};
  Channel p2p_{"send/recv", this};
  struct Item {
    c10::intrusive_ptr<WorkGcoll> work;
    Fn fn;
  };
  std::deque<Item> queue_;  // under coll_.mu

  std::deque<P2p> p2p_new_;  // under p2p_.mu
  std::atomic<bool> shut_{false};
};

// Shut every live backend down (interpreter exit).
void shutdown_all();

}  // namespace torch_gcoll
