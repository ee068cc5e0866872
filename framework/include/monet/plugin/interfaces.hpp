#pragma once
// The nine kinds of plugin, all at once: the umbrella for the kernel (and for plugins written before the
// per-kind headers). A plugin includes only its own kind's header (docs/plugins.md#the-sdk-surface):
//   frontend.hpp            WorkloadFrontend                       (`frontend`)
//   backward_generator.hpp  BackwardGenerator, TrainingSettings    (`backward`)
//   optimizer_model.hpp     OptimizerModel, TrainingSettings       (`optimizer`)
//   cost_model.hpp          CostModel                              (`cost_model`)
//   fusion_strategy.hpp     FusionStrategy                         (`fusion`)
//   search_algorithm.hpp    SearchAlgorithm, SearchContext         (`search`)
//   estimator.hpp           Estimator                              (`estimator`)
//   parallelism_model.hpp   ParallelismModel                       (`parallelism`)
//   quality_model.hpp       QualityModel, QualityQuery             (`quality`)
// The kernel only knows these interfaces; every implementation lives in a plugin library under
// plugins/<kind>/<name>/. All methods are const and must be safe to call concurrently: evaluation is a pure
// function of its inputs, and searches evaluate many points in parallel.
#include "monet/plugin/backward_generator.hpp"
#include "monet/plugin/cost_model.hpp"
#include "monet/plugin/estimator.hpp"
#include "monet/plugin/frontend.hpp"
#include "monet/plugin/fusion_strategy.hpp"
#include "monet/plugin/optimizer_model.hpp"
#include "monet/plugin/parallelism_model.hpp"
#include "monet/plugin/quality_model.hpp"
#include "monet/plugin/search_algorithm.hpp"
// Not part of any plugin contract: kernel code has long received the scheduler's and the CN graph's types
// through this header (evaluator.hpp, ...), so the umbrella keeps them.
#include "monet/schedule/cn_graph.hpp"
#include "monet/schedule/schedule.hpp"
