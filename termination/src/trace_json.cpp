// The trace recorder's file (trace.hpp, TERM-17): the Chrome trace-event format ("JSON
// object format": traceEvents, displayTimeUnit, otherData), which Perfetto and
// chrome://tracing open. pid = rank, tid = row: 0 the rank's own (advance, flush, stages
// closed), 1 + k out-link k, 1 + n_out + i in-link i; "ts"/"dur" in microseconds of rank 0's
// clock since the conveyor was made.
#include <cerrno>
#include <convoy/termination/trace.hpp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace convoy::termination {

namespace {

void meta(std::ostream& out, const char* what, int pid, int tid, const std::string& key,
          const std::string& value) {
  out << "{\"name\":\"" << what << "\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
      << ",\"args\":{\"" << key << "\":" << value << "}},\n";
}

std::string quoted(const std::string& s) { return '"' + s + '"'; }

const char* name_of(const trace_event& e) {
  switch (e.kind) {
    case trace_kind::advance:
      return "advance";
    case trace_kind::send:
      return "send";
    case trace_kind::receive:
      return "receive";
    case trace_kind::flush:
      return "flush";
    case trace_kind::stall:
      return "credit stall";
    case trace_kind::stage_closed:
      return "stage closed";
  }
  return "?";
}

void links(std::ostream& out, const char* name, const std::vector<trace_link>& ls) {
  out << ",\"" << name << "\":[";
  for (std::size_t k = 0; k < ls.size(); ++k)
    out << (k ? "," : "") << '[' << ls[k].stage << ',' << ls[k].peer << ']';
  out << ']';
}

}  // namespace

std::string trace_recorder::file_name() const {
  return options_.dir + "/convoy-trace." + std::to_string(options_.conveyor) + '.' +
         std::to_string(rank_) + ".json";
}

namespace {
// An event's "args": what its kind carries.
void write_args(std::ostream& out, const trace_event& e) {
  switch (e.kind) {
    case trace_kind::advance:
      out << "\"calls\":" << e.items;
      break;
    case trace_kind::send:
    case trace_kind::receive:
      if (e.flags & trace_items) out << "\"items\":" << e.items << ',';
      out << "\"bytes\":" << e.bytes << ",\"stage\":" << int{e.stage};
      // Whether a buffer went full is the sender's to say (its lane had no room for the
      // next record); the receiver cannot tell, so its events do not claim either.
      if (e.kind == trace_kind::send)
        out << ",\"full\":" << ((e.flags & trace_full) ? "true" : "false");
      out << ",\"last\":" << ((e.flags & trace_last) ? "true" : "false");
      break;
    case trace_kind::stall:
      out << "\"stage\":" << int{e.stage}
          << ",\"open\":" << ((e.flags & trace_open) ? "true" : "false");
      break;
    case trace_kind::stage_closed:
      out << "\"stage\":" << int{e.stage};
      break;
    case trace_kind::flush:
      break;
  }
}
}  // namespace

void trace_recorder::write_json(std::ostream& out) const {
  const int pid = rank_;
  const auto n_out = static_cast<int>(outs_.size());
  out << "{\"traceEvents\":[\n";
  meta(out, "process_name", pid, 0, "name", quoted("rank " + std::to_string(rank_)));
  meta(out, "process_sort_index", pid, 0, "sort_index", std::to_string(rank_));
  meta(out, "thread_name", pid, 0, "name", quoted("advance"));
  for (int k = 0; k < n_out; ++k) {
    const trace_link& l = outs_[static_cast<std::size_t>(k)];
    meta(out, "thread_name", pid, 1 + k, "name",
         quoted("stage " + std::to_string(l.stage) + " \u2192 rank " + std::to_string(l.peer)));
  }
  for (std::size_t i = 0; i < ins_.size(); ++i)
    meta(out, "thread_name", pid, 1 + n_out + static_cast<int>(i), "name",
         quoted("stage " + std::to_string(ins_[i].stage) + " \u2190 rank " +
                std::to_string(ins_[i].peer)));
  const std::int64_t zero = options_.clock_offset_ns + options_.epoch_ns;
  auto us = [](std::int64_t ns) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", static_cast<double>(ns) / 1000.0);
    return std::string(b);
  };
  // The ring's events, then the stalls still open, up to now.
  std::vector<trace_event> events;
  events.reserve(ring_.size() + stall_since_.size());
  for (std::size_t j = 0; j < ring_.size(); ++j) events.push_back(ring_.at(j));
  const std::int64_t t_end = now();
  for (std::size_t k = 0; k < stall_since_.size(); ++k) {
    if (stall_since_[k] == 0) continue;
    trace_event& e = events.emplace_back();
    e.t_ns = stall_since_[k];
    e.dur_ns = t_end - stall_since_[k];
    e.link = static_cast<std::int32_t>(k);
    e.kind = trace_kind::stall;
    e.stage = static_cast<std::uint8_t>(outs_[k].stage);
    e.flags = trace_open;
  }
  const std::size_t n = events.size();
  for (std::size_t j = 0; j < n; ++j) {
    const trace_event& e = events[j];
    const bool span = e.kind == trace_kind::advance || e.kind == trace_kind::stall;
    out << "{\"name\":\"" << name_of(e) << "\",\"ph\":\"" << (span ? "X" : "i")
        << "\",\"pid\":" << pid << ",\"tid\":" << e.link + 1 << ",\"ts\":" << us(e.t_ns - zero);
    if (span)
      out << ",\"dur\":" << us(e.dur_ns);
    else
      out << ",\"s\":\"t\"";
    out << ",\"args\":{";
    write_args(out, e);
    out << "}}" << (j + 1 < n ? ",\n" : "\n");
  }
  if (n == 0) out << "{\"name\":\"no events\",\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":0}\n";
  out << "],\"displayTimeUnit\":\"ns\",\"otherData\":{\"rank\":" << rank_
      << ",\"n_ranks\":" << n_ranks_ << ",\"conveyor\":" << options_.conveyor
      << ",\"n_stages\":" << n_stages_ << ",\"events_capacity\":" << ring_.capacity()
      << ",\"events_recorded\":" << ring_.total() << ",\"events_dropped\":" << ring_.dropped()
      << ",\"clock_offset_ns\":" << options_.clock_offset_ns
      << ",\"clock_error_ns\":" << options_.clock_error_ns;
  links(out, "out_links", outs_);
  links(out, "in_links", ins_);
  out << "}}\n";
}

bool trace_recorder::write_file() noexcept {
  written_ = true;
  return write_to_disk();
}

bool trace_recorder::checkpoint() noexcept { return write_to_disk(); }

bool trace_recorder::write_to_disk() noexcept {
  const std::string path = file_name();
  try {
    std::ofstream f(path);
    if (f) write_json(f);
    f.close();
    if (f) return true;
  } catch (...) {  // NOLINT(bugprone-empty-catch): reported below
  }
  std::fprintf(stderr, "convoy: CONVOY_TRACE: cannot write %s: %s\n", path.c_str(),
               std::strerror(errno));
  return false;
}

}  // namespace convoy::termination
