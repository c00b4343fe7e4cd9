#pragma once
// How mpi_transport's messages are told apart on its communicator (private to
// mpi_transport): each stage has a tag for data buffers and one for credit messages.
namespace convoy::aggregation::detail::mpi_wire {

inline constexpr const char* who = "mpi_transport";

inline int data_tag(int stage) { return 2 * stage; }
inline int credit_tag(int stage) { return 2 * stage + 1; }

}  // namespace convoy::aggregation::detail::mpi_wire
