// SPDX-License-Identifier: MIT
// ProcessGroupGcoll: torch.distributed's c10d::Backend on libgcoll.
//
// Two gcoll communicators per process group, each bootstrapped through the
// group's (prefix) store and driven by its own thread, since gcoll allows
// one thread at a time per communicator family:
//   - collectives: a FIFO of work items, run one after the other (every
//     rank issues them in the same order);
//   - send/recv: tags travel in a 16-byte header before each payload; a
//     header whose tag nobody waits for yet is an unexpected message, whose
//     payload is received into a buffer until a matching recv is posted.
// Workers poll their requests (gcoll_test) so that shutdown is noticed;
// every gcoll operation carries the process group's timeout.
#include <Python.h>

#include "gcoll_torch.hpp"
#include "util.hpp"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <sched.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <stdexcept>

namespace torch_gcoll {

namespace {

bool fatal(gcoll_result_t rc) {
  return rc == GCOLL_ERR_TIMEOUT || rc == GCOLL_ERR_REMOTE || rc == GCOLL_ERR_ABORTED ||
         rc == GCOLL_ERR_FABRIC || rc == GCOLL_ERR_SYSTEM;
}

// Reduction datatype; throws for what gcoll cannot reduce.
gcoll_datatype_t red_type(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return GCOLL_FLOAT32;
    case at::kDouble: return GCOLL_FLOAT64;
    case at::kHalf: return GCOLL_FLOAT16;
    case at::kBFloat16: return GCOLL_BFLOAT16;
    case at::kChar: return GCOLL_INT8;
    case at::kByte: return GCOLL_UINT8;
    case at::kBool: return GCOLL_UINT8;
    case at::kInt: return GCOLL_INT32;
    case at::kLong: return GCOLL_INT64;
    case at::kUInt32: return GCOLL_UINT32;
    case at::kUInt64: return GCOLL_UINT64;
    default:
      TORCH_CHECK(false, "gcoll: cannot reduce tensors of dtype ", t,
                  " (supported: float16/32/64, bfloat16, int8, uint8, int32, "
                  "int64, uint32, uint64, bool; complex with SUM/AVG/PREMUL_SUM)");
  }
}

const char *op_name(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

// What a reduction does, decided (and validated) in the caller's thread.
struct Red {
  gcoll_redop_t op = GCOLL_SUM;
  bool premul = false;
  double factor = 1.0;
  at::Tensor tfactor;
};

Red check_red(const at::Tensor &t, const c10d::ReduceOp &rop) {
  Red r;
  auto op = rop.op_;
  TORCH_CHECK(op != c10d::ReduceOp::BAND && op != c10d::ReduceOp::BOR &&
                  op != c10d::ReduceOp::BXOR,
              "gcoll does not support ReduceOp.", op_name(op),
              " (bitwise reductions); use SUM, AVG, PRODUCT, MIN, MAX or PREMUL_SUM");
  if (t.is_complex()) {
    TORCH_CHECK(op == c10d::ReduceOp::SUM || op == c10d::ReduceOp::AVG ||
                    op == c10d::ReduceOp::PREMUL_SUM,
                "gcoll: complex tensors can only be reduced with SUM, AVG or PREMUL_SUM, not ",
                op_name(op));
  } else {
    red_type(t.scalar_type());
  }
  bool b = t.scalar_type() == at::kBool;
  switch (op) {
    case c10d::ReduceOp::SUM: r.op = b ? GCOLL_MAX : GCOLL_SUM; break;
    case c10d::ReduceOp::PRODUCT: r.op = b ? GCOLL_MIN : GCOLL_PROD; break;
    case c10d::ReduceOp::MIN: r.op = GCOLL_MIN; break;
    case c10d::ReduceOp::MAX: r.op = GCOLL_MAX; break;
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(!b, "gcoll: ReduceOp.AVG is not defined for bool tensors");
      r.op = GCOLL_AVG;
      break;
    case c10d::ReduceOp::PREMUL_SUM: {
      TORCH_CHECK(!b, "gcoll: ReduceOp.PREMUL_SUM is not defined for bool tensors");
      r.op = GCOLL_SUM;
      r.premul = true;
      auto *s = dynamic_cast<c10d::NCCLPreMulSumSupplement *>(rop.supplement_.get());
      TORCH_CHECK(s, "gcoll: PREMUL_SUM without its factor");
      if (s->tensor_factor.defined())
        r.tfactor = s->tensor_factor.to(at::kCPU);
      else
        r.factor = s->double_factor;
      break;
    }
    default:
      TORCH_CHECK(false, "gcoll does not support ReduceOp.", op_name(op));
  }
  return r;
}

void check_cpu(const at::Tensor &t, const char *what) {
  TORCH_CHECK(t.defined(), "gcoll: ", what, ": undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), "gcoll: ", what, ": tensors must be on the CPU, got ",
              t.device());
  TORCH_CHECK(!t.is_sparse(), "gcoll: ", what, ": sparse tensors are not supported");
}

void check_one(const std::vector<at::Tensor> &ts, const char *what) {
  TORCH_CHECK(ts.size() == 1, "gcoll: ", what, " takes exactly one tensor per call, got ",
              ts.size());
  check_cpu(ts[0], what);
}

at::Tensor stage(const at::Tensor &t) { return t.is_contiguous() ? t : t.contiguous(); }
// the real view of a complex tensor, so that reductions see floats
at::Tensor realv(const at::Tensor &t) { return t.is_complex() ? at::view_as_real(t) : t; }

void apply_premul(const Red &r, at::Tensor &v) {
  if (!r.premul) return;
  if (r.tfactor.defined())
    v.mul_(r.tfactor.to(v.scalar_type()));
  else
    v.mul_(r.factor);
}

// Live backends, shut down at interpreter exit (torch_gcoll._shutdown_all).
std::mutex g_live_mu;
std::set<ProcessGroupGcoll *> g_live;

}  // namespace

// ------------------------------------------------------------------ Work

WorkGcoll::WorkGcoll(c10d::OpType op, const char *title, std::vector<at::Tensor> outputs)
    : Work(-1, op),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()))),
      title_(title) {}

