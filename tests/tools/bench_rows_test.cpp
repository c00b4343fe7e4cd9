// The benchmarks' JSON results (tools/bench_rows.hpp): what the harness writes is what the
// tools read, byte for byte, whatever the text holds (BENCH-1, BENCH-2).
#include "bench_rows.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace cb = convoy::bench;

namespace {

// Every kind of character a host name, command line or error message could carry.
const std::string nasty = std::string("a\"b\\c'd\ne\tf\x01g\x1fh/<>{}[],:") + "\xc3\xa9";

cb::run_results sample() {
  cb::run_results r;
  r.context.date = "2025-01-01T00:00:00Z";
  r.context.host = "host " + nasty;
  r.context.git = "abc123";
  r.context.impl = "convoy";
  r.context.mpi = "Open MPI v4.1.4, \"package\": Debian";
  r.context.command = "bench-histogram --mesh node,core --json \"out file.json\" \\";
  r.context.ranks = 4;
  r.context.nodes = 2;
  r.context.ranks_per_node = 2;
  r.context.emulate_nodes = "2,2";
  r.context.transport = "mpi";
  r.context.btl = "self,tcp";
  cb::result_row row;
  row.kernel = "histogram";
  row.impl = "convoy";
  row.kind = "mesh:node,core";
  row.item_bytes = 8;
  row.ranks = 4;
  row.nodes = 2;
  row.items_per_rank = 1'000'000;
  row.reps = 5;
  row.seconds = 0.125;
  row.seconds_min = 0.1;
  row.seconds_max = 0.2;
  row.items_per_s_per_rank = 8e6;
  row.node_bw_bytes_per_s = 1.28e8;
  row.header_bytes_per_item = 1.5;
  row.buffers_per_rank = 6;
  row.buffer_bytes = 16384;
  row.memory_bytes_per_rank = 98304;
  row.n_local = 2;
  row.skew = 1.25;
  row.offnode_bytes = 123456;
  row.wire_bound_items_per_s_per_rank = 1.5625e7;
  row.verified = true;
  r.rows.push_back(row);
  row.kind = "tensor2";
  row.skew = 0;
  row.offnode_bytes = -1;                   // not counted
  row.wire_bound_items_per_s_per_rank = 0;  // no link rate known
  row.verified = false;
  row.error = "constructor failed: \"n_local\" \\ 3\n" + nasty;
  row.header_bytes_per_item = std::nan("");  // bale counts no bytes
  r.rows.push_back(row);
  return r;
}

// BENCH-1: quotes, backslashes, control characters and UTF-8 in any text field come back
// exactly; every field keeps its value.
TEST(BenchRows, RoundTripKeepsEveryFieldAndEveryCharacter) {
  cb::run_results in = sample();
  const std::string text = cb::to_json_text(in);
  EXPECT_TRUE(nlohmann::json::accept(text)) << text;
  cb::run_results out = cb::from_json_text(text, "sample");
  EXPECT_EQ(out.context, in.context);
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0], in.rows[0]);
  EXPECT_EQ(out.rows[1].error, in.rows[1].error);
  EXPECT_TRUE(std::isnan(out.rows[1].header_bytes_per_item));
  out.rows[1].header_bytes_per_item = in.rows[1].header_bytes_per_item = 0;  // NaN != NaN
  EXPECT_EQ(out, in);
}

