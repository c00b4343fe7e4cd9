// Combinable updates of convoy::async (API-82): one combining engine per update, items
// [u64 local index][value], folded on the way by the update's own op (the tag declares it
// associative and commutative). The engines join the phase loop beside the request and
// reply conveyors: advanced with them, told done when this rank's tasks are, and the phase
// ends only once each is complete and everything it delivered has been applied.
#include <string>

#include "runtime_impl.hpp"

namespace convoy::async {

std::uint32_t runtime::add_combiner(detail::combiner_entry e) {
  if (impl_->running)
    throw convoy::error("convoy::async: define_update() is not legal during a phase");
  if (impl_->combiners.size() >= 65536)
    throw convoy::error("convoy::async: more than 65536 combinable updates");
  impl::combiner c;
  c.entry = e;
  impl_->combiners.push_back(std::move(c));
  return static_cast<std::uint32_t>(impl_->combiners.size() - 1);
}

void runtime::send_combinable(std::uint32_t c, const std::byte* record, int rank) {
  auto& m = *impl_;
  if (c >= m.combiners.size())
    throw convoy::error("convoy::async: a combinable update that this runtime did not define");
  if (!m.running) throw convoy::error("convoy::async: update() outside a running phase");
  if (m.in_function())
    throw convoy::error("convoy::async: a remote function cannot issue a combinable update");
  if (rank < 0 || rank >= n_ranks_)
    throw convoy::error("convoy::async: update to rank " + std::to_string(rank) + " of " +
                        std::to_string(n_ranks_));
  termination::engine& e = *m.combiners[c].engine;
  for (bool first = true;; first = false) {
    const int rc = e.push(record, rank);
    m.check(rc, "combinable update", e);
    if (rc > 0) break;
    ++(first ? stats_.blocked : stats_.blocked_rounds);
    m.serve_and_advance();
  }
  ++stats_.combinable;
}

// Builds the engines of updates defined since the last phase (collective: every rank has
// the same list, check_definitions said so) and begins every engine.
void runtime::impl::start_combiners() {
  combiner_engines.clear();
  for (combiner& c : combiners) {
    if (!c.engine) {
      conveyor_options o = conveyor;
      o.combine = {0, 8, 8, static_cast<std::uint32_t>(c.entry.value_bytes), c.entry.fold};
      c.conveyor = termination::untyped_conveyor(comm, o, plan);
      c.conveyor.set_report_label("async", "combine");
      c.engine = c.conveyor.streaming();
    }
    check(c.engine->begin(8 + c.entry.value_bytes), "begin", *c.engine);
    c.complete = false;
    combiner_engines.push_back(c.engine);
  }
}

void runtime::impl::drain_combiner(combiner& c) {
  termination::item_view v;
  for (;;) {
    const int rc = c.engine->pull(v);
    check(rc, "pull combinable update", *c.engine);
    if (rc == 0) return;
    std::uint64_t local = 0;
    std::memcpy(&local, v.data, 8);
    try {
      c.entry.apply(c.entry.target, local, v.data + 8);
    } catch (const std::exception& ex) {
      note_error("a combinable update threw on rank " + std::to_string(owner->rank()) + ": " +
                 ex.what());
    } catch (...) {
      note_error("a combinable update threw on rank " + std::to_string(owner->rank()));
    }
  }
}

bool runtime::impl::advance_combiners(bool done) {
  bool all = true;
  for (combiner& c : combiners) {
    if (c.complete) continue;
    drain_combiner(c);
    const int rc = c.engine->advance(done);
    check(rc, "advance", *c.engine);
    drain_combiner(c);
    c.complete = rc == termination::done;
    all = all && c.complete;
  }
  return all;
}

void runtime::impl::finish_combiners(runtime_stats& st) {
  for (combiner& c : combiners) {
    st.combined += c.engine->stats(false).combined;
    check(c.engine->reset(), "reset", *c.engine);
  }
}

}  // namespace convoy::async
