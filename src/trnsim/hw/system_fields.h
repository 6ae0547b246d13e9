// Readers of system-file blocks that Trainium and GPU systems share.
#pragma once
#include "trnsim/hw/chip_spec.h"
#include "trnsim/hw/yaml_fields.h"

namespace trnsim::hw {

// `scale_out:` {kind: efa | ena | none, bandwidth_per_instance, latency}.
ScaleOutSpec read_scale_out(YamlMap m);

}  // namespace trnsim::hw
