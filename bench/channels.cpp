// The kinds a benchmark can run (channels.hpp): their names, and the channels over a
// conveyor library — convey.h (the C façade or another library), convoy's engine and its
// coroutine runtime. The MPI baselines are in baseline_channels.cpp.
#include "channels.hpp"

#if CONVOY_BENCH_HAVE_ENGINE
#include <convoy/aggregation/combine_table.hpp>
#include <convoy/base/mesh_spec.hpp>
#include <convoy/base/settings.hpp>
#endif

#include <cstdio>
#include <cstdlib>
#include <new>

namespace convoy::bench {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string(what) +
                           " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

std::vector<std::string> available_kinds() {
  std::vector<std::string> k;
#if CONVOY_BENCH_HAVE_CONVEY
  for (const char* n : {"simple", "tensor1", "tensor2", "tensor3", "convey"}) k.emplace_back(n);
#endif
#if CONVOY_BENCH_HAVE_ENGINE
  k.emplace_back("mesh");
  k.emplace_back("mesh-1d");
  k.emplace_back("coro");
  k.emplace_back("coro-each");
#endif
  k.emplace_back("alltoallv");
  k.emplace_back("naive");
  return k;
}

kind_spec parse_kind(const std::string& name, const options& opt, const job& j) {
  kind_spec k;
  k.name = name;
  if (name == "naive") {
    k.fam = family::naive;
  } else if (name == "alltoallv") {
    k.fam = family::alltoallv;
  } else if (name == "simple" || name == "convey" || name == "tensor1" || name == "tensor2" ||
             name == "tensor3") {
    k.fam = family::convey;
    k.order = name == "simple" ? 0 : name == "convey" ? -1 : name.back() - '0';
    // bale's benchmarks: the local group is a node (an emulated one under emulation).
    k.n_local = opt.convey_n_local ? opt.convey_n_local
                                   : static_cast<std::size_t>(j.uniform_ranks_per_node);
  } else if (name == "mesh" || name == "mesh-1d" || name.rfind("mesh:", 0) == 0 ||
             name == "combine" || name.rfind("combine:", 0) == 0) {
    k.fam = family::engine;
    k.combine = name.rfind("combine", 0) == 0;
    if (name == "mesh" || name == "combine") {
      k.mesh = opt.mesh.empty() ? "auto" : opt.mesh;
    } else if (name == "mesh-1d") {
      k.mesh = std::to_string(j.n_ranks);  // one dimension of all ranks: direct sends
    } else {
      k.mesh = name.substr(name.find(':') + 1);
      if (k.mesh.empty())
        throw std::runtime_error("kind '" + name + "' needs a mesh spec after the colon");
    }
  } else if (name == "coro" || name.rfind("coro:", 0) == 0 || name == "coro-each" ||
             name.rfind("coro-each:", 0) == 0) {
    k.fam = family::coro;
    k.mesh = opt.mesh.empty() ? "auto" : opt.mesh;
    k.each = name.rfind("coro-each", 0) == 0;
    const std::size_t colon = name.find(':');
    if (colon != std::string::npos) {
      const std::string t = name.substr(colon + 1);
      if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 9 ||
          std::stoul(t) == 0)
        throw std::runtime_error("kind '" + name + "': " + name.substr(0, colon) +
                                 ":<tasks> needs a whole number >= 1");
      k.tasks = std::stoul(t);
    }
  } else {
    throw std::runtime_error(
        "unknown kind '" + name +
        "' (naive, alltoallv, simple, tensor1-3, convey, mesh, mesh-1d, "
        "mesh:<spec>, combine, combine:<spec>, coro, coro:<tasks>, coro-each, coro-each:<tasks>)");
  }
  bool built = true;
#if !CONVOY_BENCH_HAVE_CONVEY
  if (k.fam == family::convey) built = false;
#endif
#if !CONVOY_BENCH_HAVE_ENGINE
  if (k.fam == family::engine || k.fam == family::coro) built = false;
#endif
  if (!built) throw std::runtime_error("kind '" + name + "' is not built into this program");
#if CONVOY_BENCH_HAVE_ENGINE
  // A mesh spec the library would refuse is a bad option, named before any run.
  if (!k.mesh.empty()) {
    try {
      const base::mesh_spec m = base::parse_mesh_spec(k.mesh);
      long long cells = 1;
      for (const int size : m.shape) cells *= size;
      if (m.form == base::mesh_spec::kind::cartesian && cells != j.n_ranks)
        throw std::runtime_error("mesh spec '" + k.mesh + "' has " + std::to_string(cells) +
                                 " cells for " + std::to_string(j.n_ranks) + " ranks");
    } catch (const std::exception& e) {
      const bool from_option = k.mesh == opt.mesh && name.find(':') == std::string::npos;
      throw std::runtime_error((from_option ? "--mesh: " : "kind '" + name + "': ") +
                               std::string(e.what()));
    }
  }
#endif
  return k;
}

