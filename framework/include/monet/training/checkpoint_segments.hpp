#pragma once
// The `optimal` policy over Rotor's segments (Beaumont et al. 2019; docs/training.md#rotors-segments): every block
// of the chain is kept, or belongs to a run of consecutive blocks checkpointed as one region (a segment keeps only
// its first block's input; its inner blocks' inputs are recomputed with it, right before the first backward
// operator that reads one of its results). Per-block choices are the segmentations whose runs are one block long.
//
// Exact for monet's memory, as the per-block DP: the live interval of a storage of block k in the backward pass
// depends only on the state of k (kept, or the segment it is in) and of k + 1. Backward positions are the backward
// operators (the same in every rewrite) and, for each candidate segment, its recompute operators right before the
// backward operator they precede (present only when that segment is chosen). Rewrites that together contain every
// consistent pair of neighbouring states give, per block and pair, the bytes it keeps live at each position; a
// dynamic programme over the chain with the per-block DP's domination finds the (peak, cost) front.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "monet/training/checkpoint_optimal.hpp"

namespace monet {

/// Blocks first..last (indices into the chain), checkpointed as one region.
struct CheckpointSegment {
  std::size_t first = 0, last = 0;
};

/// A state per block: -1 kept, else the index of the segment (CheckpointSegments::segments) it belongs to.
using SegmentState = std::vector<int>;

struct CheckpointSegments {
  std::vector<std::string> names;                      // per block
  std::vector<std::vector<CheckpointRegion>> blocks;   // per block: its region in every micro-batch
  std::vector<CheckpointSegment> segments;             // every run of consecutive blocks
  std::vector<double> cost;                            // per segment: recompute cost when chosen
  std::vector<std::int64_t> macs;                      // per segment: recomputed MACs when chosen
  std::vector<int> present_if;                         // per position: -1 always, s: only when segment s is chosen
  std::vector<std::int64_t> constant;                  // per position: bytes live whatever the choice
  /// (block k, state of k, state of k + 1 or -1 for the last block) -> bytes of k's storages live per position.
  std::map<std::tuple<int, int, int>, std::vector<std::int64_t>> table;
  std::size_t rewrites = 0;                            // rewrites of the step measured to fill the table

  [[nodiscard]] std::size_t size() const { return names.size(); }
  /// Whether `state` is a segmentation: each segment's blocks all carry it, and nothing else does.
  [[nodiscard]] MONET_API bool valid(const SegmentState& state) const;
  /// peak_activation_bytes of the graph with the segmentation (as the rewrite measures it).
  [[nodiscard]] MONET_API std::int64_t peak(const SegmentState& state) const;
  [[nodiscard]] MONET_API double total_cost(const SegmentState& state) const;
  /// The regions of a segmentation (one per segment and micro-batch), for apply_checkpointing.
  [[nodiscard]] MONET_API std::vector<CheckpointRegion> regions_of(const SegmentState& state) const;
  /// The segmentation with the blocks `checkpointed` each a segment of its own (the per-block choice).
  [[nodiscard]] MONET_API SegmentState per_block(const std::vector<bool>& checkpointed) const;
};

/// The model of the chain of ModuleTree::blocks() (or of `blocks`, per block its region in every micro-batch).
MONET_API CheckpointSegments checkpoint_segments(const GraphPtr& graph, const RecomputeCost& cost = {},
                                                 const GraphFinish& finish = {}, RecomputeSemantics semantics = RecomputeSemantics::pytorch);
MONET_API CheckpointSegments checkpoint_segments(const GraphPtr& graph, std::vector<std::vector<CheckpointRegion>> blocks,
                                                 std::vector<std::string> names, const RecomputeCost& cost = {},
                                                 const GraphFinish& finish = {});

struct SegmentChoice {
  SegmentState state;
  std::int64_t peak = 0;
  double cost = 0;
};

/// Every segmentation not dominated in (peak, cost), by increasing peak.
MONET_API std::vector<SegmentChoice> segments_front(const CheckpointSegments& model);
/// The cheapest segmentation whose peak is at most `budget`; nullopt when none fits.
MONET_API std::optional<SegmentChoice> optimal_segmentation(const CheckpointSegments& model, std::int64_t budget);

/// The `optimal` policy's regions over segments (solver = "segments"): as optimal_regions.
MONET_API std::vector<CheckpointRegion> segment_regions(const GraphPtr& graph, const CheckpointPolicy& policy,
                                                        const RecomputeCost& cost = {}, const GraphFinish& finish = {},
                                                        CheckpointSolve* solve = nullptr);

}  // namespace monet
