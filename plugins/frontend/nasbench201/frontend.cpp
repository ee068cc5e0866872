// The `nasbench201` frontend: a workload file whose [workload] table says generator = "nasbench201" (a cell of
// NAS-Bench-201's space in the benchmark's CIFAR network, docs/workloads.md#nas-bench-201). Its parameters are what
// an experiment or a search gene changes per run: the batch and the cell.
#include "monet/plugin/entry.hpp"
#include "monet/plugin/frontend.hpp"
#include "nasbench201.hpp"

namespace monet::plugins {
namespace {

class NasBench201Frontend final : public WorkloadFrontend {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.kind = PluginKind::frontend;
    i.name = "nasbench201";
    i.version = "1.0.0";
    i.summary = "NAS-Bench-201 networks generated from a cell's architecture string (docs/workloads.md#nas-bench-201)";
    i.description =
        "Reads a TOML workload file whose [workload] table says generator = \"nasbench201\" and gives arch (the "
        "benchmark's architecture string, |op~0|+|op~0|op~1|+|op~0|op~1|op~2| with op one of none, skip_connect, "
        "nor_conv_1x1, nor_conv_3x3, avg_pool_3x3), classes (10), batch (1), channels (16), cells_per_stage (5) and "
        "input (32, a multiple of 4): the network of NAS-Bench-201's PyTorch code (TinyNetwork: stem, three stages of "
        "identical cells with ResNet reduction blocks between them, BatchNorm-ReLU-pool-Linear head), in training "
        "mode, every edge executed and `none` edges absent (but the benchmark's Zero, x.mul(0.), out of a node that "
        "has no other way to the cell's output and into a node with no other input). Operator and module names are the "
        "PyTorch module paths (\"cells.3.layers.1.op.1\"; cells.N and cells.2N+1 are the reduction blocks), so "
        "[training.checkpoint] modules = [\"cells.*\"] checkpoints the cells. The benchmark's CIFAR-10 accuracies: "
        "workloads/nasbench201/accuracy_cifar10.csv. Chosen by the file's generator key; every parameter below "
        "overrides the file's key of the same name.";
    i.params = {ParamSpec::integer("batch", 0)
                    .with_bounds(Bounds::non_negative())
                    .with_unit("samples")
                    .with_doc("overrides the file's batch; 0 keeps the file's"),
                ParamSpec::string("arch", "")
                    .with_doc("overrides the file's arch (a NAS-Bench-201 architecture string, checked as the file's "
                              "is); empty keeps the file's")};
    return i;
  }
  explicit NasBench201Frontend(const ParamValues& p) {
    overrides_.batch = p.get_int("batch");
    overrides_.arch = p.get_string("arch");
  }

  [[nodiscard]] GraphPtr load(const std::filesystem::path& file) const override {
    return build_nasbench201(TomlDocument::parse_file(file), overrides_);
  }
  /// With the experiment's [workload.set] changes (workload.set.arch, workload.set.ops[2]: a search's cell genes).
  [[nodiscard]] GraphPtr load_document(const TomlDocument& doc) const override {
    return build_nasbench201(doc, overrides_);
  }

 private:
  NasBench201Overrides overrides_;
};

}  // namespace
}  // namespace monet::plugins

MONET_EXPORT_PLUGINS(monet::plugins::NasBench201Frontend)