// BENCH-1: a library that counts no bytes has no header figure: null, not a number; rows
// carry the RESULT line's skew and off-node bytes.
TEST(BenchRows, UncountedHeaderIsNull) {
  const auto doc = nlohmann::json::parse(cb::to_json_text(sample()));
  EXPECT_TRUE(doc["results"][1]["header_bytes_per_item"].is_null());
  EXPECT_DOUBLE_EQ(doc["results"][0]["header_bytes_per_item"].get<double>(), 1.5);
  EXPECT_EQ(doc["context"]["host"].get<std::string>(), "host " + nasty);
  // As the RESULT lines: skew and off-node bytes, null where a kind does not count them.
  EXPECT_DOUBLE_EQ(doc["results"][0]["skew"].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(doc["results"][0]["offnode_bytes"].get<double>(), 123456);
  EXPECT_TRUE(doc["results"][1]["offnode_bytes"].is_null());
  // The wire bound where a link rate was known (CONVOY_LINK_RATES), else null.
  EXPECT_DOUBLE_EQ(doc["results"][0]["wire_bound_items_per_s_per_rank"].get<double>(), 1.5625e7);
  EXPECT_TRUE(doc["results"][1]["wire_bound_items_per_s_per_rank"].is_null());
}

// BENCH-2: a document that is not results is refused with the input's name.
TEST(BenchRows, MalformedInputIsRefusedByName) {
  auto message = [](const std::string& text) {
    try {
      (void)cb::from_json_text(text, "in.json");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("{\"results\": [").find("in.json: "), std::string::npos);
  EXPECT_NE(message("{\"rows\": []}").find("no \"results\""), std::string::npos);
  EXPECT_NE(message("{\"results\": [{\"kind\": \"mesh\"}]}").find("\"kernel\""), std::string::npos);
  EXPECT_NE(message("{\"results\": [{\"kernel\": 3, \"kind\": \"mesh\"}]}").find("in.json: "),
            std::string::npos);
}

// Older rows carry no impl: they take the run's.
TEST(BenchRows, RowsWithoutImplTakeTheRunsImpl) {
  const auto r = cb::from_json_text(
      R"({"context": {"impl": "bale"}, "results": [{"kernel": "histogram", "kind": "simple"}]})",
      "old");
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].impl, "bale");
  EXPECT_FALSE(r.rows[0].verified);
}

TEST(BenchRows, ConfigurationLabels) {
  cb::run_context c;
  c.ranks = 2;
  EXPECT_EQ(cb::configuration_label(c), "np2");
  c.ranks = 4;
  c.emulate_nodes = "2,2";
  c.btl = "self,tcp";
  EXPECT_EQ(cb::configuration_label(c), "np4 2x2 tcp (a)");
  c.transport = "mpi";
  EXPECT_EQ(cb::configuration_label(c), "np4 2x2 tcp (b)");
  c.ranks = 5;
  c.emulate_nodes = "3,2";
  c.btl.clear();
  c.transport = "shm";
  EXPECT_EQ(cb::configuration_label(c), "np5 3+2 transport=shm");
  // Separately launched nodes (tools/cluster): the shape and the links' rate.
  c.ranks = 7;
  c.emulate_nodes.clear();
  c.transport.clear();
  c.btl = "self,vader,tcp";
  c.cluster = "3+2+2@1gbit,1gbit,250mbit";
  EXPECT_EQ(cb::configuration_label(c), "np7 3+2+2@1gbit,1gbit,250mbit");
  c.cluster = "4x2@-";
  c.ranks = 8;
  c.transport = "mpi";
  EXPECT_EQ(cb::configuration_label(c), "np8 4x2@- transport=mpi");
}

// The first lines MPI_Get_library_version gives (Open MPI 4.1, MPICH 4.0, Intel MPI) as
// the short names of a table's columns.
TEST(BenchRows, MpiLabels) {
  EXPECT_EQ(cb::mpi_label("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: "
                          "v4.1.4, May 26, 2022"),
            "Open MPI 4.1.4");
  EXPECT_EQ(cb::mpi_label("MPICH Version:\t4.0.2"), "MPICH 4.0.2");
  EXPECT_EQ(cb::mpi_label("MPICH Version:      3.4.1"), "MPICH 3.4.1");
  EXPECT_EQ(cb::mpi_label("Intel(R) MPI Library 2021.6 for Linux* OS"),
            "Intel(R) MPI Library 2021.6 for Linux* OS");
  EXPECT_EQ(cb::mpi_label("  "), "unknown MPI");
  EXPECT_EQ(cb::mpi_label(""), "unknown MPI");
  // Only a "v" before a digit goes: a word that merely starts with v stays.
  EXPECT_EQ(cb::mpi_label("vendor MPI v2"), "vendor MPI 2");
}

}  // namespace
