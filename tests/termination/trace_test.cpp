// The trace recorder alone (termination/README.md, TERM-17): the ring keeps the newest
// events in order and counts the rest as dropped; the file is valid Chrome trace-event JSON
// (parsed back with nlohmann-json) with its metadata, and every complete event has its fields.
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/termination/trace.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace {

using convoy::termination::trace_event;
using convoy::termination::trace_kind;
using convoy::termination::trace_options;
using convoy::termination::trace_recorder;
using convoy::termination::trace_ring;
using json = nlohmann::json;

trace_event numbered(std::uint32_t n) {
  trace_event e;
  e.t_ns = n;
  e.items = n;
  return e;
}

TEST(TraceRing, KeepsEverythingBelowCapacityInOrder) {  // TERM-17
  trace_ring r(8);
  for (std::uint32_t i = 0; i < 5; ++i) r.put(numbered(i));
  EXPECT_EQ(r.size(), 5u);
  EXPECT_EQ(r.dropped(), 0u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(r.at(i).items, i);
  EXPECT_EQ(r.newest().items, 4u);
}

TEST(TraceRing, WrapsAroundOverwritingTheOldestAndCountsThem) {  // TERM-17
  trace_ring r(8);
  for (std::uint32_t i = 0; i < 21; ++i) r.put(numbered(i));
  EXPECT_EQ(r.size(), 8u);
  EXPECT_EQ(r.total(), 21u);
  EXPECT_EQ(r.dropped(), 13u);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(r.at(i).items, 13 + i) << i;
  EXPECT_EQ(r.newest().items, 20u);
  r.newest().items = 99;  // extended in place
  EXPECT_EQ(r.at(7).items, 99u);
}

TEST(TraceRing, CapacityMustBeAPowerOfTwo) {  // TERM-17
  EXPECT_THROW(trace_ring(12), convoy::error);
  EXPECT_THROW(trace_ring(0), convoy::error);
  EXPECT_NO_THROW(trace_ring(16));
}

// A recorder of rank 1 of 3 with two out-links and one in-link.
trace_recorder sample(std::size_t events) {
  trace_options o;
  o.dir = ::testing::TempDir() + "trace_test";
  std::filesystem::create_directories(o.dir);
  o.events = events;
  o.conveyor = 4;
  return {o, 1, 3, 2, {{0, 0}, {1, 2}}, {{0, 0}}};
}

json parsed(const trace_recorder& t) {
  std::ostringstream out;
  t.write_json(out);
  return json::parse(out.str());  // throws on invalid JSON
}

TEST(TraceRecorder, FileIsChromeTraceJsonWithMetadataAndEvents) {  // TERM-17
  auto t = sample(64);
  t.advance_enter();
  t.send(1, 4096, 250, convoy::termination::trace_full | convoy::termination::trace_items);
  t.receive(0, 100, 0, 0);
  t.stall_edge(0, false);
  t.stall_edge(0, true);  // the stall ends: one "X"
  t.stages_closed(1, 2);
  t.stages_closed(1, 2);   // nothing new
  t.stall_edge(1, false);  // still stalled when the file is written
  t.advance_leave();
  t.flush();
  EXPECT_EQ(t.file_name(), ::testing::TempDir() + "trace_test/convoy-trace.4.1.json");
  const json d = parsed(t);
  ASSERT_TRUE(d.contains("traceEvents"));
  std::set<std::string> threads;
  int sends = 0, receives = 0, stalls = 0, advances = 0, closed = 0, flushes = 0;
  for (const auto& e : d["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e;
    EXPECT_EQ(e["pid"], 1);
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
      if (e["name"] == "process_name") {
        EXPECT_EQ(e["args"]["name"], "rank 1");
      }
      continue;
    }
    ASSERT_TRUE(e.contains("ts") && e.contains("tid")) << e;
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur")) << e;
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    } else {
      EXPECT_EQ(ph, "i");
    }
    const std::string name = e["name"];
    if (name == "send") {
      ++sends;
      EXPECT_EQ(e["tid"], 2);  // out-link 1
      EXPECT_EQ(e["args"]["items"], 250);
      EXPECT_EQ(e["args"]["bytes"], 4096);
      EXPECT_EQ(e["args"]["full"], true);
    }
    if (name == "receive") {
      ++receives;
      EXPECT_EQ(e["tid"], 3);  // after the two out-links
      EXPECT_FALSE(e["args"].contains("items"));
    }
    if (name == "credit stall") {
      ++stalls;
      EXPECT_EQ(e["args"]["open"], e["tid"] == 2) << e;  // out-link 1's is open
    }
    advances += name == "advance";
    closed += name == "stage closed";
    flushes += name == "flush";
  }
  EXPECT_EQ(threads, (std::set<std::string>{"advance", "stage 0 \u2192 rank 0",
                                            "stage 1 \u2192 rank 2", "stage 0 \u2190 rank 0"}));
  EXPECT_EQ(sends, 1);
  EXPECT_EQ(receives, 1);
  EXPECT_EQ(stalls, 2);
  EXPECT_EQ(advances, 1);
  EXPECT_EQ(closed, 2);  // stages 0 and 1, once
  EXPECT_EQ(flushes, 1);
  EXPECT_EQ(d["otherData"]["events_dropped"], 0);
  EXPECT_EQ(d["otherData"]["out_links"], json::parse("[[0,0],[1,2]]"));
}

TEST(TraceRecorder, IdleAdvancesMergeIntoOneEvent) {  // TERM-17
  auto t = sample(64);
  auto busy = [&t] {
    t.advance_enter();
    t.receive(0, 16, 0, 0);
    t.advance_leave();
  };
  busy();
  for (int i = 0; i < 5; ++i) {
    t.advance_enter();
    t.advance_leave();
  }
  busy();
  // receive, advance; five idle advances as one; receive, advance.
  ASSERT_EQ(t.ring().size(), 5u);
  const trace_kind kinds[] = {trace_kind::receive, trace_kind::advance, trace_kind::advance,
                              trace_kind::receive, trace_kind::advance};
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(t.ring().at(i).kind, kinds[i]) << i;
  EXPECT_EQ(t.ring().at(1).items, 1u);
  EXPECT_EQ(t.ring().at(2).items, 5u);
  EXPECT_EQ(t.ring().at(4).items, 1u);
  EXPECT_LE(t.ring().at(2).t_ns + t.ring().at(2).dur_ns, t.ring().at(3).t_ns);
}

TEST(TraceRecorder, DroppedEventsAreInTheFile) {  // TERM-17
  auto t = sample(16);
  for (int i = 0; i < 40; ++i) t.flush();
  const json d = parsed(t);
  EXPECT_EQ(d["otherData"]["events_dropped"], 24);
  EXPECT_EQ(d["otherData"]["events_recorded"], 40);
  int events = 0;
  for (const auto& e : d["traceEvents"]) events += e["ph"] != "M";
  EXPECT_EQ(events, 16);
}

TEST(TraceRecorder, WritesItsFileWhenDestroyed) {  // TERM-17
  std::string path;
  {
    auto t = sample(16);
    t.flush();
    path = t.file_name();
    std::filesystem::remove(path);
  }
  std::ifstream in(path);
  const json d = json::parse(in);
  EXPECT_EQ(d["otherData"]["rank"], 1);
  EXPECT_EQ(d["otherData"]["events_recorded"], 1);
  std::filesystem::remove(path);
}

}  // namespace
