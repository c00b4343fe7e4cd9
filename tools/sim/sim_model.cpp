#include "sim_model.hpp"

#include <convoy/base/error.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace convoy::sim {

namespace {

using aggregation::link_class;
using aggregation::link_class_name;
using aggregation::n_link_classes;
using nlohmann::json;

double number(const json& j, const std::string& key) {
  if (!j.is_number()) throw convoy::error("model: '" + key + "' is not a number");
  const double v = j.get<double>();
  if (!(v >= 0)) throw convoy::error("model: '" + key + "' is negative");
  return v;
}

void read_link(const json& j, const std::string& name, aggregation::link_cost& c) {
  if (!j.is_object()) throw convoy::error("model: '" + name + "' is not an object");
  for (const auto& [key, value] : j.items()) {
    std::string full = name;
    full += '.';
    full += key;
    if (key == "alpha_s")
      c.alpha_s = number(value, full);
    else if (key == "latency_s")
      c.latency_s = number(value, full);
    else if (key == "beta_s_per_byte")
      c.beta_s_per_byte = number(value, full);
    else
      throw convoy::error("model: unknown key '" + full + "'");
  }
}

}  // namespace

cost_model cost_model::defaults() {
  cost_model m;
  // README "Defaults": orders of magnitude, not measurements of this machine.
  m.links[static_cast<int>(link_class::same_socket)] = {0.2e-6, 0.2e-6, 1.0 / 20e9};
  m.links[static_cast<int>(link_class::same_node)] = {0.2e-6, 0.4e-6, 1.0 / 10e9};
  m.links[static_cast<int>(link_class::off_node)] = {0.5e-6, 1.5e-6, 1.0 / 12e9};
  m.push_s = 5e-9;
  m.forward_s = 5e-9;
  m.pull_s = 3e-9;
  m.source = "convoy-sim defaults (tools/sim/README.md), not calibrated";
  return m;
}

std::string to_json_text(const cost_model& m) {
  json j;
  for (int c = 0; c < n_link_classes; ++c) {
    const auto& l = m.links[c];
    j["links"][link_class_name(static_cast<link_class>(c))] = {
        {"alpha_s", l.alpha_s}, {"latency_s", l.latency_s}, {"beta_s_per_byte", l.beta_s_per_byte}};
  }
  j["push_s"] = m.push_s;
  j["forward_s"] = m.forward_s;
  j["pull_s"] = m.pull_s;
  j["app_s"] = m.app_s;
  j["source"] = m.source;
  return j.dump(2) + "\n";
}

cost_model model_from_json_text(const std::string& text, const cost_model& base) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw convoy::error(std::string("model: not JSON: ") + e.what());
  }
  if (!j.is_object()) throw convoy::error("model: the document is not a JSON object");
  cost_model m = base;
  for (const auto& [key, value] : j.items()) {
    if (key == "push_s") {
      m.push_s = number(value, key);
    } else if (key == "forward_s") {
      m.forward_s = number(value, key);
    } else if (key == "pull_s") {
      m.pull_s = number(value, key);
    } else if (key == "app_s") {
      m.app_s = number(value, key);
    } else if (key == "source") {
      if (!value.is_string()) throw convoy::error("model: 'source' is not a string");
      m.source = value.get<std::string>();
    } else if (key == "links") {
      if (!value.is_object()) throw convoy::error("model: 'links' is not an object");
      for (const auto& [name, link] : value.items()) {
        int c = 0;
        while (c < n_link_classes && name != link_class_name(static_cast<link_class>(c))) ++c;
        if (c == n_link_classes)
          throw convoy::error("model: unknown link class 'links." + name +
                              "' (same_socket, same_node, off_node)");
        read_link(link, "links." + name, m.links[c]);
      }
    } else {
      throw convoy::error("model: unknown key '" + key + "'");
    }
  }
  return m;
}

cost_model load_model(const std::string& path, const cost_model& base) {
  std::ifstream in(path);
  if (!in) throw convoy::error("model file '" + path + "' cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return model_from_json_text(text.str(), base);
  } catch (const convoy::error& e) {
    throw convoy::error("model file '" + path + "': " + e.what());
  }
}

void save_model(const std::string& path, const cost_model& m) {
  std::ofstream out(path);
  if (!out) throw convoy::error("model file '" + path + "' cannot be written");
  out << to_json_text(m);
  if (!out) throw convoy::error("model file '" + path + "': write failed");
}

}  // namespace convoy::sim
