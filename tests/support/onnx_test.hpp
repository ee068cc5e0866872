#pragma once
// A fixture for tests of the onnx frontend: loads a model built with OnnxBuilder (or a file) with the
// frontend's parameters, or returns the error it raises.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "monet/plugin/interfaces.hpp"
#include "monet/plugin/registry.hpp"
#include "support/onnx_builder.hpp"
#include "support/test_support.hpp"

namespace monet::test {

class OnnxTest : public ::testing::Test {
 protected:
  using Params = std::function<void(ParamValues&)>;
  GraphPtr load_file(const std::filesystem::path& file, const Params& params = {}) {
    const Registry& r = Registry::global();
    const PluginHandle* h = r.find(PluginKind::frontend, "onnx");
    ParamValues p = default_params(h->info.params, "test");
    if (params) params(p);
    return r.create<WorkloadFrontend>(*h, p)->load(file);
  }
  GraphPtr load(const OnnxBuilder& b, const Params& params = {}) { return load_file(b.save(dir_.path() / "m.onnx"), params); }
  /// The error message loading gives, or "<no error>".
  std::string fail_file(const std::filesystem::path& file, const Params& params = {}) {
    try {
      load_file(file, params);
    } catch (const UserError& e) {
      return e.what();
    }
    return "<no error>";
  }
  std::string fail(const OnnxBuilder& b, const Params& params = {}) { return fail_file(b.save(dir_.path() / "m.onnx"), params); }
  /// Where load() and fail() write the model (error messages name it).
  std::string path() const { return (dir_.path() / "m.onnx").string(); }
  ScratchDir dir_;
};

}  // namespace monet::test
