// Each public header compiles on its own.
#include <convoy/router/route_plan.hpp>
