#pragma once
// The [training] settings the kernel hands to backward generators and optimizer models.
#include <cstdint>
#include <optional>
#include <string>

#include "monet/training/checkpoint.hpp"
#include "monet/training/precision.hpp"

namespace monet {

/// Kernel-owned [training] settings shared by backward generators and optimizer models.
struct TrainingSettings {
  std::string loss = "cross_entropy";
  std::int64_t micro_batches = 1;  // gradient accumulation: forward + backward this many times per update
  std::optional<Precision> precision;  // [precision] when given (master weights, loss scaling)
  /// [training.checkpoint]: applied by the kernel to the graph the backward generator and optimizer model built.
  CheckpointPolicy checkpoint;
};

}  // namespace monet
