// HBM planning: sizes of the constants, the graph's inputs and outputs, and the peak of the
// intermediates that are live at once (each from its producer to its last reader, in node
// order). Every tensor is held as fp32. Throws ShapeError when the total exceeds the chip's HBM.
// SBUF and PSUM are planned per kernel by the kernel builder's capacity-checked allocator.
#pragma once
#include "trnsim/compiler/compiled_model.h"
#include "trnsim/hw/chip_spec.h"

namespace trnsim::compiler {

HbmPlan plan_hbm(const Graph& g, const hw::ChipSpec& chip);

}  // namespace trnsim::compiler