#if CONVOY_BENCH_HAVE_CONVEY
// ---------------------------------------------------------------------------------------
// convey_channel

/// Counts the bytes a library allocates through its convey_alc8r.
struct convey_channel::counter {
  std::size_t now = 0, peak = 0;
  static void* grab(void* self, std::size_t size, const char*, uint64_t) {
    auto* c = static_cast<counter*>(self);
    void* raw = std::aligned_alloc(64, 64 + ((size + 63) / 64) * 64);
    if (!raw) return nullptr;
    std::memcpy(raw, &size, sizeof size);
    c->now += size;
    c->peak = std::max(c->peak, c->now);
    return static_cast<std::byte*>(raw) + 64;
  }
  static void release(void* self, void* ptr) {
    if (!ptr) return;
    auto* c = static_cast<counter*>(self);
    void* raw = static_cast<std::byte*>(ptr) - 64;
    std::size_t size = 0;
    std::memcpy(&size, raw, sizeof size);
    c->now -= size;
    std::free(raw);
  }
};

convey_channel::convey_channel(MPI_Comm comm, const kind_spec& k, const options& opt)
    : counter_(std::make_unique<counter>()) {
  alloc_.alc8r = counter_.get();
  alloc_.grab = &counter::grab;
  alloc_.free = &counter::release;
  capacity_ = opt.convey_capacity;
  if (capacity_ == 0) {
    const char* env = std::getenv("CONVEY_BUFFER_SIZE");
#if CONVOY_BENCH_HAVE_ENGINE
    // The library's grammar (k = x1000, Ki = x1024, M, Mi): the size the library would use.
    capacity_ = env ? convoy::base::parse_bytes("CONVEY_BUFFER_SIZE", env,
                                                convoy::base::limit_of("CONVEY_BUFFER_SIZE"))
                    : 0;
#else
    capacity_ = env ? std::strtoull(env, nullptr, 10) : 0;  // another library: plain digits
#endif
    if (capacity_ == 0) capacity_ = 10000;  // bale's compiled-in default (MSGBYTES)
  }
  const std::size_t n_buffers =
      opt.convey_buffers > 0 ? static_cast<std::size_t>(opt.convey_buffers) : 1;
  const std::size_t n_local = k.n_local;
  const uint64_t o = convey_opt_RECKLESS | convey_opt_ALERT;
  if (k.order < 0)
    c_ = convey_new(SIZE_MAX, 0, &alloc_, o);
  else if (k.order == 0)
    c_ = convey_new_simple(capacity_, &alloc_, nullptr, o);
  else
    c_ = convey_new_tensor(capacity_, k.order, n_local, n_buffers, &alloc_, o);
  int ok = c_ != nullptr, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm);
  if (!all) throw std::runtime_error("constructor of conveyor kind '" + k.name + "' failed");
}

convey_channel::~convey_channel() {
  if (c_) convey_free(c_);
}

void convey_channel::begin(std::size_t item_bytes) {
  const int rc = convey_begin(c_, item_bytes, 1);
  if (rc <= 0) fail("convey_begin", rc);
}

