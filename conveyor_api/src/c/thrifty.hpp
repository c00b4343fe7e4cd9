#pragma once
/// @file
/// THRIFTY engine conveyors: an engine whose MPI transport compresses buffers on links
/// that leave the node (thrifty.cpp). Internal to the C façade.
#include <convey_codec.h>

#include <convoy/conveyor_api/conveyor.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace convoy::facade {

/// What the conveyor tells the compressing transport.
class thrifty_control {
 public:
  virtual ~thrifty_control() = default;
  /// The codec for the next cycles (NULL: none); default convey_standard_codec.
  virtual void set_codec(const convey_codec_t* codec, void* arg) = 0;
  /// Plans the codec for every stage with this cycle's item size (rigid records).
  virtual void begin_cycle(std::size_t item_bytes) = 0;
  /// Releases the codec's link data.
  virtual void end_cycle() noexcept = 0;
  /// Bytes not sent thanks to compression, over the lifetime.
  [[nodiscard]] virtual std::uint64_t saved_bytes() const noexcept = 0;
};

/// make_mpi_engine(MPI_COMM_WORLD, plan, o) with the compressing transport (collective);
/// `control` points into the engine's transport and lives as long as the engine.
/// `memory` (may be null) supplies the link buffers of the inner MPI transport (T11).
std::unique_ptr<termination::engine> make_thrifty_engine(
    std::shared_ptr<const router::route_plan> plan, const conveyor_options& o,
    thrifty_control*& control, std::shared_ptr<aggregation::buffer_source> memory = {});

}  // namespace convoy::facade
