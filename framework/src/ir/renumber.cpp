#include "monet/ir/renumber.hpp"

namespace monet {

void follow_moved_operators(GraphBuilder& b, const std::vector<OperatorId>& new_id) {
  for (const OperatorId id : new_id) {
    if (id == kNone) continue;
    Operator& op = b.op(id);
    for (OperatorId& a : op.after) a = new_id[static_cast<std::size_t>(a)];
    if (op.derived_from != kNone) op.derived_from = new_id[static_cast<std::size_t>(op.derived_from)];
  }
}

}  // namespace monet
