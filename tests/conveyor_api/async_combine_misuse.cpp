// Must not compile (ctest async_combine_misuse.*): a combinable update whose op is not
// callable as op(T&, T) (CASE 1) or holds state (CASE 2); the static_assert names the rule.
// CASE 0 is the control: the same program with a correct op compiles.
#include <convoy/async/dist_array.hpp>
#include <cstdint>

int main() {
  convoy::async::runtime rt(MPI_COMM_WORLD);
  convoy::async::dist_array<std::uint64_t> a(rt, 8);
#if CONVOY_MISUSE_CASE == 1
  (void)a.define_update([](std::uint64_t& x, const char* v) { x += *v; },
                        convoy::async::combinable);
#elif CONVOY_MISUSE_CASE == 2
  std::uint64_t scale = 3;
  (void)a.define_update([scale](std::uint64_t& x, std::uint64_t v) { x += scale * v; },
                        convoy::async::combinable);
#else
  (void)a.define_update([](std::uint64_t& x, std::uint64_t v) { x += v; },
                        convoy::async::combinable);
#endif
  return 0;
}
