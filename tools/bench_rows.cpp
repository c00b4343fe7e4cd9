#include "bench_rows.hpp"

#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace convoy::bench {

namespace {

using nlohmann::json;

json row_json(const result_row& r) {
  json j = {{"kernel", r.kernel},
            {"impl", r.impl},
            {"kind", r.kind},
            {"item_bytes", r.item_bytes},
            {"ranks", r.ranks},
            {"nodes", r.nodes},
            {"items_per_rank", r.items_per_rank},
            {"reps", r.reps},
            {"seconds", r.seconds},
            {"seconds_min", r.seconds_min},
            {"seconds_max", r.seconds_max},
            {"items_per_s_per_rank", r.items_per_s_per_rank},
            {"node_bw_bytes_per_s", r.node_bw_bytes_per_s},
            {"header_bytes_per_item", nullptr},
            {"buffers_per_rank", r.buffers_per_rank},
            {"buffer_bytes", r.buffer_bytes},
            {"memory_bytes_per_rank", r.memory_bytes_per_rank},
            {"n_local", r.n_local},
            {"skew", r.skew},
            {"offnode_bytes", nullptr},
            {"wire_bound_items_per_s_per_rank", nullptr},
            {"verified", r.verified},
            {"error", r.error}};
  // JSON has no NaN: a library that does not count its bytes gets null.
  if (!std::isnan(r.header_bytes_per_item)) j["header_bytes_per_item"] = r.header_bytes_per_item;
  // As the RESULT line, which leaves it out: a kind that does not count them gets null.
  if (r.offnode_bytes >= 0) j["offnode_bytes"] = r.offnode_bytes;
  if (r.wire_bound_items_per_s_per_rank > 0)
    j["wire_bound_items_per_s_per_rank"] = r.wire_bound_items_per_s_per_rank;
  return j;
}

template <class T>
void take(const json& j, const char* key, T& out) {
  if (auto it = j.find(key); it != j.end() && !it->is_null()) out = it->get<T>();
}

result_row row_from(const json& j) {
  result_row r;
  if (!j.is_object() || !j.contains("kernel") || !j.contains("kind"))
    throw std::runtime_error("a result row needs \"kernel\" and \"kind\"");
  take(j, "kernel", r.kernel);
  take(j, "impl", r.impl);
  take(j, "kind", r.kind);
  take(j, "item_bytes", r.item_bytes);
  take(j, "ranks", r.ranks);
  take(j, "nodes", r.nodes);
  take(j, "items_per_rank", r.items_per_rank);
  take(j, "reps", r.reps);
  take(j, "seconds", r.seconds);
  take(j, "seconds_min", r.seconds_min);
  take(j, "seconds_max", r.seconds_max);
  take(j, "items_per_s_per_rank", r.items_per_s_per_rank);
  take(j, "node_bw_bytes_per_s", r.node_bw_bytes_per_s);
  r.header_bytes_per_item = std::numeric_limits<double>::quiet_NaN();
  take(j, "header_bytes_per_item", r.header_bytes_per_item);
  take(j, "buffers_per_rank", r.buffers_per_rank);
  take(j, "buffer_bytes", r.buffer_bytes);
  take(j, "memory_bytes_per_rank", r.memory_bytes_per_rank);
  take(j, "n_local", r.n_local);
  take(j, "skew", r.skew);
  take(j, "offnode_bytes", r.offnode_bytes);
  take(j, "wire_bound_items_per_s_per_rank", r.wire_bound_items_per_s_per_rank);
  take(j, "verified", r.verified);
  take(j, "error", r.error);
  return r;
}

json context_json(const run_context& c) {
  return {{"date", c.date},
          {"host", c.host},
          {"git", c.git},
          {"impl", c.impl},
          {"mpi", c.mpi},
          {"command", c.command},
          {"ranks", c.ranks},
          {"nodes", c.nodes},
          {"ranks_per_node", c.ranks_per_node},
          {"emulate_nodes", c.emulate_nodes},
          {"transport", c.transport},
          {"btl", c.btl},
          {"cluster", c.cluster}};
}

run_context context_from(const json& j) {
  run_context c;
  if (!j.is_object()) return c;
  take(j, "date", c.date);
  take(j, "host", c.host);
  take(j, "git", c.git);
  take(j, "impl", c.impl);
  take(j, "mpi", c.mpi);
  take(j, "command", c.command);
  take(j, "ranks", c.ranks);
  take(j, "nodes", c.nodes);
  take(j, "ranks_per_node", c.ranks_per_node);
  take(j, "emulate_nodes", c.emulate_nodes);
  take(j, "transport", c.transport);
  take(j, "btl", c.btl);
  take(j, "cluster", c.cluster);
  return c;
}

}  // namespace

std::string to_json_text(const run_results& r) {
  json rows = json::array();
  for (const auto& row : r.rows) rows.push_back(row_json(row));
  const json doc = {{"context", context_json(r.context)}, {"results", std::move(rows)}};
  // Invalid UTF-8 (a host name is bytes) is replaced instead of throwing.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

run_results from_json_text(std::string_view text, const std::string& origin) {
  try {
    const json doc = json::parse(text);
    run_results r;
    if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array())
      throw std::runtime_error("not a benchmark result document (no \"results\" array)");
    if (doc.contains("context")) r.context = context_from(doc["context"]);
    for (const auto& row : doc["results"]) {
      r.rows.push_back(row_from(row));
      // Rows of older files carry no impl: the run's.
      if (r.rows.back().impl.empty()) r.rows.back().impl = r.context.impl;
    }
    return r;
  } catch (const json::exception& e) {
    throw std::runtime_error(origin + ": " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(origin + ": " + e.what());
  }
}

run_results read_results_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return from_json_text(text.str(), path);
}

void write_results_file(const std::string& path, const run_results& r) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot write");
  out << to_json_text(r);
  if (!out.flush()) throw std::runtime_error(path + ": write failed");
}

std::string configuration_label(const run_context& c) {
  std::string s = "np" + std::to_string(c.ranks);
  if (!c.cluster.empty()) {  // separately launched nodes: the shape and the links say it all
    s += ' ';
    s += c.cluster;
    if (!c.transport.empty() && c.transport != "auto") {
      s += " transport=";
      s += c.transport;
    }
    return s;
  }
  if (!c.emulate_nodes.empty()) {
    bool uniform = true;
    std::string sizes;
    std::istringstream in(c.emulate_nodes);
    std::string first, part;
    int n = 0;
    while (std::getline(in, part, ',')) {
      if (n++ == 0) first = part;
      uniform = uniform && part == first;
      if (!sizes.empty()) sizes += '+';
      sizes += part;
    }
    s += ' ';
    s += uniform ? std::to_string(n) + "x" + first : sizes;
  }
  if (c.btl.find("tcp") != std::string::npos) s += " tcp";
  if (c.transport == "mpi")
    s += " (b)";
  else if (!c.emulate_nodes.empty() && (c.transport.empty() || c.transport == "auto"))
    s += " (a)";
  else if (!c.transport.empty() && c.transport != "auto")
    s += " transport=" + c.transport;
  return s;
}

std::string mpi_label(std::string_view version) {
  version = version.substr(0, version.find(','));
  std::istringstream words{std::string(version)};
  std::string label, w;
  while (words >> w) {
    if (w == "Version:") continue;
    if (w.size() > 1 && w[0] == 'v' && std::isdigit(static_cast<unsigned char>(w[1])))
      w.erase(0, 1);
    label += (label.empty() ? "" : " ") + w;
  }
  return label.empty() ? "unknown MPI" : label;
}

}  // namespace convoy::bench
