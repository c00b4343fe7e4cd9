// bale's tensor conveyors as route plans (Maley & DeVinney 2019, sec. 4.3.1).
#include <convoy/base/error.hpp>
#include <convoy/router/route_plan.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "checks.hpp"
#include "radix.hpp"

namespace convoy::router {

namespace {

using detail::bytes_for;
using detail::radix_reader;
using detail::radix_writer;

/// One class for the three orders; `order_` selects the stage list:
///   order 1: direct;  order 2: local, network;  order 3: local, network, local.
/// Ranks are numbered consecutively within local groups of n = n_local ranks.
/// Order 2: r = n g + l.  Order 3: r = n^2 x + n y + z with 0 <= y, z < n (Maley & DeVinney 2019
/// sec. 4.3.1); x ranges over 0..X-1 with X = ceil(P / n^2); n | P guarantees that every
/// intermediate rank exists, n^2 need not divide P (ROUTE-9).
class tensor_plan final : public route_plan {
 public:
  tensor_plan(int order, int n_ranks, int n_local)
      : order_(order), p_(n_ranks), n_(order == 1 ? 1 : n_local) {
    const std::int64_t n2 = std::int64_t{n_} * n_;
    x_count_ = static_cast<int>((p_ + n2 - 1) / n2);
    const auto p = static_cast<std::uint64_t>(p_);
    const auto n = static_cast<std::uint64_t>(n_);
    switch (order_) {
      case 1:
        tag_bytes_ = {0};
        break;
      case 2:  // local: dest's group; network: src's in-group index
        tag_bytes_ = {bytes_for(p / n), bytes_for(n)};
        break;
      default:  // local: (dest.x, dest.z); network: (src.z, dest.z); local: (src.x, src.z)
        tag_bytes_ = {bytes_for(static_cast<std::uint64_t>(x_count_) * n), bytes_for(n * n),
                      bytes_for(static_cast<std::uint64_t>(x_count_) * n)};
        break;
    }
  }

  std::string name() const override {
    return "tensor order " + std::to_string(order_) + " ranks " + std::to_string(p_) +
           (order_ > 1 ? " n_local " + std::to_string(n_) : "");
  }
  int n_ranks() const noexcept override { return p_; }
  int n_stages() const noexcept override { return order_; }
  // Order 3 moves along the local dimension on stages 0 and 2 (ROUTE-26).
  bool broadcast_tree() const noexcept override { return order_ <= 2; }
  std::string stage_name(int stage) const override {
    check_stage(stage, "stage_name");
    if (order_ == 1) return "direct";
    return stage == 1 ? "network" : "local";
  }

  hop next_hop(int at, int dest, int first_stage) const noexcept override {
    if (at == dest) return {order_, 0, at};
    switch (order_) {
      case 1:
        return {0, dest - (dest > at ? 1 : 0), dest};
      case 2: {
        // ROUTE-8: local group first (to dest's in-group index), then across.
        const int l_at = at % n_, l_d = dest % n_;
        if (first_stage <= 0 && l_at != l_d) return {0, local_index(l_at, l_d), at - l_at + l_d};
        const int g_at = at / n_, g_d = dest / n_;
        return {1, g_d - (g_d > g_at ? 1 : 0), dest};
      }
      default: {
        // (x,y,z) -> (x,y,y') -> (x',y',y) -> (x',y',z'), self hops skipped.
        const xyz a = split(at), d = split(dest);
        if (first_stage <= 0 && a.z != d.y) return {0, local_index(a.z, d.y), join(a.x, a.y, d.y)};
        if (first_stage <= 1 && (a.x != d.x || a.y != d.y)) {
          // Network peers of (x,y,z) are (x',z,y) for x' ascending, minus itself if z == y.
          const int skip = (a.z == a.y && d.x > a.x) ? 1 : 0;
          return {1, d.x - skip, join(d.x, d.y, a.y)};
        }
        return {2, local_index(a.z, d.z), dest};
      }
    }
  }

  std::vector<int> out_peers(int rank, int stage) const override {
    check_rank(rank, "out_peers");
    check_stage(stage, "out_peers");
    std::vector<int> peers;
    if (order_ == 1) {
      peers.reserve(static_cast<std::size_t>(p_ - 1));
      for (int r = 0; r < p_; ++r)
        if (r != rank) peers.push_back(r);
    } else if (stage == 0 || stage == 2) {
      group_peers(rank, peers);
    } else if (order_ == 2) {
      for (int r = rank % n_; r < p_; r += n_)
        if (r != rank) peers.push_back(r);
    } else {
      const xyz a = split(rank);
      for (int x = 0; x < x_count_; ++x) {
        const std::int64_t r = join64(x, a.z, a.y);
        if (r < p_ && r != rank) peers.push_back(static_cast<int>(r));
      }
    }
    return peers;
  }

