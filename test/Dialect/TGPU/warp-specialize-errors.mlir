// tgpu-warp-specialize's errors: warp roles whose registers the CTA cannot hold.
// RUN: flare-opt %s -split-input-file -verify-diagnostics --tgpu-warp-specialize

// 8 consumer warps at 256 registers and 4 producer warps at 40: 70,656 registers.
// expected-error @+1 {{warp roles need 70656 registers (8 consumer warps x 256 and 4 producer warps x 40, 32 threads each), more than the 64512 an SM gives one CTA}}
func.func @too_many_registers() attributes {tile.kernel, tile.num_warps = 8 : i32, tile.schedule = #tile.schedule<producer_warpgroup = true>, tgpu.warp_roles = #tgpu.warp_roles<consumer_registers = 256, producer_registers = 40>} {
  return
}
