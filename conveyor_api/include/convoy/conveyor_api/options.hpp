#pragma once
/// @file
/// The conveyor core's names as the C++ API shows them. A conveyor's options and kinds, the
/// engine builders and the untyped conveyor belong to the one conveyor core below every API
/// (termination/: conveyor_options.hpp, untyped_conveyor.hpp); a C++ program names them in
/// convoy's top namespace, as it names convoy::conveyor<T>.
#include <convoy/termination/conveyor_options.hpp>
#include <convoy/termination/untyped_conveyor.hpp>

namespace convoy {

using termination::bulk_engine;
using termination::bulk_engine_options;
using termination::conveyor_kind;
using termination::conveyor_options;
using termination::elastic_engine;
using termination::elastic_stats;
using termination::make_bulk_engine;
using termination::make_mpi_engine;
using termination::make_plan;
using termination::resolve_engine_options;
using termination::to_string;
using termination::transport_factory;
using termination::untyped_conveyor;

}  // namespace convoy
