// Logical NeuronCores (LNC): Neuron groups `lnc` physical NeuronCores into one logical core
// that runs one program (a model, or one tensor-parallel rank), each op's work split over the
// group's physical cores. Trn2 and Trn3 default to LNC=2 (4 logical cores per Trn2 chip,
// HARDWARE.md); Trn1 and Inf2 have LNC=1. The one rule for the default, used by `run`, the
// tensor-parallel runtime, `llm`, `serve` and `train`.
#pragma once
#include <string>

#include "trnsim/hw/chip_spec.h"

namespace trnsim::hw {

// 2 on chips of 8 NeuronCores (Trn2, Trn3), else 1.
int default_lnc(const ChipSpec& chip);
// `lnc` checked against the chip (0: its default): ConfigError "<option> N: ..." unless it is
// 1 or the chip's default.
int resolve_lnc(const ChipSpec& chip, int lnc, const std::string& option = "--lnc");
// Logical cores of one chip at that LNC (0: the default).
int logical_cores(const ChipSpec& chip, int lnc);
// `--cores N` counts logical cores: the physical cores they are (0 stays 0: all of the chip's).
// ConfigError "--cores N: ..." when the chip has fewer.
int physical_cores(const ChipSpec& chip, int logical_cores, int lnc);

}  // namespace trnsim::hw
