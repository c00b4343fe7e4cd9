#pragma once
/// @file
/// What every transport over a send_book and a recv_book says the same way (internal): the
/// books themselves, acquire() once open, idle() as "nothing queued or sending", and the
/// memory of both books. The simulated endpoints derive from it; a transport with more
/// in flight (credit messages) overrides idle().
#include <convoy/aggregation/detail/link_book.hpp>
#include <convoy/aggregation/transport.hpp>
#include <cstddef>

namespace convoy::aggregation::detail {

class book_endpoint : public transport {
 public:
  /// A free buffer of `out_link` (send_book::acquire), nullptr before open().
  [[nodiscard]] std::byte* acquire(int out_link) noexcept override {
    return opened_ ? out_.acquire(out_link) : nullptr;
  }
  [[nodiscard]] bool idle() const noexcept override {
    return out_.n_queued() == 0 && out_.n_sending() == 0;
  }
  [[nodiscard]] std::size_t memory_bytes() const noexcept override {
    return out_.memory_bytes() + in_.memory_bytes();
  }
  [[nodiscard]] std::size_t max_memory_bytes() const noexcept override {
    return out_.max_memory_bytes() + in_.max_memory_bytes();
  }

 protected:
  send_book out_;
  recv_book in_;
  bool opened_ = false;  ///< set by open() once the books are initialized
};

}  // namespace convoy::aggregation::detail
