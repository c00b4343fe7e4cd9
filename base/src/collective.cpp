#include <climits>
#include <convoy/base/collective.hpp>
#include <convoy/base/error.hpp>

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

}  // namespace convoy::base
