// SPDX-License-Identifier: MIT
// ProcessGroupGcoll's send/recv thread (p2p_loop) and the tag matching it
// adds to gcoll's untagged point-to-point calls.
//
// Every message is a 16-byte header {magic | tag, length}, then the
// payload.  While receives from a peer are posted, one header receive from
// it is posted too.  A header whose tag a posted receive waits for (the
// first in posting order) has its payload received straight into that
// receive's buffer.  Any other header is unexpected: its payload lands in
// a buffer of its own, until a receive with its tag is posted.  A receive
// whose size differs from what the peer sent fails.
#include "gcoll_torch.hpp"
#include "util.hpp"

#include <sched.h>
#include <cstring>

namespace torch_gcoll {

namespace {

constexpr uint64_t kHdrMagic = 0x6763746fULL << 32;  // "gcto" | tag

std::string size_mismatch(int peer, int tag, size_t sent, size_t holds) {
  return "gcoll: recv from rank " + std::to_string(peer) + " tag " + std::to_string(tag) +
         ": the peer sent " + std::to_string(sent) + " bytes, the receive tensor holds " +
         std::to_string(holds);
}

// Whether @req (if any) is done: then it is cleared.  Throws if it failed.
bool done(gcoll_request_t &req, const char *what, int peer) {
  if (!req) return false;
  gcoll_result_t rc = gcoll_test(req);
  if (rc == GCOLL_IN_PROGRESS) return false;
  if (rc != GCOLL_SUCCESS) gc_throw(rc, std::string(what) + " " + std::to_string(peer));
  req = nullptr;
  return true;
}

// The sends in flight and, per peer, the receives posted and the messages
// that came before their receive.
class P2pEngine {
 public:
  P2pEngine(Channel &ch, int size) : ch_(ch), rx_(size) {}
  bool active() const;
  void admit(P2p &p) {
    if (p.is_send)
      admit_send(p);
    else
      admit_recv(p);
  }
  bool progress();  // tests every request: true if one finished
  void fail_all(std::exception_ptr e);

 private:
  struct Tx {
    P2p p;
    uint64_t hdr[2];
    gcoll_request_t rh = nullptr, rp = nullptr;
  };
  struct Rx {
    std::deque<P2p> posted;
    std::map<int, std::deque<at::Tensor>> unexpected;  // tag -> payloads
    uint64_t hdr[2] = {0, 0};
    gcoll_request_t rh = nullptr, rp = nullptr;
    int cur = -1;       // index in posted receiving the payload, -1: unexpected
    at::Tensor ubuf;    // unexpected payload
    int utag = 0;
    std::string mismatch;
  };
  void admit_send(P2p &p);
  void admit_recv(P2p &p);
  bool progress_tx();
  void header_done(Rx &r, int peer);
  void payload_done(Rx &r);

