// Values kept with a communicator (BASE-9). The attribute holds only a number; the values
// live in one registry of this process, so that they stay reachable (and are dropped) even
// where an MPI library deletes no attribute of MPI_COMM_WORLD at MPI_Finalize.
#include <algorithm>
#include <convoy/base/comm_cache.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace convoy::base {

namespace {

struct entry {
  std::uint64_t serial = 0;  // when it was kept: dropped in the reverse order
  std::shared_ptr<void> value;
};
using entries = std::map<std::string, entry>;

struct registry {
  std::mutex lock;
  std::uint64_t next_id = 1;
  std::uint64_t next_serial = 1;
  std::map<std::uint64_t, entries> by_comm;  // the attribute's number -> its entries
  bool finalize_hook = false;
};

// Never destroyed: MPI_Finalize may run from an atexit handler (the C façade's, when it
// initialized MPI) after the static objects constructed later are gone.
registry& the_registry() {
  static registry* const r = new registry;
  return *r;
}

// Destroys the values, the last kept first, outside the registry's lock (a value's
// deleter may call MPI and keep or drop other values).
void drop(std::vector<entry> doomed) noexcept {
  std::sort(doomed.begin(), doomed.end(),
            [](const entry& a, const entry& b) { return a.serial > b.serial; });
  for (entry& e : doomed) e.value.reset();
}

void take_all(entries& from, std::vector<entry>& into) {
  for (auto& [key, e] : from) into.push_back(std::move(e));
  from.clear();
}

// The communicator is being freed: its values go.
int delete_comm_values(MPI_Comm /*comm*/, int /*keyval*/, void* attribute, void* /*extra*/) {
  const auto id = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(attribute));
  std::vector<entry> doomed;
  {
    registry& r = the_registry();
    const std::lock_guard<std::mutex> hold(r.lock);
    auto it = r.by_comm.find(id);
    if (it == r.by_comm.end()) return MPI_SUCCESS;
    take_all(it->second, doomed);
    r.by_comm.erase(it);
  }
  drop(std::move(doomed));
  return MPI_SUCCESS;
}

// MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still works: every
// value of every communicator goes then.
int delete_all_values(MPI_Comm /*comm*/, int /*keyval*/, void* /*attribute*/, void* /*extra*/) {
  std::vector<entry> doomed;
  {
    registry& r = the_registry();
    const std::lock_guard<std::mutex> hold(r.lock);
    for (auto& [id, e] : r.by_comm) take_all(e, doomed);
    r.by_comm.clear();
  }
  drop(std::move(doomed));
  return MPI_SUCCESS;
}

int comm_keyval() {
  static const int keyval = [] {
    int k = MPI_KEYVAL_INVALID;
    CONVOY_MPI_CHECK(
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_comm_values, &k, nullptr));
    return k;
  }();
  return keyval;
}

void install_finalize_hook() {
  static const int keyval = [] {
    int k = MPI_KEYVAL_INVALID;
    CONVOY_MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_all_values, &k, nullptr));
    CONVOY_MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, k, nullptr));
    return k;
  }();
  static_cast<void>(keyval);
}

// The registry number of `comm`, 0 if it has none (and `create` is false).
std::uint64_t id_of(MPI_Comm comm, bool create) {
  void* attribute = nullptr;
  int found = 0;
  CONVOY_MPI_CHECK(MPI_Comm_get_attr(comm, comm_keyval(), &attribute, &found));
  if (found) return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(attribute));
  if (!create) return 0;
  install_finalize_hook();
  std::uint64_t id = 0;
  {
    registry& r = the_registry();
    const std::lock_guard<std::mutex> hold(r.lock);
    id = r.next_id++;
    r.by_comm.emplace(id, entries{});
  }
  // The attribute is the number itself, never dereferenced.
  // NOLINTNEXTLINE(performance-no-int-to-ptr)
  void* const number = reinterpret_cast<void*>(static_cast<std::uintptr_t>(id));
  CONVOY_MPI_CHECK(MPI_Comm_set_attr(comm, comm_keyval(), number));
  return id;
}

void check(MPI_Comm comm, const char* who) {
  if (comm == MPI_COMM_NULL) throw error(std::string(who) + ": communicator is MPI_COMM_NULL");
}

}  // namespace

std::shared_ptr<void> comm_cached(MPI_Comm comm, const std::string& key) {
  check(comm, "comm_cached");
  const std::uint64_t id = id_of(comm, false);
  if (id == 0) return nullptr;
  registry& r = the_registry();
  const std::lock_guard<std::mutex> hold(r.lock);
  auto it = r.by_comm.find(id);
  if (it == r.by_comm.end()) return nullptr;
  auto e = it->second.find(key);
  return e == it->second.end() ? nullptr : e->second.value;
}

void comm_cache(MPI_Comm comm, const std::string& key, std::shared_ptr<void> value) {
  check(comm, "comm_cache");
  const std::uint64_t id = id_of(comm, true);
  entry old;
  {
    registry& r = the_registry();
    const std::lock_guard<std::mutex> hold(r.lock);
    entry& e = r.by_comm[id][key];
    old.value = std::exchange(e.value, std::move(value));
    e.serial = r.next_serial++;
  }
  // `old` goes here, outside the lock.
}

std::shared_ptr<void> comm_uncache(MPI_Comm comm, const std::string& key) {
  check(comm, "comm_uncache");
  const std::uint64_t id = id_of(comm, false);
  if (id == 0) return nullptr;
  registry& r = the_registry();
  const std::lock_guard<std::mutex> hold(r.lock);
  auto it = r.by_comm.find(id);
  if (it == r.by_comm.end()) return nullptr;
  auto e = it->second.find(key);
  if (e == it->second.end()) return nullptr;
  std::shared_ptr<void> value = std::move(e->second.value);
  it->second.erase(e);
  return value;
}

}  // namespace convoy::base
