// Environment settings: one parser, unset = nullopt, bad values name the variable and value
// (base/README.md BASE-4, BASE-5).
#include <gtest/gtest.h>

#include <convoy/base/error.hpp>
#include <convoy/base/settings.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <map>
#include <string>

namespace base = convoy::base;

namespace {

std::string message_of(const std::map<std::string, std::string>& values) {
  try {
    (void)base::settings::from_values(values);
  } catch (const convoy::error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Settings, UnsetIsNullopt) {  // BASE-4
  const auto s = base::settings::from_values({});
  EXPECT_FALSE(s.mesh);
  EXPECT_FALSE(s.emulate_nodes);
  EXPECT_FALSE(s.emulate_topology);
  EXPECT_FALSE(s.emulate_map);
  EXPECT_FALSE(s.buffer_bytes);
  EXPECT_FALSE(s.n_buffers);
  EXPECT_FALSE(s.tune_file);
  EXPECT_FALSE(s.transport);
  EXPECT_FALSE(s.large);
  EXPECT_FALSE(s.watchdog_seconds);
  EXPECT_FALSE(s.watchdog_abort);
  EXPECT_EQ(s.watchdog_seconds_or_off(), 0.0);
  EXPECT_FALSE(s.convey_nlocal);
  EXPECT_FALSE(s.convey_buffer_size);
  EXPECT_EQ(s.mesh_or_auto(), base::mesh_spec::automatic());
}

TEST(Settings, ParsesEveryVariable) {  // BASE-4
  const auto s = base::settings::from_values({{"CONVOY_MESH", "node,core"},
                                              {"CONVOY_EMULATE_NODES", "4,2,3"},
                                              {"CONVOY_EMULATE_TOPOLOGY", "pack:2 core:2"},
                                              {"CONVOY_EMULATE_MAP", "cyclic"},
                                              {"CONVOY_BUFFER_BYTES", "16Ki"},
                                              {"CONVOY_N_BUFFERS", "4"},
                                              {"CONVOY_TUNE_FILE", "/tmp/tune.json"},
                                              {"CONVOY_TRANSPORT", " shm "},
                                              {"CONVOY_LARGE", "rendezvous"},
                                              {"CONVOY_WATCHDOG", " 1.5 "},
                                              {"CONVOY_WATCHDOG_ABORT", "1"},
                                              {"CONVOY_STATS", "/tmp/stats.json"},
                                              {"CONVEY_NLOCAL", "8"},
                                              {"CONVEY_BUFFER_SIZE", "40k"},
                                              {"UNRELATED", "ignored"}});
  EXPECT_EQ(*s.mesh, "node,core");
  EXPECT_EQ(s.mesh_or_auto(), base::mesh_spec::of_levels({base::level::node, base::level::core}));
  EXPECT_EQ(*s.emulate_nodes, (std::vector<int>{4, 2, 3}));
  EXPECT_EQ(*s.emulate_topology, "pack:2 core:2");
  EXPECT_EQ(*s.emulate_map, base::placement::cyclic);
  EXPECT_EQ(*s.buffer_bytes, 16u * 1024u);
  EXPECT_EQ(*s.n_buffers, 4);
  EXPECT_EQ(*s.tune_file, "/tmp/tune.json");
  EXPECT_EQ(*s.transport, base::transport_kind::shm);
  EXPECT_EQ(*s.large, base::large_kind::rendezvous);
  EXPECT_EQ(*s.watchdog_seconds, 1.5);
  EXPECT_EQ(s.watchdog_seconds_or_off(), 1.5);
  EXPECT_TRUE(*s.watchdog_abort);
  EXPECT_EQ(*s.stats_path, "/tmp/stats.json");
  EXPECT_EQ(*s.convey_nlocal, 8);
  EXPECT_EQ(*s.convey_buffer_size, 40000u);
}

TEST(Settings, ByteSuffixes) {  // BASE-4
  EXPECT_EQ(base::parse_bytes("X", "4096"), 4096u);
  EXPECT_EQ(base::parse_bytes("X", "8k"), 8000u);
  EXPECT_EQ(base::parse_bytes("X", "8K"), 8000u);
  EXPECT_EQ(base::parse_bytes("X", "8Ki"), 8192u);
  EXPECT_EQ(base::parse_bytes("X", "2M"), 2000000u);
  EXPECT_EQ(base::parse_bytes("X", "2Mi"), 2u * 1024u * 1024u);
}

TEST(Settings, InvalidValuesNameTheVariableAndValue) {  // BASE-4
  // The limits of setting_limits, the engine's: a buffer of 64 bytes to 1 GiB.
  for (const char* bad : {"0", "10", "63", "2048Mi", "1025Mi", "8000000Ki", "12q", "-5"})
    EXPECT_EQ(message_of({{"CONVOY_BUFFER_BYTES", bad}}),
              std::string("CONVOY_BUFFER_BYTES='") + bad +
                  "': must be a byte count from 64 bytes to 1 GiB: digits with an optional suffix "
                  "k, Ki, M or Mi")
        << bad;
  for (const char* bad : {"1", "0", "2048Mi", "k"})
    EXPECT_EQ(message_of({{"CONVEY_BUFFER_SIZE", bad}}),
              std::string("CONVEY_BUFFER_SIZE='") + bad +
                  "': must be a byte count from 64 bytes to 1 GiB: digits with an optional suffix "
                  "k, Ki, M or Mi")
        << bad;
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_BUFFER_BYTES", "64"}}).buffer_bytes, 64u);
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_BUFFER_BYTES", "1024Mi"}}).buffer_bytes,
            std::size_t{1} << 30);
  for (const char* bad : {"3", "two", "0", "2048"})
    EXPECT_EQ(message_of({{"CONVOY_N_BUFFERS", bad}}),
              std::string("CONVOY_N_BUFFERS='") + bad + "': must be a power of two from 1 to 1024")
        << bad;
  EXPECT_EQ(message_of({{"CONVEY_NLOCAL", "0"}}), "CONVEY_NLOCAL='0': must be >= 1");
  EXPECT_EQ(message_of({{"CONVOY_EMULATE_MAP", "random"}}),
            "CONVOY_EMULATE_MAP='random': must be block or cyclic");
  EXPECT_EQ(message_of({{"CONVOY_EMULATE_NODES", "4,,3"}}),
            "CONVOY_EMULATE_NODES='4,,3': entry 2 ('') is not a positive integer; expected "
            "sizes like 4,2,3");
  EXPECT_EQ(message_of({{"CONVOY_EMULATE_NODES", "4,0"}}),
            "CONVOY_EMULATE_NODES='4,0': entry 2 is 0; sizes must be >= 1");
  EXPECT_EQ(message_of({{"CONVOY_TUNE_FILE", ""}}),
            "CONVOY_TUNE_FILE='': is empty (unset it or give a path)");
  EXPECT_EQ(message_of({{"CONVOY_TRANSPORT", "ucx"}}),
            "CONVOY_TRANSPORT='ucx': must be auto, mpi, shm, shm-zero-copy or rma");
  // AGG-127: the large-item channel setting, named with its value.
  EXPECT_EQ(message_of({{"CONVOY_LARGE", "get"}}),
            "CONVOY_LARGE='get': must be auto, two-sided or rendezvous");
  // TERM-15: the watchdog's timeout and abort switch.
  for (const char* bad : {"abc", "-5", "", ".", "1e3", "1.2.3", "1..", "inf", "+3", "0x10"})
    EXPECT_EQ(message_of({{"CONVOY_WATCHDOG", bad}}),
              std::string("CONVOY_WATCHDOG='") + bad +
                  "': must be a number of seconds >= 0, e.g. 60 or 1.5 (0: off)");
  EXPECT_EQ(message_of({{"CONVOY_WATCHDOG", "700000"}}),
            "CONVOY_WATCHDOG='700000': is longer than a week");
  EXPECT_EQ(message_of({{"CONVOY_WATCHDOG_ABORT", "yes"}}),
            "CONVOY_WATCHDOG_ABORT='yes': must be 0 or 1");
  EXPECT_EQ(message_of({{"CONVOY_STATS", " "}}),
            "CONVOY_STATS=' ': is empty (unset it or give a path)");
  // TERM-17: the trace directory and the ring's size.
  for (const char* bad : {"", "  "})
    EXPECT_EQ(message_of({{"CONVOY_TRACE", bad}}),
              std::string("CONVOY_TRACE='") + bad + "': is empty (unset it or give a directory)");
  for (const char* bad : {"1000", "8", "33554432", "-16", "64k"})
    EXPECT_EQ(message_of({{"CONVOY_TRACE_EVENTS", bad}}).rfind("CONVOY_TRACE_EVENTS='", 0), 0u)
        << bad;
  EXPECT_EQ(message_of({{"CONVOY_TRACE_EVENTS", "1000"}}),
            "CONVOY_TRACE_EVENTS='1000': must be a power of two from 16 to 16777216");
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_TRACE_EVENTS", "1024"}}).trace_events, 1024u);
  // Integers in a range: each bad value is named with the range and the unit.
  const auto refuses = [](const char* name, std::initializer_list<const char*> bads,
                          const std::string& why) {
    for (const char* bad : bads)
      EXPECT_EQ(message_of({{name, bad}}), std::string(name) + "='" + bad + "': " + why) << bad;
  };
  // TERM-27: the combining cache's entries per lane.
  refuses("CONVOY_COMBINE_CACHE", {"", "-1", "16777217", "16Ki", "1.5"},
          "must be an integer from 0 to 16777216 (entries per lane)");
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_COMBINE_CACHE", " 16384 "}}).combine_cache,
            16384u);
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_COMBINE_CACHE", "0"}}).combine_cache, 0u);
  // TERM-24: the gate's bar, folds per 1024 records examined.
  refuses("CONVOY_COMBINE_MIN_HIT", {"", "-1", "1025", "1/16", "6.25"},
          "must be an integer from 0 to 1024 (folds per 1024 records examined)");
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_COMBINE_MIN_HIT", " 256 "}}).combine_min_hit,
            256u);
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_COMBINE_MIN_HIT", "0"}}).combine_min_hit, 0u);
  EXPECT_FALSE(base::settings::from_values({}).combine_min_hit.has_value());
  // TERM-28: a saved record's worth, nanoseconds.
  refuses("CONVOY_COMBINE_SAVED_NS", {"", "-1", "1000000001", "2.5", "1e3"},
          "must be an integer from 0 to 1000000000 (nanoseconds; 0: measured)");
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_COMBINE_SAVED_NS", " 40 "}}).combine_saved_ns,
            40u);
  EXPECT_FALSE(base::settings::from_values({}).combine_saved_ns.has_value());
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_TRACE", " /tmp/t "}}).trace_dir, "/tmp/t");
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_WATCHDOG", "0"}}).watchdog_seconds, 0.0);
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_WATCHDOG", "60"}}).watchdog_seconds, 60.0);
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_WATCHDOG", ".5"}}).watchdog_seconds, 0.5);
  EXPECT_EQ(*base::settings::from_values({{"CONVOY_WATCHDOG", "5."}}).watchdog_seconds, 5.0);
  EXPECT_EQ(message_of({{"CONVOY_MESH", "8xx2"}}),
            "CONVOY_MESH: mesh spec '8xx2': size 2 is empty (expected sizes like 8x4x2)");
  const auto topo_msg = message_of({{"CONVOY_EMULATE_TOPOLOGY", "pack:two"}});
  EXPECT_EQ(
      topo_msg.rfind("CONVOY_EMULATE_TOPOLOGY='pack:two': hwloc rejects synthetic topology", 0), 0u)
      << topo_msg;
}

