#include "bench_runner.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace convoy::tools {

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;  // the open quote, if any
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quote == '\'') {
      if (ch == '\'')
        quote = 0;
      else
        word += ch;
    } else if (ch == '\\') {  // outside single quotes: the next character as it is
      if (++i == text.size()) throw std::invalid_argument("ends with a backslash");
      word += text[i];
      in_word = true;
    } else if (quote == '"') {
      if (ch == '"')
        quote = 0;
      else
        word += ch;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
      in_word = true;
    } else if (ch == ' ' || ch == '\t' || ch == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += ch;
      in_word = true;
    }
  }
  if (quote) throw std::invalid_argument(std::string("unterminated ") + quote + " quote");
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string c = (dir.empty() ? "." : dir) + "/" + name;
    if (access(c.c_str(), X_OK) == 0) return c;
  }
  return "";
}

std::vector<bench::result_row> run_bench(std::vector<std::string> command,
                                         const std::string& log_path) {
  char json_path[] = "/tmp/convoy-tune-XXXXXX";
  const int fd = mkstemp(json_path);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file in /tmp");
  close(fd);
  command.emplace_back("--json");
  command.emplace_back(json_path);
  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (auto& w : command) argv.push_back(w.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  std::vector<bench::result_row> rows;
  if (rc == 0) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    try {
      rows = bench::read_results_file(json_path).rows;
    } catch (const std::exception&) {
      // No JSON: the program failed before writing it; its message is in the log.
    }
  }
  std::remove(json_path);
  if (rc != 0) throw std::runtime_error("cannot start '" + command.front() + "'");
  return rows;
}

std::string own_directory() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  std::string p(path, static_cast<std::size_t>(n));
  return p.substr(0, p.rfind('/'));
}

}  // namespace convoy::tools
