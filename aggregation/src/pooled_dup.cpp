// Duplicates handed from one transport to the next on the same communicator (AGG-69).
#include <convoy/aggregation/detail/pooled_dup.hpp>
#include <convoy/base/comm_cache.hpp>
#include <convoy/base/error.hpp>
#include <map>
#include <mutex>
#include <utility>

namespace convoy::aggregation::detail {

namespace {

bool finalized() noexcept {
  int done = 0;
  MPI_Finalized(&done);
  return done != 0;
}

}  // namespace

// The kept duplicates of one communicator, by serial; serials are agreed by every rank, so
// one duplicate has one serial everywhere.
class dup_pool {
 public:
  dup_pool() = default;
  dup_pool(const dup_pool&) = delete;
  dup_pool& operator=(const dup_pool&) = delete;
  ~dup_pool() {
    if (finalized()) return;
    for (auto& [serial, comm] : kept) MPI_Comm_free(&comm);
  }

  std::mutex lock;
  std::uint64_t next = 1;  // 0 means "none"
  std::map<std::uint64_t, MPI_Comm> kept;
};

pooled_dup::pooled_dup(MPI_Comm parent) {
  if (parent == MPI_COMM_NULL) throw convoy::error("pooled_dup: communicator is MPI_COMM_NULL");
  const char* key = "convoy.aggregation.dups";
  pool_ = base::comm_cached_as<dup_pool>(parent, key);
  if (!pool_) {
    pool_ = std::make_shared<dup_pool>();
    base::comm_cache(parent, key, pool_);
  }
  std::uint64_t offer = 0, next = 0;
  {
    const std::lock_guard<std::mutex> hold(pool_->lock);
    if (!pool_->kept.empty()) offer = pool_->kept.begin()->first;
    next = pool_->next;
  }
  // The largest offer, the smallest (as the largest complement) and the next serial.
  std::uint64_t v[3] = {offer, ~offer, next};
  CONVOY_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_UINT64_T, MPI_MAX, parent));
  const std::uint64_t largest = v[0], smallest = ~v[1];
  MPI_Comm dropped = MPI_COMM_NULL;
  {
    const std::lock_guard<std::mutex> hold(pool_->lock);
    if (smallest == largest && largest != 0) {
      auto it = pool_->kept.find(largest);
      comm_ = it->second;
      serial_ = largest;
      pool_->kept.erase(it);
    } else if (offer != 0) {  // not kept by every rank: no use to anyone
      auto it = pool_->kept.find(offer);
      dropped = it->second;
      pool_->kept.erase(it);
    }
    pool_->next = v[2];
  }
  if (dropped != MPI_COMM_NULL) MPI_Comm_free(&dropped);
  if (comm_ != MPI_COMM_NULL) return;
  CONVOY_MPI_CHECK(MPI_Comm_dup(parent, &comm_));
  serial_ = v[2];
  {
    const std::lock_guard<std::mutex> hold(pool_->lock);
    pool_->next = v[2] + 1;
  }
  if (const int rc = MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN); rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm_);
    convoy::detail::throw_mpi_error("MPI_Comm_set_errhandler", rc, __FILE__, __LINE__);
  }
}

pooled_dup::pooled_dup(pooled_dup&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      serial_(other.serial_),
      pool_(std::move(other.pool_)) {}

pooled_dup& pooled_dup::operator=(pooled_dup&& other) noexcept {
  if (this != &other) {
    end(false);
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    serial_ = other.serial_;
    pool_ = std::move(other.pool_);
  }
  return *this;
}

pooled_dup::~pooled_dup() { end(false); }

void pooled_dup::end(bool settled) noexcept {
  if (comm_ == MPI_COMM_NULL) return;
  if (finalized()) {
    comm_ = MPI_COMM_NULL;
    return;
  }
  if (settled && pool_) {
    const std::lock_guard<std::mutex> hold(pool_->lock);
    if (pool_->kept.size() < max_kept) {
      pool_->kept.emplace(serial_, std::exchange(comm_, MPI_COMM_NULL));
      return;
    }
  }
  MPI_Comm_free(&comm_);
}

}  // namespace convoy::aggregation::detail
