// Verifies as tile IR, but a tile of 100 elements cannot get a register layout (line 6).
func.func @odd(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %x, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %t = tile.load %v[%c0] : !tile.view<f32, 1> -> tensor<100xf32>
  tile.store %t, %v[%c0] : tensor<100xf32>, !tile.view<f32, 1>
  return
}