c10::intrusive_ptr<c10::ivalue::Future> WorkGcoll::getFuture() { return future_; }

bool WorkGcoll::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (timeout == kNoTimeout)
    cv_.wait(lock, [&] { return completed_; });
  else if (!cv_.wait_for(lock, timeout, [&] { return completed_; }))
    TORCH_CHECK(false, "gcoll: ", title_, " did not complete within ", timeout.count(),
                " ms (Work.wait timeout)");
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

void WorkGcoll::complete(std::exception_ptr e) {
  // Work first: whoever the future wakes sees is_completed() true
  finish(e);
  if (e)
    future_->setError(e);
  else
    future_->markCompleted(c10::IValue(outputs_));
}

// --------------------------------------------------------------- Channel

void Channel::init(const c10::intrusive_ptr<c10d::Store> &store, const std::string &key,
                   int rank, int size, std::chrono::milliseconds timeout) {
  gcoll_unique_id id;
  if (rank == 0) {
    gc_check(gcoll_get_unique_id(&id), "gcoll_get_unique_id");
    std::vector<uint8_t> v(sizeof(id));
    memcpy(v.data(), &id, sizeof(id));
    store->set(key, v);
  } else {
    auto v = store->get(key);
    TORCH_CHECK(v.size() == sizeof(id), "gcoll: bad unique id in the store under ", key);
    memcpy(&id, v.data(), sizeof(id));
  }
  gc_check(gcoll_comm_init_rank(&comm, size, id, rank),
           std::string("gcoll_comm_init_rank (") + name_ + ")");
  gcoll_comm_set_timeout(comm, timeout.count() > 0 ? (uint64_t)timeout.count() : 0);
}

void Channel::wait_req(gcoll_request_t req, const char *what) {
  unsigned idle = 0;
  for (;;) {
    gcoll_result_t rc = gcoll_test(req);
    if (rc == GCOLL_SUCCESS) return;
    if (rc != GCOLL_IN_PROGRESS) gc_throw(rc, what);
    if (stop_flag.load(std::memory_order_relaxed))
      throw GcError(GCOLL_ERR_ABORTED,
                    std::string("gcoll: ") + what + ": the process group was destroyed");
    if (++idle > 64) sched_yield();
  }
}

void *Channel::reg_hbm(const at::Tensor &t) {
  void *p = t.data_ptr();
  size_t n = nbytes(t);
  if (n == 0) return p;
  auto a = hbm_find(p, n);
  if (!a || hbm.count(a.get())) return p;
  gcoll_mem_t h = nullptr;
  gc_check(gcoll_mem_register_dmabuf(comm, a->buf.dmabuf_fd, 0, a->buf.size, a->buf.cpu, &h),
           "gcoll_mem_register_dmabuf (HBM tensor)");
  (gcoll_mem_is_dmabuf(h) ? hbm_native : hbm_fallback)++;
  hbm.emplace(a.get(), std::make_pair(a, h));
  return p;
}

void Channel::sweep_hbm(bool all) {
  for (auto it = hbm.begin(); it != hbm.end();) {
    // use_count 1: only this registration keeps the memory alive
    if (all || it->second.first.use_count() == 1) {
      if (comm) gcoll_mem_deregister(comm, it->second.second);
      it = hbm.erase(it);
    } else {
      ++it;
    }
  }
}

