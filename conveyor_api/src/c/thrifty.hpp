#pragma once
/// @file
/// THRIFTY engine conveyors: an engine whose MPI transport compresses buffers on links
/// that leave the node (thrifty.cpp). Internal to the C façade.
#include <convey_codec.h>

#include <convoy/conveyor_api/options.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
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

/// A transport factory (conveyor_options::make_transport) whose transports compress: an
/// MPI transport (its link buffers from `memory`, may be null; T11) wrapped by the
/// compressing one. Every transport it builds is handed to `built` (its control lives as
/// long as the engine that owns the transport).
transport_factory thrifty_transport_factory(std::shared_ptr<aggregation::buffer_source> memory,
                                            std::function<void(thrifty_control&)> built);

}  // namespace convoy::facade
