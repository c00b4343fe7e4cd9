// The coroutine-task runtime: one request and one reply conveyor per runtime, tasks
// resumed when their replies arrive (Fischler & Uchima 1993, sec. 4.1–4.3). The phase loop is
// phase.cpp.
#include <string>

#include "runtime_impl.hpp"

namespace convoy::async {

namespace {

// Throws convoy::error naming a remote function identifier that this runtime did not give
// out (runtime::id_here).
void check_defined(std::uint32_t id, std::size_t n_handlers, const char* what) {
  if (id < n_handlers) return;
  std::string m = std::string("convoy::async: ") + what + " of a remote function ";
  if (id == detail::k_foreign_fn)
    m += "defined on another runtime";
  else if (id == detail::k_undefined_fn)
    m += "that was never defined (a default-constructed remote_fn)";
  else
    m += "#" + std::to_string(id) + ", which this runtime did not define";
  throw convoy::error(m);
}

std::string message_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

}  // namespace

void detail::throw_remote_error(std::uint32_t id, int rank) {
  throw remote_error("convoy::async: remote function #" + std::to_string(id) + " threw on rank " +
                     std::to_string(rank));
}

std::uint64_t detail::mix_signature(std::uint64_t h, std::uint64_t v) noexcept {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xBF58476D1CE4E5B9ull;
}

std::coroutine_handle<> detail::promise_base::final_awaiter::await_suspend(
    std::coroutine_handle<> self, promise_base& p) noexcept {
  if (p.continuation) return p.continuation;
  if (p.group) return --p.group->remaining == 0 ? p.group->parent : std::noop_coroutine();
  if (p.root) p.root->rt->root_failed(self, p.error);  // frees the frame
  return std::noop_coroutine();
}

runtime::runtime(MPI_Comm comm, runtime_options options)
    : options_(std::move(options)), impl_(std::make_unique<impl>()) {
  if (options_.max_tasks < 1) throw convoy::error("convoy::async: max_tasks must be >= 1");
  if (options_.serve_every < 1) throw convoy::error("convoy::async: serve_every must be >= 1");
  CONVOY_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  CONVOY_MPI_CHECK(MPI_Comm_size(comm, &n_ranks_));
  CONVOY_MPI_CHECK(MPI_Comm_dup(comm, &impl_->comm));
  MPI_Comm_set_errhandler(impl_->comm, MPI_ERRORS_RETURN);
  conveyor_options o = options_.conveyor;
  o.steady = false;
  if (o.kind == conveyor_kind::elastic) o.kind = conveyor_kind::streaming;
  if (!o.settings)  // resolved once for the plan and both conveyors
    o.settings = std::make_shared<const base::settings>(base::settings::from_env(comm));
  impl_->plan = make_plan(comm, o, *o.settings);
  impl_->conveyor = o;
  impl_->request_conveyor = termination::untyped_conveyor(comm, o, impl_->plan);
  impl_->reply_conveyor = termination::untyped_conveyor(comm, o, impl_->plan);
  impl_->request_conveyor.set_report_label("async", "requests");
  impl_->reply_conveyor.set_report_label("async", "replies");
  impl_->requests = impl_->request_conveyor.streaming();
  impl_->replies = impl_->reply_conveyor.streaming();
  if (!impl_->requests || !impl_->replies)
    throw convoy::error("convoy::async: its conveyors must be of the streaming kind");
  impl_->owner = this;
  hot_.root.rt = this;
  impl_->forwards = impl_->replies->plan().max_hops() > 1;
  hot_.serve_every = options_.serve_every;
}

runtime::~runtime() {
  impl_->combiners.clear();
  impl_->requests = impl_->replies = nullptr;
  impl_->request_conveyor = termination::untyped_conveyor();  // collective: CONVOY_STATS
  impl_->reply_conveyor = termination::untyped_conveyor();
  if (impl_->comm != MPI_COMM_NULL) MPI_Comm_free(&impl_->comm);
}

std::size_t runtime::max_memory_bytes() const noexcept {
  std::size_t n = impl_->requests->max_memory_bytes() + impl_->replies->max_memory_bytes();
  for (const auto& c : impl_->combiners)
    if (c.engine) n += c.engine->max_memory_bytes();
  return n;
}

const termination::engine& runtime::request_engine() const noexcept { return *impl_->requests; }

void runtime::serve_now() {
  hot_.since_serve = 0;
  impl_->serve_and_advance();
}

std::uint32_t runtime::add_handler(detail::handler_entry e) {
  if (impl_->running) throw convoy::error("convoy::async: define() is not legal during a phase");
  if (impl_->handlers.size() >= 65536)
    throw convoy::error("convoy::async: more than 65536 remote functions");
  impl_->handlers.push_back(std::move(e));
  return static_cast<std::uint32_t>(impl_->handlers.size() - 1);
}

void runtime::spawn(task<void> t) {
  if (!impl_->running) throw convoy::error("convoy::async: spawn() outside a running phase");
  auto h = t.release();
  h.promise().root = &hot_.root;
  impl_->new_roots.push_back(h);
}

void runtime::invoke_local(std::uint32_t id, const std::byte* args, std::byte* result) {
  check_defined(id, impl_->handlers.size(), "call");
  if (!impl_->running) throw convoy::error("convoy::async: a call awaited outside a running phase");
  if (impl_->in_function())
    throw convoy::error("convoy::async: a remote function cannot issue calls");
  const auto& h = impl_->handlers[id];
  h.invoke_here(h.fn.get(), args, result, hot_.open);
  ++stats_.local;
}

void runtime::send_call(int rank, std::uint32_t id, const std::byte* args,
                        const detail::call_state& call) {
  auto& m = *impl_;
  check_defined(id, m.handlers.size(), "call");
  if (!m.running) throw convoy::error("convoy::async: a call awaited outside a running phase");
  if (m.in_function()) throw convoy::error("convoy::async: a remote function cannot issue calls");
  if (rank < 0 || rank >= n_ranks_)
    throw convoy::error("convoy::async: call to rank " + std::to_string(rank) + " of " +
                        std::to_string(n_ranks_));
  const std::uint32_t token = m.take_slot(call);
  ++stats_.calls;
  m.push_call(rank, token, id, args);
}

void runtime::call_not_sent(int rank, std::uint32_t token, std::uint32_t id, const std::byte* args,
                            int rc) {
  auto& m = *impl_;
  m.check(rc, "request", *m.requests);
  ++stats_.blocked;
  m.queue_call(rank, token, id, args);
}

void runtime::send_post(int rank, std::uint32_t id, const std::byte* args) {
  auto& m = *impl_;
  check_defined(id, m.handlers.size(), "post");
  if (!m.running) throw convoy::error("convoy::async: post() outside a running phase");
  if (m.in_function()) throw convoy::error("convoy::async: a remote function cannot post");
  if (rank < 0 || rank >= n_ranks_)
    throw convoy::error("convoy::async: post to rank " + std::to_string(rank) + " of " +
                        std::to_string(n_ranks_));
  m.write_request(k_post, id, args);
  ++stats_.posts;
  m.push_request(rank);  // may serve while its path is full: the flag goes up only after
  hot_.self_posted |= rank == rank_;
}

void runtime::root_failed(std::coroutine_handle<> h, const std::exception_ptr& error) noexcept {
  // Read before the frame (and the promise with it) goes.
  bool secondary = false;  // it threw the remote_error of a failed call: the cause is elsewhere
  try {
    std::rethrow_exception(error);
  } catch (const remote_error&) {
    secondary = true;
  } catch (...) {  // NOLINT(bugprone-empty-catch): any other exception is a cause
  }
  impl_->note_error("a task on rank " + std::to_string(rank_) + " threw: " + message_of(error),
                    secondary);
  h.destroy();
  --hot_.root.in_flight;
}

}  // namespace convoy::async
