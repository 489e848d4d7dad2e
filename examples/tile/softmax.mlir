// Row softmax: out[r, :] = exp(x[r, :] - max_c x[r, c]) / sum_c exp(x[r, c] - max_c x[r, c]).
// Each program instance takes 4 rows of up to 1024 columns; launch with grid = ceil(rows / 4).
// Columns past `cols` load as -inf, so they add exp(-inf) = 0 to the sum and never win the max.
func.func @softmax(%in: !tile.ptr<f32>, %out: !tile.ptr<f32>, %rows: i32, %cols: i32,
                   %in_row_stride: i32, %out_row_stride: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %rows_per_program = arith.constant 4 : i32
  %row0 = arith.muli %pid, %rows_per_program : i32
  %iv = tile.make_view %in, [%rows, %cols], [%in_row_stride, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %ov = tile.make_view %out, [%rows, %cols], [%out_row_stride, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %x = tile.load %iv[%row0, %c0] {padding = 0xFF800000 : f32} : !tile.view<f32, 2> -> tensor<4x1024xf32>
  // m = max_c x[r, c]
  %m = tile.reduce max %x {axis = 1 : i32} : tensor<4x1024xf32> -> tensor<4xf32>
  %m1 = tile.expand_dims %m {axis = 1 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  %mb = tile.broadcast %m1 : tensor<4x1xf32> -> tensor<4x1024xf32>
  // e = exp(x - m)
  %shifted = arith.subf %x, %mb : tensor<4x1024xf32>
  %e = math.exp %shifted : tensor<4x1024xf32>
  // l = sum_c e[r, c];  out = e / l
  %l = tile.reduce sum %e {axis = 1 : i32} : tensor<4x1024xf32> -> tensor<4xf32>
  %l1 = tile.expand_dims %l {axis = 1 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  %lb = tile.broadcast %l1 : tensor<4x1xf32> -> tensor<4x1024xf32>
  %y = arith.divf %e, %lb : tensor<4x1024xf32>
  tile.store %y, %ov[%row0, %c0] : tensor<4x1024xf32>, !tile.view<f32, 2>
  return
}