  std::vector<int> in_peers(int rank, int stage) const override {
    if (order_ == 3 && stage == 1) {
      // (x,c,b) sends to (x',b,c): the senders of (a,b,c) are (x,c,b) for every x.
      check_rank(rank, "in_peers");
      const xyz r = split(rank);
      std::vector<int> peers;
      for (int x = 0; x < x_count_; ++x) {
        const std::int64_t q = join64(x, r.z, r.y);
        if (q < p_ && q != rank) peers.push_back(static_cast<int>(q));
      }
      return peers;
    }
    return out_peers(rank, stage);  // the other stages are symmetric and already ascending
  }

  int tag_bytes(int stage) const noexcept override {
    return stage >= 0 && stage < order_ ? tag_bytes_[static_cast<std::size_t>(stage)] : 0;
  }

  // ROUTE-10: each tag is the part of (src, dst) that (sender, receiver) do not reveal.
  std::uint64_t encode(int stage, int /*sender*/, int /*receiver*/, int src,
                       int dst) const noexcept override {
    radix_writer w;
    const auto n = static_cast<std::uint64_t>(n_);
    const auto xs = static_cast<std::uint64_t>(x_count_);
    if (order_ == 2) {
      if (stage == 0)
        w.put(static_cast<std::uint64_t>(dst / n_), static_cast<std::uint64_t>(p_ / n_));
      else
        w.put(static_cast<std::uint64_t>(src % n_), n);
    } else if (order_ == 3) {
      const xyz s = split(src), d = split(dst);
      if (stage == 0) {
        w.put(static_cast<std::uint64_t>(d.x), xs);
        w.put(static_cast<std::uint64_t>(d.z), n);
      } else if (stage == 1) {
        w.put(static_cast<std::uint64_t>(s.z), n);
        w.put(static_cast<std::uint64_t>(d.z), n);
      } else {
        w.put(static_cast<std::uint64_t>(s.x), xs);
        w.put(static_cast<std::uint64_t>(s.z), n);
      }
    }
    return w.tag();
  }

  void decode(int stage, int sender, int receiver, std::uint64_t tag, int& src,
              int& dst) const noexcept override {
    radix_reader rd(tag);
    const auto n = static_cast<std::uint64_t>(n_);
    const auto xs = static_cast<std::uint64_t>(x_count_);
    src = sender;
    dst = receiver;
    if (order_ == 2) {
      if (stage == 0)
        dst = rd.get(static_cast<std::uint64_t>(p_ / n_)) * n_ + receiver % n_;
      else
        src = sender - sender % n_ + rd.get(n);
    } else if (order_ == 3) {
      const xyz snd = split(sender), rcv = split(receiver);
      if (stage == 0) {  // sender == src; receiver = (x, y, dest.y)
        const int x = rd.get(xs);
        dst = join(x, rcv.z, rd.get(n));
      } else if (stage ==
                 1) {  // sender = (src.x, src.y, dest.y), receiver = (dest.x, dest.y, src.y)
        src = join(snd.x, snd.y, rd.get(n));
        dst = join(rcv.x, rcv.y, rd.get(n));
      } else {  // sender = (dest.x, dest.y, src.y), receiver == dst
        const int x = rd.get(xs);
        src = join(x, snd.z, rd.get(n));
      }
    }
  }

 private:
  struct xyz {
    int x, y, z;
  };
  xyz split(int r) const noexcept {
    const std::int64_t n2 = std::int64_t{n_} * n_;
    return {static_cast<int>(r / n2), static_cast<int>((r / n_) % n_), r % n_};
  }
  std::int64_t join64(int x, int y, int z) const noexcept {
    return std::int64_t{x} * n_ * n_ + std::int64_t{y} * n_ + z;
  }
  int join(int x, int y, int z) const noexcept { return static_cast<int>(join64(x, y, z)); }
  static int local_index(int own, int to) noexcept { return to - (to > own ? 1 : 0); }

  void group_peers(int rank, std::vector<int>& peers) const {
    const int base = rank - rank % n_;
    for (int r = base; r < base + n_; ++r)
      if (r != rank) peers.push_back(r);
  }
  void check_rank(int rank, const char* what) const { detail::check_index(rank, p_, what, "rank"); }
  void check_stage(int stage, const char* what) const {
    detail::check_index(stage, order_, what, "stage");
  }

  int order_;
  int p_;
  int n_;
  int x_count_ = 1;
  std::vector<int> tag_bytes_;
};

}  // namespace

std::unique_ptr<route_plan> make_tensor_plan(int order, int n_ranks, int n_local) {
  if (order < 1 || order > 3)
    throw error("make_tensor_plan: order " + std::to_string(order) +
                " is not 1, 2 or 3 (the number of hops of a tensor conveyor)");
  if (n_ranks < 1)
    throw error("make_tensor_plan: n_ranks " + std::to_string(n_ranks) + " must be >= 1");
  if (order > 1 && (n_local < 1 || n_ranks % n_local != 0))
    throw error("make_tensor_plan: n_local " + std::to_string(n_local) +
                " must be >= 1 and divide n_ranks " + std::to_string(n_ranks) + " (order " +
                std::to_string(order) + " groups n_local consecutive ranks)");
  return std::make_unique<tensor_plan>(order, n_ranks, n_local);
}

}  // namespace convoy::router
