#pragma once
/// @file
/// Task-level synchronisation: `co_await when_all(std::move(children))` starts every child
/// task, lets them interleave with every other task of the runtime (each runs until it
/// waits on a remote access), and resumes the awaiting task when the last one finishes.
/// It returns the children's values in order (nothing for task<void>) and rethrows the
/// first child's exception (in child order) after all have finished.
#include <convoy/async/task.hpp>
#include <cstddef>
#include <vector>

namespace convoy::async {

namespace detail {

/// Shared by the children of one when_all: the parent resumes when `remaining` is 0.
struct group_state {
  std::size_t remaining = 0;
  std::coroutine_handle<> parent;
};

}  // namespace detail

template <class T>
class when_all_awaiter {
 public:
  explicit when_all_awaiter(std::vector<task<T>> children) : children_(std::move(children)) {}

  bool await_ready() const noexcept { return children_.empty(); }

  bool await_suspend(std::coroutine_handle<> parent) {
    // One extra count held by this loop, so that children finishing while it still starts
    // others do not resume the parent early.
    state_.remaining = children_.size() + 1;
    state_.parent = parent;
    for (auto& c : children_) {
      auto h = c.native();
      h.promise().group = &state_;
      h.resume();
    }
    return --state_.remaining != 0;  // false: every child finished already, go on at once
  }

  auto await_resume() {
    for (auto& c : children_)
      if (c.native().promise().error) std::rethrow_exception(c.native().promise().error);
    if constexpr (std::is_void_v<T>) {
      children_.clear();
    } else {
      std::vector<T> out;
      out.reserve(children_.size());
      for (auto& c : children_) out.push_back(std::move(*c.native().promise().value));
      children_.clear();
      return out;
    }
  }

 private:
  std::vector<task<T>> children_;
  detail::group_state state_;
};

/// Awaitable: runs `children` concurrently; see the file comment.
template <class T>
[[nodiscard]] when_all_awaiter<T> when_all(std::vector<task<T>> children) {
  return when_all_awaiter<T>(std::move(children));
}

}  // namespace convoy::async
