#pragma once
// One random sequence of the model-based test: P engines over the simulated transport,
// driven by a seeded random sequence of legal and illegal calls, every result checked
// against the contract model (contract_model.hpp). Everything — plan, options, calls,
// network schedule — follows from the seed, so a failure is replayed by its seed.
#include <array>
#include <convoy/aggregation/sim_transport.hpp>
#include <convoy/termination/engine.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "contract_model.hpp"
#include "random_setup.hpp"

namespace convoy_test::model {

// One call as the trace records it.
struct call_record {
  char op;      // B begin, P push, E epush, L pull, U unpull, A advance, F flush, R reset,
                // D deliver, X destroy, - phase marker
  int rank;     // engine called (-1: network or phase)
  long long a;  // dest / bytes / done / rigid / count
  long long b;  // bytes / source / delivered
  long long c;  // null item / bytes pulled
  int rc;       // result
};

// How often each call met each state and result: coverage[op][state][rc + 8] (op: index
// in coverage_ops; rc outside -8..2 counted at 11).
inline constexpr const char* coverage_ops = "BPELUAFR";
using coverage_table = std::array<std::array<std::array<std::uint64_t, 12>, 5>, 8>;

struct run_result {
  bool ok = true;
  std::string failure;  // what is wrong, with seed, setup and the end of the trace
  std::uint64_t calls = 0;
  std::uint64_t items = 0;  // items pulled
  int n_ranks = 0;
  coverage_table coverage{};
  std::uint64_t cross_cycle_calls = 0;  // calls while ranks are in different cycles
  std::uint64_t steady_checks = 0;
  bool drained = false;
};

class model_runner {
 public:
  // `avoid_known_bugs`: skip the call patterns of the engine bugs still open (listed in
  // model_test.cpp, each with a minimal test), so that the rest stays covered.
  explicit model_runner(std::uint64_t seed, int max_ranks = 12, bool avoid_known_bugs = true);
  ~model_runner();
  model_runner(const model_runner&) = delete;
  model_runner& operator=(const model_runner&) = delete;

  run_result run();
  // The whole trace, one call per line.
  [[nodiscard]] std::string trace_text(std::size_t last = 0) const;
  [[nodiscard]] const std::string& label() const noexcept { return setup_.label; }

 private:
  [[nodiscard]] bool elastic() const noexcept {
    return setup_.options.mode == convoy::termination::item_mode::elastic;
  }
  // Checked calls: each calls engine r, records the call, and checks the result, the
  // state and the counters against the model. They return the engine's result.
  int do_begin(int r, std::size_t bytes);
  int do_push(int r, int dest, bool null_item);
  int do_epush(int r, int dest, std::size_t bytes, bool null_item);
  int do_pull(int r, bool rigid);
  int do_unpull(int r);
  int do_advance(int r, bool done);
  int do_flush(int r);
  int do_reset(int r);
  void do_deliver(int max_buffers);
  void do_destroy(int r);

  // Phases (model_phases.cpp).
  void random_step();
  void rank_step(int r);
  void drain();
  void drain_rank(int r, int target);
  void steady_check();
  void finish();

  // Helpers.
  void fail(const std::string& why);
  [[nodiscard]] bool failed() const noexcept { return !failure_.empty(); }
  void record(char op, int rank, long long a, long long b, long long c, int rc);
  void check_after(int r, const char* call);
  void release_view(int r);
  void note_post(int r, int rc);
  int random_dest();
  std::size_t random_epush_bytes();
  std::size_t planned_bytes(int cycle) const;
  convoy::termination::engine& eng(int r) { return *engines_[static_cast<std::size_t>(r)]; }
  void build();
  void misuse(int r);
  void pull_burst(int r, int n, bool rigid);
  std::size_t bad_begin_bytes();
  [[nodiscard]] bool all_at(int cycle) const;
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::uint64_t seed_;
  std::mt19937_64 rng_;
  setup setup_;
  int p_ = 0;
  std::unique_ptr<convoy::aggregation::sim_network> net_;
  std::vector<std::unique_ptr<convoy::termination::engine>> engines_;
  std::unique_ptr<contract> model_;
  std::vector<std::size_t> planned_;  // item size per cycle
  // The item_view of each rank's last successful pull while it must stay valid.
  struct held {
    bool live = false;
    convoy::termination::item_view view;
    item_id id;
  };
  std::vector<held> held_;
  // Known bug 1 (model_test.cpp): on an elastic engine, an unpull after a push or flush
  // that followed a pull of an item to self. Per rank: such a push or flush happened.
  bool avoid_known_bugs_;
  std::vector<bool> self_pull_posted_;
  std::vector<int> quota_;        // drain: pushes still to make in this cycle
  std::vector<int> quota_cycle_;  // drain: the cycle quota_ belongs to
  std::vector<std::byte> buf_;
  std::vector<call_record> trace_;
  std::string failure_;
  std::uint64_t items_ = 0;
  run_result stats_;
};

}  // namespace convoy_test::model