TEST(Settings, FromEnvReadsTheProcessEnvironment) {  // BASE-4
  ::setenv("CONVOY_N_BUFFERS", "8", 1);
  ::setenv("CONVOY_MESH", "4x2", 1);
  const auto s = base::settings::from_env();
  ::unsetenv("CONVOY_N_BUFFERS");
  ::unsetenv("CONVOY_MESH");
  EXPECT_EQ(*s.n_buffers, 8);
  EXPECT_EQ(s.mesh_or_auto(), base::mesh_spec::cartesian({4, 2}));
}

TEST(Settings, DescribeListsEveryVariable) {  // BASE-4, BASE-5
  const auto s = base::settings::from_values({{"CONVOY_MESH", "node,core"}});
  const std::string text = s.describe();
  for (const auto& name : base::settings::variable_names())
    EXPECT_NE(text.find(name), std::string::npos) << name;
  EXPECT_NE(text.find("'node,core'"), std::string::npos) << text;
  EXPECT_NE(text.find("(unset: 2)"), std::string::npos) << text;
  EXPECT_EQ(base::settings::variable_names().size(), 19u);
  EXPECT_NE(
      base::settings::from_values({{"CONVOY_COMBINE_MIN_HIT", "256"}}).describe().find("'256'"),
      std::string::npos);
  EXPECT_NE(base::settings::from_values({{"CONVOY_WATCHDOG", "2.5"}}).describe().find("'2.5'"),
            std::string::npos);
  EXPECT_NE(base::settings::from_values({{"CONVOY_TRANSPORT", "mpi"}}).describe().find("'mpi'"),
            std::string::npos);
  EXPECT_STREQ(base::transport_kind_name(base::transport_kind::automatic), "auto");
  EXPECT_STREQ(base::large_kind_name(base::large_kind::two_sided), "two-sided");
  EXPECT_NE(
      base::settings::from_values({{"CONVOY_LARGE", "two-sided"}}).describe().find("'two-sided'"),
      std::string::npos);
}

