#include "sim_report.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace convoy::sim {

namespace {
constexpr double header_bytes = 16;  // aggregation::buffer_header

nlohmann::json bound_json(const time_bound& b) {
  nlohmann::json j = {{"seconds", b.seconds},
                      {"cpu_seconds", b.cpu_seconds},
                      {"nic_seconds", b.nic_seconds},
                      {"rank", b.rank},
                      {"offnode_items", b.offnode_items}};
  for (int k = 0; k < aggregation::n_link_classes; ++k)
    j["link_ends"][aggregation::link_class_name(static_cast<aggregation::link_class>(k))] =
        b.link_ends[k];
  return j;
}

void print_bound(std::ostream& out, const time_bound& b) {
  char line[256];
  std::snprintf(line, sizeof line,
                "%-22s %14.6g  (cpu %.6g s at rank %d: %llu/%llu/%llu link ends same "
                "socket/node/off node; nic %.6g s)\n",
                "lower_bound_seconds", b.seconds, b.cpu_seconds, b.rank,
                static_cast<unsigned long long>(b.link_ends[0]),
                static_cast<unsigned long long>(b.link_ends[1]),
                static_cast<unsigned long long>(b.link_ends[2]), b.nic_seconds);
  out << line;
}
}  // namespace

table1_bounds table1(const run_config& c, const run_result& r) {
  table1_bounds b;
  b.z = static_cast<double>(r.network_items);
  b.n = r.max_hops;
  b.e = header_bytes;
  int tag_min = 8, tag_max = 0;
  for (const int t : r.tag_bytes) {
    tag_min = std::min(tag_min, t);
    tag_max = std::max(tag_max, t);
  }
  if (r.tag_bytes.empty()) tag_min = 0;
  b.m_min = static_cast<double>(c.item_bytes) + tag_min;
  b.m_max = static_cast<double>(c.item_bytes) + tag_max;
  // Items per full buffer: the fewest fit with the widest tag.
  b.g = std::max(
      1.0, static_cast<double>((static_cast<double>(c.buffer_bytes) - header_bytes) / b.m_max));
  b.g = static_cast<double>(static_cast<long long>(b.g));
  b.messages_lo = b.z / b.g;
  b.messages_hi = b.n * b.z / b.g;
  b.bytes_lo = b.z * (b.m_min + b.e / b.g);
  b.bytes_hi = b.n * b.z * (b.m_max + b.e / b.g);
  return b;
}

void print_table(std::ostream& out, const run_config& c, const run_result& r) {
  char line[256];
  auto put = [&](const char* fmt, auto... v) {
    std::snprintf(line, sizeof line, fmt, v...);
    out << line;
  };
  put("plan %s, %d ranks on %d nodes, %d stages, max %d hops\n", r.plan_name.c_str(), r.ranks,
      r.nodes, r.stages, r.max_hops);
  put("workload %s, %llu items of %zu bytes per rank, buffers %zu bytes x %d\n",
      workload_name(c.workload),
      static_cast<unsigned long long>(c.workload == workload_kind::traffic
                                          ? r.items / static_cast<std::uint64_t>(r.ranks)
                                          : c.items_per_rank),
      c.item_bytes, c.buffer_bytes, c.n_buffers);
  if (!r.simulated) {  // bound_only: no counts
    print_bound(out, r.bound);
    return;
  }
  put("%-22s %14.6g\n", "predicted_seconds", r.predicted_seconds);
  print_bound(out, r.bound);
  put("%-22s %14u\n", "critical path (msgs)", r.critical_path_messages);
  put("%-22s %14.6g\n", "items/s per rank",
      r.predicted_seconds > 0 ? static_cast<double>(r.items) / r.ranks / r.predicted_seconds : 0.0);
  put("%-22s %14llu\n", "items", static_cast<unsigned long long>(r.items));
  if (c.workload == workload_kind::request_reply)
    put("%-22s %14llu\n", "replies", static_cast<unsigned long long>(r.replies));
  put("%-22s %14llu\n", "messages", static_cast<unsigned long long>(r.messages));
  put("%-22s %14llu\n", "bytes_injected", static_cast<unsigned long long>(r.bytes_injected));
  put("%-22s %14.4f\n", "mean buffer fill", r.mean_fill);
  put("%-22s %14zu\n", "memory_bytes_per_rank", r.memory_bytes_per_rank);
  put("%-22s %14zu\n", "largest send queue", r.max_queued);
  put("%-22s %14.3f\n", "wall_seconds", r.wall_seconds);
  put("%-22s %14s\n", "buffer_memory", r.heap_buffers ? "heap" : "pages");
  out << "# class        messages          bytes\n";
  for (int k = 0; k < aggregation::n_link_classes; ++k)
    put("%-12s %10llu %14llu\n",
        aggregation::link_class_name(static_cast<aggregation::link_class>(k)),
        static_cast<unsigned long long>(r.per_class[k].messages),
        static_cast<unsigned long long>(r.per_class[k].bytes));
  out << "# stage   items    messages          bytes   fill\n";
  for (std::size_t s = 0; s < r.per_stage.size(); ++s) {
    const auto& t = r.per_stage[s];
    put("%-5zu %9llu %11llu %14llu %6.3f\n", s, static_cast<unsigned long long>(t.items),
        static_cast<unsigned long long>(t.messages), static_cast<unsigned long long>(t.bytes),
        t.messages ? static_cast<double>(t.bytes) /
                         (static_cast<double>(t.messages) * static_cast<double>(c.buffer_bytes))
                   : 0.0);
  }
  const auto b = table1(c, r);
  put("# Table I (Wesolowski et al. 2014, sec. IV.C): z=%.0f g=%.0f N=%.0f: messages %.0f..%.0f, "
      "bytes %.0f..%.0f\n",
      b.z, b.g, b.n, b.messages_lo, b.messages_hi, b.bytes_lo, b.bytes_hi);
}

