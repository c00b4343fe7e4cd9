/**
 * @file
 * Buffer compression for conveyors (bale-compatible, Maley & DeVinney 2019, sec. 3.6
 * "Compression").
 *
 * Compression is attempted on a buffer that leaves the node when all of these hold:
 *  - the constructor was given `convey_opt_COMPRESS` and the conveyor has the feature
 *    `convey_THRIFTY` (see convey_features());
 *  - the most recent convey_set_codec() gave a non-NULL codec (without a call, the
 *    `convey_standard_codec` is used);
 *  - the codec's `plan`, called by convey_begin(), returned true.
 * The codec's `compress` may still decline a buffer (return 0); the buffer is then sent
 * as it was. In convoy, THRIFTY conveyors are the simple ones (the codec runs on each
 * all-to-all buffer whose destination is on another node) and the order-1 tensor ones (it
 * runs on each buffer the engine sends to another node). Elastic and multi-hop conveyors
 * accept COMPRESS but send uncompressed.
 */
#ifndef CONVEY_CODEC_H
#define CONVEY_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the conveyor tells a codec about the packets it moves. */
typedef struct convey_cargo {
  size_t tag_size;    /**< bytes of routing tag in front of each item (0 for simple) */
  size_t item_size;   /**< bytes per item */
  size_t packet_size; /**< tag + item + padding: the distance between packets */
  size_t max_items;   /**< most packets in one buffer */
  void* arg;          /**< the `arg` given to convey_set_codec() */
} convey_cargo_t;

/** How a codec wants buffers laid out; filled in by its `plan`. */
typedef struct convey_layout {
  /** Alignment of uncompressed and compressed buffers: a power of two, 8 to
   *  CONVEY_MAX_ALIGN. */
  size_t align;
  /** Distance between packets in uncompressed buffers (>= tag_size + item_size). */
  size_t stride;
  /** Extra packets past the valid ones that compress may read and modify and
   *  decompress may write. */
  size_t slack;
  /** Offset from a multiple of `align` at which compressed data starts. */
  size_t offset;
  /** Bytes past the end of the compressed data that compress may write and decompress
   *  may read. */
  size_t overrun;
} convey_layout_t;

/** A compression method. `link` and `unlink` may be NULL (link data is then NULL). */
typedef struct convey_codec {
  /** Name for diagnostics. */
  const char* name;
  /** Fills `*layout` for `cargo`; false if this cargo is not supported. */
  bool (*plan)(const convey_cargo_t* cargo, convey_layout_t* layout);
  /** Per-link state for compressing (decompress == false) or decompressing. */
  void* (*link)(const convey_cargo_t* cargo, bool decompress);
  /** Compresses `n_items` packets (`stride` apart) of `in` into `out` (at most `limit`
   *  bytes); returns the compressed size, or 0 to send the buffer uncompressed. May
   *  modify `in`. */
  size_t (*compress)(const convey_cargo_t* cargo, void* link, size_t n_items, void* in,
                     size_t limit, void* out);
  /** Restores `n_items` packets into `out` from `n_bytes` bytes of `in` (which it may
   *  modify). */
  void (*decompress)(const convey_cargo_t* cargo, void* link, size_t n_items, size_t n_bytes,
                     void* in, void* out);
  /** Releases what `link` returned. */
  void (*unlink)(const convey_cargo_t* cargo, void* link);
} convey_codec_t;

/** The built-in codec: squeezes out the bytes that are the same in every item of a
 *  buffer, sending them once (Maley & DeVinney 2019, sec. 3.6). Declines a buffer whose compressed
 *  form would not be smaller. */
extern const convey_codec_t convey_standard_codec;

#ifdef __cplusplus
}
#endif

#endif /* CONVEY_CODEC_H */