// BASE-4: every documented range is the enforced one. For each entry of setting_limits,
// the row of its variable in docs/cluster.md's table states range_text(), and the parser
// accepts both ends and refuses one past each.
TEST(Settings, DocumentedLimitsAreTheEnforcedOnes) {
  std::ifstream in(std::string(CONVOY_SOURCE_DIR) + "/docs/cluster.md");
  ASSERT_TRUE(in) << "cannot read docs/cluster.md";
  std::map<std::string, std::string> values;  // variable -> its row's "values" cell
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const auto name_end = line.find("` |");
    if (name_end == std::string::npos) continue;
    const auto cell_end = line.find(" | ", name_end + 3);
    values[line.substr(3, name_end - 3)] = line.substr(name_end + 4, cell_end - name_end - 4);
  }
  for (const auto& l : base::setting_limits) {
    const std::string name(l.name);
    ASSERT_TRUE(values.count(name)) << name << " has no row in docs/cluster.md";
    EXPECT_NE(values[name].find(base::range_text(l)), std::string::npos)
        << name << ": docs/cluster.md says '" << values[name] << "', the limit is "
        << base::range_text(l);
    for (const std::uint64_t ok : {l.min, l.max})
      EXPECT_NO_THROW((void)base::settings::from_values({{name, std::to_string(ok)}})) << name;
    for (const std::uint64_t bad : {l.min - 1, l.max + 1}) {
      if (l.min == 0 && bad == l.min - 1) continue;
      EXPECT_NE(message_of({{name, std::to_string(bad)}}).find(base::range_text(l)),
                std::string::npos)
          << name << "=" << bad;
    }
  }
}