void convey_channel::reset() {
  const int rc = convey_reset(c_);
  if (rc <= 0) fail("convey_reset", rc);
}

std::size_t convey_channel::memory_bytes() const {
#if CONVOY_BENCH_HAVE_CONVEY_EXT
  if (counter_->peak == 0) return convoy_convey_max_memory_bytes(c_);
#endif
  return counter_->peak;
}

std::size_t convey_channel::buffer_bytes() const {
#if CONVOY_BENCH_HAVE_CONVEY_EXT
  if (const std::size_t b = convoy_convey_buffer_bytes(c_)) return b;
#endif
  return capacity_;
}

std::size_t convey_channel::buffers() const {
  const std::size_t cap = buffer_bytes();
  return cap ? (memory_bytes() + cap / 2) / cap : 0;
}

void convey_channel::fail(const char* call, int rc) const {
  throw std::runtime_error(std::string(call) + " failed: " + convey_error_string(c_, rc) + " (" +
                           std::to_string(rc) + ")");
}
#endif

#if CONVOY_BENCH_HAVE_ENGINE
// ---------------------------------------------------------------------------------------
// engine_channel

engine_channel::engine_channel(MPI_Comm comm, const kind_spec& k, const options& opt) {
  conveyor_options o;
  o.mesh = k.mesh;
  o.buffer_bytes = opt.buffer_bytes;
  o.n_buffers = opt.n_buffers;
  if (k.combine) {
    o.combine = convoy::aggregation::combine_sum<std::uint64_t>(0, 8, 8);
    o.combine_cache_entries = opt.combine_cache;
    combining_ = true;
  }
  conveyor_ = termination::untyped_conveyor(comm, o);
  e_ = conveyor_.streaming();
  if (e_ == nullptr)
    throw std::runtime_error("engine_channel: the conveyor has no streaming engine");
}

std::uint64_t engine_channel::offnode_bytes(const std::vector<int>& rank_node) const {
  const int mine = rank_node.at(static_cast<std::size_t>(e_->rank()));
  std::uint64_t sum = 0;
  for (const auto& stage : e_->stats().stages)
    for (const auto& l : stage.links)
      if (rank_node.at(static_cast<std::size_t>(l.peer)) != mine) sum += l.bytes_sent;
  return sum;
}

void engine_channel::begin(std::size_t item_bytes) {
  const int rc = e_->begin(item_bytes);
  if (rc <= 0) fail("begin", rc);
}

void engine_channel::reset() {
  const int rc = e_->reset();
  if (rc <= 0) fail("reset", rc);
}

std::size_t engine_channel::buffers() const {
  return router::link_count(e_->plan(), e_->rank()) *
         static_cast<std::size_t>(e_->options().n_buffers);
}

coro_channel::coro_channel(MPI_Comm comm, const kind_spec& k, const options& opt) {
  async::runtime_options o;
  o.conveyor.mesh = k.mesh;
  o.conveyor.buffer_bytes = opt.buffer_bytes;
  o.conveyor.n_buffers = opt.n_buffers;
  if (k.tasks != 0) o.max_tasks = k.tasks;
  each_ = k.each;
  rt_ = std::make_unique<async::runtime>(comm, o);
}

std::size_t coro_channel::memory_bytes() const {
  const auto frames = async::frame_statistics();
  return rt_->max_memory_bytes() + frames.peak_live * ((frames.largest_frame + 63) / 64 * 64);
}

std::size_t coro_channel::buffers() const {
  const auto& e = rt_->request_engine();
  return 2 * router::link_count(e.plan(), e.rank()) *
         static_cast<std::size_t>(e.options().n_buffers);
}

std::size_t coro_channel::buffer_bytes() const {
  return rt_->request_engine().options().buffer_bytes;
}

void engine_channel::fail(const char* call, int rc) const {
  throw std::runtime_error(std::string("engine ") + call +
                           " failed: " + termination::error_string(rc) + " " + e_->last_message());
}
#endif

}  // namespace convoy::bench