std::string to_json_text(const run_config& c, const run_result& r, long peak_rss_kib) {
  using nlohmann::json;
  json j;
  j["plan"] = r.plan_name;
  j["ranks"] = r.ranks;
  j["nodes"] = r.nodes;
  j["stages"] = r.stages;
  j["max_hops"] = r.max_hops;
  j["workload"] = workload_name(c.workload);
  j["items_per_rank"] = c.workload == workload_kind::traffic
                            ? r.items / static_cast<std::uint64_t>(r.ranks)
                            : c.items_per_rank;
  j["item_bytes"] = c.item_bytes;
  j["buffer_bytes"] = c.buffer_bytes;
  j["n_buffers"] = c.n_buffers;
  j["simulated"] = r.simulated;
  j["lower_bound_seconds"] = r.bound.seconds;
  j["lower_bound"] = bound_json(r.bound);
  if (!r.simulated) return j.dump(2) + "\n";
  j["items"] = r.items;
  j["replies"] = r.replies;
  j["network_items"] = r.network_items;
  j["item_hops"] = r.item_hops;
  j["messages"] = r.messages;
  j["bytes_injected"] = r.bytes_injected;
  j["predicted_seconds"] = r.predicted_seconds;
  j["critical_path_messages"] = r.critical_path_messages;
  j["mean_rank_seconds"] = r.mean_rank_seconds;
  j["items_per_second_per_rank"] =
      r.predicted_seconds > 0 ? static_cast<double>(r.items) / r.ranks / r.predicted_seconds : 0.0;
  j["memory_bytes_per_rank"] = r.memory_bytes_per_rank;
  j["mean_fill"] = r.mean_fill;
  j["max_queued"] = r.max_queued;
  j["max_in_flight"] = r.max_in_flight;
  j["wall_seconds"] = r.wall_seconds;
  j["setup_seconds"] = r.setup_seconds;
  j["steps"] = r.steps;
  j["peak_rss_kib"] = peak_rss_kib;
  j["buffer_memory"] = r.heap_buffers ? "heap" : "pages";
  for (int k = 0; k < aggregation::n_link_classes; ++k)
    j["per_class"][aggregation::link_class_name(static_cast<aggregation::link_class>(k))] = {
        {"messages", r.per_class[k].messages}, {"bytes", r.per_class[k].bytes}};
  j["per_stage"] = json::array();
  for (std::size_t s = 0; s < r.per_stage.size(); ++s)
    j["per_stage"].push_back({{"items", r.per_stage[s].items},
                              {"messages", r.per_stage[s].messages},
                              {"bytes", r.per_stage[s].bytes},
                              {"tag_bytes", r.tag_bytes[s]}});
  const auto b = table1(c, r);
  j["table1"] = {{"z", b.z},
                 {"g", b.g},
                 {"N", b.n},
                 {"messages_lo", b.messages_lo},
                 {"messages_hi", b.messages_hi},
                 {"bytes_lo", b.bytes_lo},
                 {"bytes_hi", b.bytes_hi}};
  return j.dump(2) + "\n";
}

}  // namespace convoy::sim
