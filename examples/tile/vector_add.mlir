// Elementwise tile kernel: z[i] = x[i] + y[i] for i < n, 1024 elements per program instance.
// Launch with grid = ceil(n / 1024); the last block's tail is masked by the views' bounds.
func.func @vector_add(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %z: !tile.ptr<f32>, %n: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %pid = tile.program_id x
  %block = arith.constant 1024 : i32
  %one = arith.constant 1 : i32
  %start = arith.muli %pid, %block : i32
  %xv = tile.make_view %x, [%n], [%one] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %yv = tile.make_view %y, [%n], [%one] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %zv = tile.make_view %z, [%n], [%one] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %a = tile.load %xv[%start] : !tile.view<f32, 1> -> tensor<1024xf32>
  %b = tile.load %yv[%start] : !tile.view<f32, 1> -> tensor<1024xf32>
  %sum = arith.addf %a, %b : tensor<1024xf32>
  tile.store %sum, %zv[%start] : tensor<1024xf32>, !tile.view<f32, 1>
  return
}
