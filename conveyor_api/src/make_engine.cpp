// Placeholder until topology discovery and route plans land; see conveyor.hpp.
#include <convoy/conveyor_api/conveyor.hpp>