void Channel::stop() {
  {
    std::lock_guard<std::mutex> l(mu);
    stopping = true;
  }
  stop_flag = true;
  cv.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Channel::close(bool healthy) {
  if (!comm) return;
  sweep_hbm(true);
  if (healthy && failed.empty()) {
    // destroy flushes with a barrier: bound it, a peer may be gone
    gcoll_comm_set_timeout(comm, 3000);
    if (gcoll_comm_destroy(comm) != GCOLL_SUCCESS) {
      /* destroy frees the communicator whatever the barrier did */
    }
  } else {
    gcoll_comm_abort(comm);
  }
  comm = nullptr;
}

Channel::~Channel() {
  stop();
  close(false);
}

// -------------------------------------------------------------- backend

ProcessGroupGcoll::ProcessGroupGcoll(const c10::intrusive_ptr<c10d::Store> &store, int rank,
                                     int size, std::chrono::milliseconds timeout)
    : Backend(rank, size), timeout_(timeout) {
  coll_.init(store, "gcoll/uid/coll", rank, size, timeout);
  p2p_.init(store, "gcoll/uid/p2p", rank, size, timeout);
  coll_.start([this] { coll_loop(); });
  p2p_.start([this] { p2p_loop(); });
  std::lock_guard<std::mutex> l(g_live_mu);
  g_live.insert(this);
}

ProcessGroupGcoll::~ProcessGroupGcoll() { shutdown(); }

static void dbg(const char *what, const void *pg) {
  static const bool on = getenv("TORCH_GCOLL_DEBUG") != nullptr;
  if (on) fprintf(stderr, "torch_gcoll[%d]: %p %s\n", (int)getpid(), pg, what);
}

void ProcessGroupGcoll::shutdown() {
  if (shut_.exchange(true)) return;
  dbg("shutdown", this);
  // The last reference may go in Python's destroy_process_group with the
  // GIL held, while a worker drops the last reference to a tensor that has
  // a Python object (which takes the GIL): joining it then deadlocks.
  // Release the GIL for the join and the bounded flush.
  PyThreadState *ts = nullptr;
  if (Py_IsInitialized() && PyGILState_Check()) ts = PyEval_SaveThread();
  {
    std::lock_guard<std::mutex> l(g_live_mu);
    g_live.erase(this);
  }
  coll_.stop();
  dbg("coll stopped", this);
  p2p_.stop();
  dbg("p2p stopped", this);
  coll_.close(true);
  dbg("coll closed", this);
  // a group whose collectives failed (a peer gone, a timeout) does not
  // flush send/recv with a barrier the peer cannot answer: abort it too
  p2p_.close(coll_.failed.empty());
  dbg("p2p closed", this);
  if (ts) PyEval_RestoreThread(ts);
}

void shutdown_all() {
  std::vector<ProcessGroupGcoll *> v;
  {
    std::lock_guard<std::mutex> l(g_live_mu);
    v.assign(g_live.begin(), g_live.end());
  }
  for (auto *pg : v) pg->shutdown();
}

std::map<std::string, std::string> ProcessGroupGcoll::transport() const {
  std::map<std::string, std::string> m;
  const char *prov = nullptr;
  int rails = 0, dmabuf = 0, rxcq = 0;
  if (coll_.comm &&
      gcoll_comm_transport_info(coll_.comm, &prov, &rails, &dmabuf, &rxcq) == GCOLL_SUCCESS) {
    m["provider"] = prov ? prov : "";
    m["rails"] = std::to_string(rails);
    m["dmabuf_native"] = std::to_string(dmabuf);
    m["rx_cq_data"] = std::to_string(rxcq);
  }
  m["hbm_native"] = std::to_string(coll_.hbm_native + p2p_.hbm_native);
  m["hbm_fallback"] = std::to_string(coll_.hbm_fallback + p2p_.hbm_fallback);
  return m;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::enqueue(c10d::OpType op, const char *title,
                                                          std::vector<at::Tensor> outputs,
                                                          Fn fn) {
  auto w = c10::make_intrusive<WorkGcoll>(op, title, std::move(outputs));
  {
    std::lock_guard<std::mutex> l(coll_.mu);
    TORCH_CHECK(!coll_.stopping, "gcoll: ", title, ": the process group was destroyed");
    queue_.push_back(Item{w, std::move(fn)});
  }
  coll_.cv.notify_one();
  return w;
}

void ProcessGroupGcoll::coll_loop() {
  for (;;) {
    Item it;
    {
      std::unique_lock<std::mutex> l(coll_.mu);
      coll_.cv.wait(l, [&] { return coll_.stopping || !queue_.empty(); });
      if (coll_.stopping) {
        auto e = std::make_exception_ptr(
            std::runtime_error("gcoll: the process group was destroyed before the "
                               "operation ran"));
        while (!queue_.empty()) {
          queue_.front().work->complete(e);
          queue_.pop_front();
        }
        return;
      }
      it = std::move(queue_.front());
      queue_.pop_front();
    }
    std::exception_ptr e;
    if (!coll_.failed.empty()) {
      e = std::make_exception_ptr(std::runtime_error(
          "gcoll: the communicator failed earlier, no further operations: " + coll_.failed));
    } else {
      try {
        coll_.sweep_hbm(false);
        it.fn(coll_);
      } catch (const GcError &x) {
        if (fatal(x.rc)) {
          coll_.failed = x.what();
          gcoll_comm_abort(coll_.comm);  // in-flight requests end; peers notice
          coll_.comm = nullptr;
        }
        e = std::current_exception();
      } catch (...) {
        e = std::current_exception();
      }
    }
    it.work->complete(e);
  }
}

// ------------------------------------------------------------ send/recv
// p2p_loop, the send/recv thread: p2p.cpp

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::send(std::vector<at::Tensor> &tensors,
                                                       int dstRank, int tag) {
  check_one(tensors, "send");
  TORCH_CHECK(dstRank >= 0 && dstRank < size_ && dstRank != rank_,
              "gcoll: send: invalid destination rank ", dstRank);
  auto t = tensors[0];
  auto w = c10::make_intrusive<WorkGcoll>(c10d::OpType::SEND, "send", tensors);
  {
    std::lock_guard<std::mutex> l(p2p_.mu);
    TORCH_CHECK(!p2p_.stopping, "gcoll: send: the process group was destroyed");
    p2p_new_.push_back(P2p{w, dstRank, tag, true, t, stage(t)});
  }
  p2p_.cv.notify_one();
  return w;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::recv(std::vector<at::Tensor> &tensors,
                                                       int srcRank, int tag) {
  check_one(tensors, "recv");
  TORCH_CHECK(srcRank >= 0 && srcRank < size_ && srcRank != rank_,
              "gcoll: recv: invalid source rank ", srcRank);
  auto t = tensors[0];
  auto w = c10::make_intrusive<WorkGcoll>(c10d::OpType::RECV, "recv", tensors);
  {
    std::lock_guard<std::mutex> l(p2p_.mu);
    TORCH_CHECK(!p2p_.stopping, "gcoll: recv: the process group was destroyed");
    p2p_new_.push_back(P2p{w, srcRank, tag, false, t, stage(t)});
  }
  p2p_.cv.notify_one();
  return w;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::recvAnysource(std::vector<at::Tensor> &,
                                                                int) {
  TORCH_CHECK(false, "gcoll does not support recv from any source (src=None); name the "
                     "source rank");
}

// ----------------------------------------------------------- collectives

// Run one gcoll operation to completion on the worker.
#define GC_RUN(ch, what, call)                                    \
  do {                                                            \
    gcoll_request_t req_ = nullptr;                               \
    gc_check((call), what);                                       \
    if (req_) (ch).wait_req(req_, what);                          \
  } while (0)
#define REQ (&req_)

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::allreduce(std::vector<at::Tensor> &tensors,
                                                            const c10d::AllreduceOptions &opts) {
  check_one(tensors, "all_reduce");
  auto t = tensors[0];
  Red r = check_red(t, opts.reduceOp);
  return enqueue(c10d::OpType::ALLREDUCE, "all_reduce", tensors, [t, r](Channel &ch) {
    at::Tensor b = stage(t);
    at::Tensor v = realv(b);
    apply_premul(r, v);
    void *p = ch.reg_hbm(v);
    GC_RUN(ch, "all_reduce",
           gcoll_allreduce(p, p, v.numel(), red_type(v.scalar_type()), r.op, ch.comm, REQ));
    unstage(t, b);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::allreduce_coalesced(
    std::vector<at::Tensor> &tensors, const c10d::AllreduceCoalescedOptions &opts) {
  TORCH_CHECK(!tensors.empty(), "gcoll: allreduce_coalesced: no tensors");
  for (auto &t : tensors) {
    check_cpu(t, "allreduce_coalesced");
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(),
                "gcoll: allreduce_coalesced: all tensors must have the same dtype");
  }
  Red r = check_red(tensors[0], opts.reduceOp);
  auto ts = tensors;
  return enqueue(c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", tensors,
                 [ts, r](Channel &ch) {
                   std::vector<at::Tensor> flat;
                   for (auto &t : ts) flat.push_back(realv(t).reshape({-1}));
                   at::Tensor f = at::cat(flat);
                   apply_premul(r, f);
                   GC_RUN(ch, "allreduce_coalesced",
                          gcoll_allreduce(f.data_ptr(), f.data_ptr(), f.numel(),
                                          red_type(f.scalar_type()), r.op, ch.comm, REQ));
                   int64_t off = 0;
                   for (auto &t : ts) {
                     auto v = realv(t);
                     v.copy_(f.narrow(0, off, v.numel()).view(v.sizes()));
                     off += v.numel();
                   }
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::broadcast(std::vector<at::Tensor> &tensors,
                                                            const c10d::BroadcastOptions &opts) {
  check_one(tensors, "broadcast");
  auto t = tensors[0];
  int root = (int)opts.rootRank;
  TORCH_CHECK(root >= 0 && root < size_, "gcoll: broadcast: invalid root ", root);
  return enqueue(c10d::OpType::BROADCAST, "broadcast", tensors, [t, root](Channel &ch) {
    at::Tensor b = stage(t);
    void *p = ch.reg_hbm(b);
    GC_RUN(ch, "broadcast", gcoll_broadcast(p, p, nbytes(b), GCOLL_UINT8, root, ch.comm, REQ));
    unstage(t, b);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::reduce(std::vector<at::Tensor> &tensors,
                                                         const c10d::ReduceOptions &opts) {
  check_one(tensors, "reduce");
  auto t = tensors[0];
  int root = (int)opts.rootRank;
  TORCH_CHECK(root >= 0 && root < size_, "gcoll: reduce: invalid root ", root);
  Red r = check_red(t, opts.reduceOp);
  return enqueue(c10d::OpType::REDUCE, "reduce", tensors, [t, r, root](Channel &ch) {
    at::Tensor b = stage(t);
    at::Tensor v = realv(b);
    apply_premul(r, v);
    void *p = ch.reg_hbm(v);
    GC_RUN(ch, "reduce",
           gcoll_reduce(p, p, v.numel(), red_type(v.scalar_type()), r.op, root, ch.comm, REQ));
    unstage(t, b);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::allgather(
    std::vector<std::vector<at::Tensor>> &outputs, std::vector<at::Tensor> &inputs,
    const c10d::AllgatherOptions &) {
  check_one(inputs, "all_gather");
  TORCH_CHECK(outputs.size() == 1 && (int)outputs[0].size() == size_,
              "gcoll: all_gather needs one output list of ", size_, " tensors");
  auto in = inputs[0];
  for (auto &o : outputs[0]) {
    check_cpu(o, "all_gather");
    TORCH_CHECK(o.numel() == in.numel() && o.scalar_type() == in.scalar_type(),
                "gcoll: all_gather: every output tensor must match the input (",
                in.numel(), " elements of ", in.scalar_type(), ")");
  }
  auto outs = outputs[0];
  int n = size_;
  return enqueue(c10d::OpType::ALLGATHER, "all_gather", outs, [in, outs, n](Channel &ch) {
    at::Tensor i = stage(in);
    size_t nb = nbytes(i);
    at::Tensor flat = at::empty({(int64_t)(nb * n)}, at::kByte);
    GC_RUN(ch, "all_gather",
           gcoll_allgather(ch.reg_hbm(i), flat.data_ptr(), nb, GCOLL_UINT8, ch.comm, REQ));
    for (int j = 0; j < n; j++) {
      auto &o = outs[j];
      if (o.is_contiguous()) {
        if (nb) memcpy(o.data_ptr(), (char *)flat.data_ptr() + j * nb, nb);
      } else {
        o.copy_(flat.narrow(0, j * nb, nb).view(o.scalar_type()).view(o.sizes()));
      }
    }
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::_allgather_base(at::Tensor &output,
                                                                  at::Tensor &input,
                                                                  const c10d::AllgatherOptions &) {
  check_cpu(output, "all_gather_into_tensor");
  check_cpu(input, "all_gather_into_tensor");
  TORCH_CHECK(output.numel() == input.numel() * size_ &&
                  output.scalar_type() == input.scalar_type(),
              "gcoll: all_gather_into_tensor: the output must hold world_size (", size_,
              ") times the input's ", input.numel(), " elements of ", input.scalar_type(),
              ", got ", output.numel(), " of ", output.scalar_type());
  auto out = output, in = input;
  return enqueue(c10d::OpType::_ALLGATHER_BASE, "all_gather_into_tensor", {output},
                 [out, in](Channel &ch) {
                   at::Tensor o = stage(out), i = stage(in);
                   GC_RUN(ch, "all_gather_into_tensor",
                          gcoll_allgather(ch.reg_hbm(i), ch.reg_hbm(o), nbytes(i), GCOLL_UINT8,
                                          ch.comm, REQ));
                   unstage(out, o);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::allgather_into_tensor_coalesced(
    std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
    const c10d::AllgatherOptions &) {
  TORCH_CHECK(outputs.size() == inputs.size(),
              "gcoll: allgather_into_tensor_coalesced: as many outputs as inputs");
  for (size_t k = 0; k < inputs.size(); k++) {
    check_cpu(outputs[k], "allgather_into_tensor_coalesced");
    check_cpu(inputs[k], "allgather_into_tensor_coalesced");
    TORCH_CHECK(outputs[k].numel() == inputs[k].numel() * size_ &&
                    outputs[k].scalar_type() == inputs[k].scalar_type(),
                "gcoll: allgather_into_tensor_coalesced: output ", k,
                " must hold world_size times input ", k);
  }
  auto outs = outputs, ins = inputs;
  return enqueue(c10d::OpType::COALESCED, "allgather_into_tensor_coalesced", outputs,
                 [outs, ins](Channel &ch) {
                   for (size_t k = 0; k < ins.size(); k++) {
                     at::Tensor o = stage(outs[k]), i = stage(ins[k]);
                     GC_RUN(ch, "allgather_into_tensor_coalesced",
                            gcoll_allgather(ch.reg_hbm(i), ch.reg_hbm(o), nbytes(i),
                                            GCOLL_UINT8, ch.comm, REQ));
                     unstage(outs[k], o);
                   }
                 });
}

namespace {
void do_reduce_scatter(Channel &ch, const at::Tensor &out, at::Tensor flat, const Red &r,
                       bool may_modify) {
  at::Tensor o = stage(out);
  at::Tensor ov = realv(o);
  at::Tensor fv = realv(flat);
  if (r.premul) {
    if (!may_modify) fv = fv.clone();
    apply_premul(r, fv);
  }
  GC_RUN(ch, "reduce_scatter",
         gcoll_reduce_scatter(ch.reg_hbm(fv), ch.reg_hbm(ov), ov.numel(),
                              red_type(ov.scalar_type()), r.op, ch.comm, REQ));
  unstage(out, o);
}
}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::reduce_scatter(
    std::vector<at::Tensor> &outputs, std::vector<std::vector<at::Tensor>> &inputs,
    const c10d::ReduceScatterOptions &opts) {
  check_one(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && (int)inputs[0].size() == size_,
              "gcoll: reduce_scatter needs one input list of ", size_, " tensors");
  auto out = outputs[0];
  for (auto &i : inputs[0]) {
    check_cpu(i, "reduce_scatter");
    TORCH_CHECK(i.numel() == out.numel() && i.scalar_type() == out.scalar_type(),
                "gcoll: reduce_scatter: every input tensor must match the output (",
                out.numel(), " elements of ", out.scalar_type(), ")");
  }
  Red r = check_red(out, opts.reduceOp);
  auto ins = inputs[0];
  return enqueue(c10d::OpType::REDUCE_SCATTER, "reduce_scatter", outputs,
                 [out, ins, r](Channel &ch) {
                   std::vector<at::Tensor> flat;
                   for (auto &i : ins) flat.push_back(i.reshape({-1}));
                   do_reduce_scatter(ch, out, at::cat(flat), r, true);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::_reduce_scatter_base(
    at::Tensor &output, at::Tensor &input, const c10d::ReduceScatterOptions &opts) {
  check_cpu(output, "reduce_scatter_tensor");
  check_cpu(input, "reduce_scatter_tensor");
  TORCH_CHECK(input.numel() == output.numel() * size_ &&
                  output.scalar_type() == input.scalar_type(),
              "gcoll: reduce_scatter_tensor: the input must hold world_size (", size_,
              ") times the output's ", output.numel(), " elements of ", output.scalar_type(),
              ", got ", input.numel(), " of ", input.scalar_type());
  Red r = check_red(output, opts.reduceOp);
  auto out = output, in = input;
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, "reduce_scatter_tensor", {output},
                 [out, in, r](Channel &ch) {
                   at::Tensor i = stage(in);
                   do_reduce_scatter(ch, out, i, r, !i.is_same(in));
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor> &outputs, std::vector<at::Tensor> &inputs,
    const c10d::ReduceScatterOptions &opts) {
  TORCH_CHECK(outputs.size() == inputs.size() && !inputs.empty(),
              "gcoll: reduce_scatter_tensor_coalesced: as many outputs as inputs");
  for (size_t k = 0; k < inputs.size(); k++) {
    check_cpu(outputs[k], "reduce_scatter_tensor_coalesced");
    check_cpu(inputs[k], "reduce_scatter_tensor_coalesced");
    TORCH_CHECK(inputs[k].numel() == outputs[k].numel() * size_ &&
                    outputs[k].scalar_type() == inputs[k].scalar_type(),
                "gcoll: reduce_scatter_tensor_coalesced: input ", k,
                " must hold world_size times output ", k);
  }
  Red r = check_red(outputs[0], opts.reduceOp);
  auto outs = outputs, ins = inputs;
  return enqueue(c10d::OpType::COALESCED, "reduce_scatter_tensor_coalesced", outputs,
                 [outs, ins, r](Channel &ch) {
                   for (size_t k = 0; k < ins.size(); k++) {
                     at::Tensor i = stage(ins[k]);
                     do_reduce_scatter(ch, outs[k], i, r, !i.is_same(ins[k]));
                   }
                 });
}

namespace {
// Per-peer transfers started together (gcoll group), then waited for.
struct Xfer {
  int peer;
  bool is_send;
  void *p;
  size_t n;
};
void run_group(Channel &ch, int rank, const std::vector<Xfer> &xs, const char *what) {
  std::vector<gcoll_request_t> reqs;
  const void *self_src = nullptr;
  void *self_dst = nullptr;
  size_t self_n = 0;
  gc_check(gcoll_group_start(), what);
  gcoll_result_t rc = GCOLL_SUCCESS;
  for (auto &x : xs) {
    if (x.peer == rank) {
      if (x.is_send) self_src = x.p, self_n = x.n;
      else self_dst = x.p;
      continue;
    }
    if (!x.n) continue;
    gcoll_request_t r = nullptr;
    rc = x.is_send ? gcoll_send(x.p, x.n, GCOLL_UINT8, x.peer, ch.comm, &r)
                   : gcoll_recv(x.p, x.n, GCOLL_UINT8, x.peer, ch.comm, &r);
    if (rc != GCOLL_SUCCESS) break;
    reqs.push_back(r);
  }
  gcoll_result_t rc2 = gcoll_group_end();
  if (rc != GCOLL_SUCCESS) gc_throw(rc, what);
  if (rc2 != GCOLL_SUCCESS) gc_throw(rc2, what);
  if (self_dst && self_src && self_n && self_dst != self_src) memcpy(self_dst, self_src, self_n);
  for (auto r : reqs)
    if (r) ch.wait_req(r, what);
}
}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::alltoall_base(
    at::Tensor &output, at::Tensor &input, std::vector<int64_t> &outputSplits,
    std::vector<int64_t> &inputSplits, const c10d::AllToAllOptions &) {
  check_cpu(output, "all_to_all_single");
  check_cpu(input, "all_to_all_single");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(),
              "gcoll: all_to_all_single: input and output dtypes differ");
  int n = size_;
  auto out = output, in = input;
  if (outputSplits.empty() && inputSplits.empty()) {
    TORCH_CHECK(input.numel() % n == 0 && output.numel() == input.numel(),
                "gcoll: all_to_all_single: with even splits input and output must have the "
                "same size, divisible by world_size (",
                n, "); got ", input.numel(), " and ", output.numel());
    return enqueue(c10d::OpType::ALLTOALL_BASE, "all_to_all_single", {output},
                   [out, in, n](Channel &ch) {
                     at::Tensor o = stage(out), i = stage(in);
                     GC_RUN(ch, "all_to_all_single",
                            gcoll_alltoall(ch.reg_hbm(i), ch.reg_hbm(o), nbytes(i) / n,
                                           GCOLL_UINT8, ch.comm, REQ));
                     unstage(out, o);
                   });
  }
  auto splits = [n](const at::Tensor &t, const std::vector<int64_t> &s, const char *which) {
    TORCH_CHECK(t.dim() >= 1, "gcoll: all_to_all_single: ", which, " must have dim >= 1");
    std::vector<int64_t> r = s;
    if (r.empty()) {
      TORCH_CHECK(t.size(0) % n == 0, "gcoll: all_to_all_single: ", which,
                  " dim 0 not divisible by world_size");
      r.assign(n, t.size(0) / n);
    }
    TORCH_CHECK((int)r.size() == n, "gcoll: all_to_all_single: ", which, " splits need ", n,
                " entries");
    int64_t sum = 0;
    for (auto v : r) {
      TORCH_CHECK(v >= 0, "gcoll: all_to_all_single: negative split");
      sum += v;
    }
    TORCH_CHECK(sum == t.size(0), "gcoll: all_to_all_single: ", which,
                " splits sum to ", sum, ", dim 0 is ", t.size(0));
    return r;
  };
  auto os = splits(output, outputSplits, "output");
  auto is = splits(input, inputSplits, "input");
  int rank = rank_;
  return enqueue(c10d::OpType::ALLTOALL_BASE, "all_to_all_single", {output},
                 [out, in, os, is, n, rank](Channel &ch) {
                   at::Tensor o = stage(out), i = stage(in);
                   size_t orow = o.size(0) ? nbytes(o) / o.size(0) : 0;
                   size_t irow = i.size(0) ? nbytes(i) / i.size(0) : 0;
                   std::vector<Xfer> xs;
                   size_t ioff = 0, ooff = 0;
                   for (int p = 0; p < n; p++) {
                     xs.push_back({p, true, (char *)i.data_ptr() + ioff, is[p] * irow});
                     xs.push_back({p, false, (char *)o.data_ptr() + ooff, os[p] * orow});
                     ioff += is[p] * irow;
                     ooff += os[p] * orow;
                   }
                   run_group(ch, rank, xs, "all_to_all_single");
                   unstage(out, o);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::alltoall(std::vector<at::Tensor> &outputs,
                                                           std::vector<at::Tensor> &inputs,
                                                           const c10d::AllToAllOptions &) {
  TORCH_CHECK((int)outputs.size() == size_ && (int)inputs.size() == size_,
              "gcoll: all_to_all needs ", size_, " input and output tensors");
  for (auto &t : outputs) check_cpu(t, "all_to_all");
  for (auto &t : inputs) check_cpu(t, "all_to_all");
  auto outs = outputs, ins = inputs;
  int rank = rank_;
  return enqueue(c10d::OpType::ALLTOALL, "all_to_all", outputs, [outs, ins, rank](Channel &ch) {
    std::vector<at::Tensor> os, is;
    std::vector<Xfer> xs;
    for (size_t p = 0; p < outs.size(); p++) {
      os.push_back(stage(outs[p]));
      is.push_back(stage(ins[p]));
      xs.push_back({(int)p, true, is[p].data_ptr(), nbytes(is[p])});
      xs.push_back({(int)p, false, os[p].data_ptr(), nbytes(os[p])});
    }
    TORCH_CHECK(nbytes(is[rank]) == nbytes(os[rank]),
                "gcoll: all_to_all: own input and output sizes differ");
    run_group(ch, rank, xs, "all_to_all");
    for (size_t p = 0; p < outs.size(); p++) unstage(outs[p], os[p]);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::gather(
    std::vector<std::vector<at::Tensor>> &outputs, std::vector<at::Tensor> &inputs,
    const c10d::GatherOptions &opts) {
  check_one(inputs, "gather");
  int root = (int)opts.rootRank;
  TORCH_CHECK(root >= 0 && root < size_, "gcoll: gather: invalid root ", root);
  std::vector<at::Tensor> outs;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1 && (int)outputs[0].size() == size_,
                "gcoll: gather: the root needs one list of ", size_, " output tensors");
    for (auto &o : outputs[0]) {
      check_cpu(o, "gather");
      TORCH_CHECK(o.numel() == inputs[0].numel() && o.scalar_type() == inputs[0].scalar_type(),
                  "gcoll: gather: every output must match the input");
    }
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || outputs[0].empty(),
                "gcoll: gather: only the root passes output tensors");
  }
  auto in = inputs[0];
  int rank = rank_;
  return enqueue(c10d::OpType::GATHER, "gather", outs, [outs, in, root, rank](Channel &ch) {
    at::Tensor i = stage(in);
    std::vector<Xfer> xs;
    std::vector<at::Tensor> os;
    if (rank == root) {
      for (size_t p = 0; p < outs.size(); p++) {
        os.push_back(stage(outs[p]));
        xs.push_back({(int)p, false, os[p].data_ptr(), nbytes(os[p])});
      }
      xs.push_back({rank, true, i.data_ptr(), nbytes(i)});
    } else {
      xs.push_back({root, true, i.data_ptr(), nbytes(i)});
    }
    run_group(ch, rank, xs, "gather");
    for (size_t p = 0; p < os.size(); p++) unstage(outs[p], os[p]);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::scatter(
    std::vector<at::Tensor> &outputs, std::vector<std::vector<at::Tensor>> &inputs,
    const c10d::ScatterOptions &opts) {
  check_one(outputs, "scatter");
  int root = (int)opts.rootRank;
  TORCH_CHECK(root >= 0 && root < size_, "gcoll: scatter: invalid root ", root);
  std::vector<at::Tensor> ins;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1 && (int)inputs[0].size() == size_,
                "gcoll: scatter: the root needs one list of ", size_, " input tensors");
    for (auto &i : inputs[0]) {
      check_cpu(i, "scatter");
      TORCH_CHECK(i.numel() == outputs[0].numel() && i.scalar_type() == outputs[0].scalar_type(),
                  "gcoll: scatter: every input must match the output");
    }
    ins = inputs[0];
  } else {
    TORCH_CHECK(inputs.empty() || inputs[0].empty(),
                "gcoll: scatter: only the root passes input tensors");
  }
  auto out = outputs[0];
  int rank = rank_;
  return enqueue(c10d::OpType::SCATTER, "scatter", outputs, [out, ins, root, rank](Channel &ch) {
    at::Tensor o = stage(out);
    std::vector<Xfer> xs;
    std::vector<at::Tensor> is;
    if (rank == root) {
      for (size_t p = 0; p < ins.size(); p++) {
        is.push_back(stage(ins[p]));
        xs.push_back({(int)p, true, is[p].data_ptr(), nbytes(is[p])});
      }
      xs.push_back({rank, false, o.data_ptr(), nbytes(o)});
    } else {
      xs.push_back({root, false, o.data_ptr(), nbytes(o)});
    }
    run_group(ch, rank, xs, "scatter");
    unstage(out, o);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupGcoll::barrier(const c10d::BarrierOptions &) {
  return enqueue(c10d::OpType::BARRIER, "barrier", {}, [](Channel &ch) {
    GC_RUN(ch, "barrier", gcoll_barrier(ch.comm, REQ));
  });
}

}  // namespace torch_gcoll
