#include <algorithm>
#include <climits>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

namespace convoy::base {

void raise_if_any_failed(MPI_Comm comm, const std::string* failure) {
  int rank = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  int mine = failure != nullptr ? rank : INT_MAX;
  int first = INT_MAX;
  CONVOY_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == INT_MAX) return;
  std::string text = rank == first ? *failure : std::string();
  int len = static_cast<int>(text.size());
  CONVOY_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, first, comm));
  text.resize(static_cast<size_t>(len));
  if (len > 0) CONVOY_MPI_CHECK(MPI_Bcast(text.data(), len, MPI_CHAR, first, comm));
  throw error(text);
}

void broadcast(MPI_Comm comm, std::string& text, int root) {
  int rank = 0;
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // [8-byte length][the first broadcast_inline_bytes], then the rest if there is more.
  char head[8 + broadcast_inline_bytes];
  std::uint64_t n = text.size();
  if (rank == root) {
    if (n > static_cast<std::uint64_t>(INT_MAX)) throw error("broadcast: text too large to send");
    std::memcpy(head, &n, 8);
    std::copy_n(text.data(), std::min<std::size_t>(text.size(), broadcast_inline_bytes), head + 8);
  }
  CONVOY_MPI_CHECK(MPI_Bcast(head, static_cast<int>(sizeof head), MPI_BYTE, root, comm));
  std::memcpy(&n, head, 8);
  if (rank != root) {
    text.resize(static_cast<std::size_t>(n));
    std::copy_n(head + 8, std::min<std::size_t>(text.size(), broadcast_inline_bytes), text.data());
  }
  if (n > broadcast_inline_bytes)
    CONVOY_MPI_CHECK(MPI_Bcast(text.data() + broadcast_inline_bytes,
                               static_cast<int>(n - broadcast_inline_bytes), MPI_BYTE, root, comm));
}

void notice_once(MPI_Comm comm, const std::string& key, const std::string& line) noexcept {
  try {
    static std::mutex lock;
    static std::set<std::string> said;
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank != 0) return;
    const std::lock_guard<std::mutex> hold(lock);
    if (!said.insert(key).second) return;
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  } catch (...) {  // a notice is never worth an exception
  }
}

}  // namespace convoy::base
