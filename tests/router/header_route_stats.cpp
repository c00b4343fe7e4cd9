// Each public header compiles on its own.
#include <convoy/router/route_stats.hpp>