  Channel &ch_;
  std::deque<Tx> tx_;
  std::vector<Rx> rx_;
};

bool P2pEngine::active() const {
  if (!tx_.empty()) return true;
  for (auto &r : rx_)
    if (!r.posted.empty() || r.rp) return true;
  return false;
}

void P2pEngine::fail_all(std::exception_ptr e) {
  for (auto &t : tx_) t.p.work->complete(e);
  tx_.clear();
  for (auto &r : rx_) {
    for (auto &p : r.posted) p.work->complete(e);
    r.posted.clear();
  }
}

void P2pEngine::admit_send(P2p &p) {
  tx_.emplace_back();
  Tx &t = tx_.back();
  t.p = p;
  t.hdr[0] = kHdrMagic | (uint32_t)p.tag;
  t.hdr[1] = nbytes(p.buf);
  gc_check(gcoll_send(t.hdr, sizeof(t.hdr), GCOLL_UINT8, p.peer, ch_.comm, &t.rh),
           "send (header)");
  if (t.hdr[1])
    gc_check(gcoll_send(ch_.reg_hbm(p.buf), t.hdr[1], GCOLL_UINT8, p.peer, ch_.comm, &t.rp),
             "send");
}

// A receive takes the oldest unexpected message with its tag, if any.
void P2pEngine::admit_recv(P2p &p) {
  Rx &r = rx_[p.peer];
  auto u = r.unexpected.find(p.tag);
  if (u == r.unexpected.end()) {
    r.posted.push_back(p);
    return;
  }
  at::Tensor b = u->second.front();
  u->second.pop_front();
  if (u->second.empty()) r.unexpected.erase(u);
  if ((size_t)b.numel() != nbytes(p.buf)) {
    p.work->complete(std::make_exception_ptr(std::runtime_error(
        size_mismatch(p.peer, p.tag, b.numel(), nbytes(p.buf)))));
    return;
  }
  if (b.numel()) memcpy(p.buf.data_ptr(), b.data_ptr(), b.numel());
  unstage(p.user, p.buf);
  p.work->complete(nullptr);
}

bool P2pEngine::progress_tx() {
  bool moved = false;
  for (auto it = tx_.begin(); it != tx_.end();) {
    moved |= done(it->rh, "send to rank", it->p.peer);
    moved |= done(it->rp, "send to rank", it->p.peer);
    if (!it->rh && !it->rp) {
      it->p.work->complete(nullptr);
      it = tx_.erase(it);
    } else {
      ++it;
    }
  }
  return moved;
}

// A header is in: match its tag, then receive its payload.
void P2pEngine::header_done(Rx &r, int peer) {
  if ((r.hdr[0] >> 32) != (kHdrMagic >> 32))
    throw GcError(GCOLL_ERR_REMOTE, "gcoll: recv from rank " + std::to_string(peer) +
                                        ": bad message header (the peer is not "
                                        "torch_gcoll send?)");
  int tag = (int)(uint32_t)r.hdr[0];
  size_t len = r.hdr[1];
  r.cur = -1;
  r.utag = tag;
  for (size_t i = 0; i < r.posted.size(); i++)
    if (r.posted[i].tag == tag) {
      if (nbytes(r.posted[i].buf) == len)
        r.cur = (int)i;
      else
        r.mismatch = size_mismatch(peer, tag, len, nbytes(r.posted[i].buf));
      break;
    }
  void *dst;
  if (r.cur >= 0) {
    dst = ch_.reg_hbm(r.posted[r.cur].buf);
  } else {
    r.ubuf = at::empty({(int64_t)len}, at::kByte);
    dst = r.ubuf.data_ptr();
  }
  if (len)
    gc_check(gcoll_recv(dst, len, GCOLL_UINT8, peer, ch_.comm, &r.rp),
             "recv from rank " + std::to_string(peer));
  else
    payload_done(r);
}

// A payload is in (or there was none): the matched receive completes, or
// fails for its size, or the message waits as unexpected.
void P2pEngine::payload_done(Rx &r) {
  if (r.cur >= 0) {
    P2p p = r.posted[r.cur];
    r.posted.erase(r.posted.begin() + r.cur);
    unstage(p.user, p.buf);
    p.work->complete(nullptr);
  } else if (!r.mismatch.empty()) {
    for (auto it = r.posted.begin(); it != r.posted.end(); ++it)
      if (it->tag == r.utag) {
        it->work->complete(std::make_exception_ptr(std::runtime_error(r.mismatch)));
        r.posted.erase(it);
        break;
      }
    r.mismatch.clear();
  } else {
    r.unexpected[r.utag].push_back(r.ubuf);
  }
  r.ubuf = at::Tensor();
}

bool P2pEngine::progress() {
  bool moved = progress_tx();
  for (int peer = 0; peer < (int)rx_.size(); peer++) {
    Rx &r = rx_[peer];
    if (done(r.rp, "recv from rank", peer)) {
      moved = true;
      payload_done(r);
    }
    if (done(r.rh, "recv from rank", peer)) {
      moved = true;
      header_done(r, peer);
    }
    // the next header, once this payload is on its way
    if (!r.rh && !r.rp && !r.posted.empty())
      gc_check(gcoll_recv(r.hdr, sizeof(r.hdr), GCOLL_UINT8, peer, ch_.comm, &r.rh),
               "recv (header) from rank " + std::to_string(peer));
  }
  return moved;
}

}  // namespace

void ProcessGroupGcoll::p2p_loop() {
  P2pEngine eng(p2p_, size_);
  auto on_error = [&](const GcError &x) {
    p2p_.failed = x.what();
    eng.fail_all(std::make_exception_ptr(std::runtime_error(x.what())));
    gcoll_comm_abort(p2p_.comm);
    p2p_.comm = nullptr;
  };
  unsigned idle = 0;
  for (;;) {
    std::deque<P2p> fresh;
    {
      std::unique_lock<std::mutex> l(p2p_.mu);
      if (!eng.active())
        p2p_.cv.wait(l, [&] { return p2p_.stopping || !p2p_new_.empty(); });
      fresh.swap(p2p_new_);
      if (p2p_.stopping) {
        l.unlock();
        auto e = std::make_exception_ptr(
            std::runtime_error("gcoll: the process group was destroyed with send/recv pending"));
        for (auto &p : fresh) p.work->complete(e);
        eng.fail_all(e);
        return;
      }
    }
    try {
      for (auto &p : fresh) {
        if (!p2p_.failed.empty())
          p.work->complete(std::make_exception_ptr(std::runtime_error(
              "gcoll: send/recv communicator failed earlier: " + p2p_.failed)));
        else
          eng.admit(p);
      }
      if (eng.progress())
        idle = 0;
      else if (++idle > 64)
        sched_yield();
    } catch (const GcError &x) {
      on_error(x);
    } catch (const std::exception &x) {
      on_error(GcError(GCOLL_ERR_SYSTEM, x.what()));
    }
  }
}

}  // namespace torch_gcoll
