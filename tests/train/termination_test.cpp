#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "cputrain/train/termination.hpp"

// This file's names, apart from those of the other files compiled with it (tests/CMakeLists.txt).
namespace termination_test {

using cputrain::train::termination_signal;

namespace {

// The handlers the test runner had, put back when a test ends, and the signal state forgotten.
class installed_handler {
 public:
  installed_handler() {
    sigaction(SIGTERM, nullptr, &term_);
    sigaction(SIGINT, nullptr, &int_);
    termination_signal::reset();
    termination_signal::install("termination_test");
  }
  ~installed_handler() {
    sigaction(SIGTERM, &term_, nullptr);
    sigaction(SIGINT, &int_, nullptr);
    termination_signal::reset();
  }
  installed_handler(const installed_handler&) = delete;
  installed_handler& operator=(const installed_handler&) = delete;

 private:
  struct sigaction term_ {};
  struct sigaction int_ {};
};

// What the handler writes to stderr while `raise_signals` runs (stderr is a pipe meanwhile).
template <class F>
std::string stderr_of(F raise_signals) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  REQUIRE(fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0);
  const int saved = dup(STDERR_FILENO);
  dup2(fds[1], STDERR_FILENO);
  raise_signals();
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(got));
  close(fds[0]);
  return text;
}

// How a child that installs the handler, raises `signals` in order and then exits 0 ends.
int child_status(std::initializer_list<int> signals) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The child must not reach the test runner's teardown: it ends with _exit or by a signal.
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    termination_signal::reset();
    termination_signal::install("child");
    for (const int s : signals) raise(s);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return status;
}

}  // namespace

TEST_CASE("the first signal is a request the trainer sees, and prints nothing") {
  installed_handler handler;
  CHECK(termination_signal::received() == 0);
  const std::string said = stderr_of([] { raise(SIGTERM); });
  CHECK(termination_signal::received() == SIGTERM);
  CHECK(termination_signal::count(SIGTERM) == 1);
  CHECK(said.empty());
  termination_signal::reset();
  CHECK(termination_signal::received() == 0);
  CHECK(termination_signal::count(SIGTERM) == 0);
  raise(SIGINT);
  CHECK(termination_signal::received() == SIGINT);
}

TEST_CASE("further SIGTERMs are counted and reported, never fatal") {
  installed_handler handler;
  const std::string said = stderr_of([] {
    for (int i = 0; i < 5; ++i) kill(getpid(), SIGTERM);
  });
  CHECK(termination_signal::received() == SIGTERM);
  CHECK(termination_signal::count(SIGTERM) == 5);
  CHECK(said.find("termination_test: SIGTERM again (2): still stopping") != std::string::npos);
  CHECK(said.find("termination_test: SIGTERM again (5): still stopping") != std::string::npos);
  CHECK(said.find("more SIGTERMs do not cut it short") != std::string::npos);
  CHECK(said.find("SIGTERM again (1)") == std::string::npos);
}

TEST_CASE("a second SIGINT is reported with how to stop at once") {
  installed_handler handler;
  const std::string said = stderr_of([] {
    raise(SIGINT);
    raise(SIGINT);
  });
  CHECK(termination_signal::received() == SIGINT);
  CHECK(termination_signal::count(SIGINT) == 2);
  CHECK(said ==
        "termination_test: SIGINT again (2): still stopping: the checkpoint of this step is written first if it fits "
        "in the grace period, then the process ends; press Ctrl-C once more to stop at once without a checkpoint\n");
}

TEST_CASE("a SIGINT after a SIGTERM counts as the first Ctrl-C") {
  installed_handler handler;
  const std::string said = stderr_of([] {
    raise(SIGTERM);
    raise(SIGINT);
  });
  CHECK(termination_signal::received() == SIGTERM);  // the first one names the stop
  CHECK(said.find("termination_test: SIGINT (1): still stopping") != std::string::npos);
  CHECK(said.find("press Ctrl-C twice more") != std::string::npos);
}

TEST_CASE("a third SIGINT ends the process at once, by SIGINT") {
  const int status = child_status({SIGINT, SIGINT, SIGINT});
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
}

TEST_CASE("only SIGINTs count towards the third: SIGTERMs mixed in do not end the process") {
  int status = child_status({SIGTERM, SIGINT, SIGTERM, SIGINT, SIGTERM});
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  status = child_status({SIGTERM, SIGTERM, SIGTERM, SIGTERM, SIGTERM, SIGTERM, SIGTERM, SIGTERM});
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  status = child_status({SIGTERM, SIGINT, SIGTERM, SIGINT, SIGINT});
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
}

}  // namespace termination_test
