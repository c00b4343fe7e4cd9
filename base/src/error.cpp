#include <convoy/base/error.hpp>
#include <string>

namespace convoy::detail {

void throw_mpi_error(const char* call, int code, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
  throw error(std::string(call) + " failed: " + std::string(text, static_cast<size_t>(len)) + " (" +
                  file + ":" + std::to_string(line) + ")",
              code);
}

}  // namespace convoy::detail
