// Each public header compiles on its own.
#include <convoy/router/memory.hpp>
