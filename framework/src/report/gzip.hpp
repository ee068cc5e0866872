#pragma once
// gzip compression of output files (kernel-internal): trace.json.gz, which Perfetto and chrome://tracing open.
#include <string>

namespace monet::detail {

/// `data` as a gzip stream (RFC 1952), at a fast compression level.
std::string gzip(const std::string& data);

}  // namespace monet::detail
