#pragma once
// The [space] of an experiment as written (docs/search.md): named genes with finite or stepped domains, the
// objectives and the constraints. Read and checked before any evaluation: unknown paths, empty domains, values
// the experiment or accelerator would reject — every mistake is reported at its file:line:column.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "monet/experiment/experiment.hpp"
#include "monet/search/space.hpp"

namespace monet {

struct GeneSpec {
  enum class Kind : std::uint8_t { value, allocation, stack_cuts, checkpoint };
  Kind kind = Kind::value;
  std::string name;        // [space.genes.NAME]
  SourceLocation where;    // the gene's table
  // value genes: a key of the experiment or of the accelerator file (or several linked keys that always take the
  // same value, e.g. an array size and the dataflow unrolling it), and its values
  std::string path;                // the first key (the gene's key in reports)
  std::vector<std::string> paths;  // every key it sets
  std::vector<std::shared_ptr<const toml::node>> values;  // each located where it was written
  bool ordinal = false;
  GeneGroup group = GeneGroup::training;
  std::int32_t configured = 0;  // index of the experiment's own value (0 when it is not in the domain)
  // allocation genes: operators (a name, ONNX type, kind or a glob over names) and the cores they may use
  std::string operators;
  std::vector<std::string> cores;  // empty: every allowed core
  SourceLocation cores_where;
  // stack_cuts genes: `operators` after which a stack may end, inside the forward-operator range `within`
  // ("FIRST..LAST"); one cut/fuse gene per such operator, and the stacks they make replace fusion.stacks
  std::string within;
  SourceLocation within_where;
  // and, with `tiles`, one tile-count gene per block between candidate cuts over these counts (0: the intra
  // rules' own); a stack's count (fusion.stack_tiles) is the smallest non-zero count of its blocks
  std::vector<std::int64_t> tiles;
  SourceLocation tiles_where;
  // checkpoint genes: `candidates` = "blocks": one gene per block of the chain (ModuleTree::blocks()) over
  // `checkpoint_values` (of "keep", "recompute", "offload"; `values`, default keep and recompute), together
  // setting training.checkpoint.blocks (the recomputed blocks) and training.checkpoint.offload (the offloaded ones)
  std::string candidates;
  std::vector<std::string> checkpoint_values;
};

struct ConstraintSpec {
  std::string key;  // a metric (docs/search.md)
  std::optional<double> max;
  std::optional<double> min;
  SourceLocation where;
};

struct SpaceSpec {
  std::vector<GeneSpec> genes;
  std::vector<Objective> objectives;
  std::vector<ConstraintSpec> constraints;
  SourceLocation where;
};

/// The experiment's [space], or nullopt when it has none. Every value of every value gene is tried on the
/// experiment (one at a time, the others at their configured values), so that anything the experiment,
/// accelerator or core files would reject is reported now, at the value.
MONET_API std::optional<SpaceSpec> read_space_spec(const ExperimentSource& source);

/// The changes a value gene makes for its value `index` (one per linked key).
MONET_API std::vector<Change> gene_changes(const GeneSpec& gene, std::int32_t index);

}  // namespace monet
