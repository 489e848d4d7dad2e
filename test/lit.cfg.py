# lit configuration of Flare's FileCheck tests (dialects, passes, the pipeline down to PTX, the tools).
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Flare"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "gpu", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.flare_obj_root, "test")

config.substitutions.append(("%flare_src", config.flare_src_root))
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.flare_tools_dir, append_path=True)
llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions(["flare-opt", "flarec", "flare-warmup"], [config.flare_tools_dir])

# ptxas (from the CUDA toolkit) assembles the examples' PTX where it is installed; tests that need it
# say `REQUIRES: ptxas` and are reported UNSUPPORTED elsewhere.
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas-jit", "bash " + os.path.join(config.flare_src_root, "scripts", "ptxas-jit.sh") + " " + config.ptxas))
    config.substitutions.append(("%ptxas", config.ptxas))
