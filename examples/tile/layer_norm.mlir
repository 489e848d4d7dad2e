// Layer norm over the last dimension: y = (x - mean) * rsqrt(var + eps) * w + b, per row of up to 1024
// columns, with mean = sum_c x / cols and var = sum_c (x - mean)^2 / cols. Each program instance takes
// 4 rows; launch with grid = ceil(rows / 4).
func.func @layer_norm(%x: !tile.ptr<f32>, %w: !tile.ptr<f32>, %b: !tile.ptr<f32>, %y: !tile.ptr<f32>,
                      %rows: i32, %cols: i32, %row_stride: i32, %eps: f32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %row0 = arith.muli %pid, %c4 : i32
  %xv = tile.make_view %x, [%rows, %cols], [%row_stride, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %yv = tile.make_view %y, [%rows, %cols], [%row_stride, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %wv = tile.make_view %w, [%cols], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %bv = tile.make_view %b, [%cols], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %xt = tile.load %xv[%row0, %c0] : !tile.view<f32, 2> -> tensor<4x1024xf32>
  %n = arith.sitofp %cols : i32 to f32
  %n_b = tile.splat %n : f32 -> tensor<4xf32>
  // mean = sum_c x / cols (padded columns load as 0 and add nothing)
  %sum = tile.reduce sum %xt {axis = 1 : i32} : tensor<4x1024xf32> -> tensor<4xf32>
  %mean = arith.divf %sum, %n_b : tensor<4xf32>
  %mean1 = tile.expand_dims %mean {axis = 1 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  %mean_b = tile.broadcast %mean1 : tensor<4x1xf32> -> tensor<4x1024xf32>
  // centred values, zero in the padded columns so that they add nothing to the variance
  %col = tile.range 0, 1024 : tensor<1024xi32>
  %col1 = tile.expand_dims %col {axis = 0 : i32} : tensor<1024xi32> -> tensor<1x1024xi32>
  %col_b = tile.broadcast %col1 : tensor<1x1024xi32> -> tensor<4x1024xi32>
  %cols_b = tile.splat %cols : i32 -> tensor<4x1024xi32>
  %inside = arith.cmpi slt, %col_b, %cols_b : tensor<4x1024xi32>
  %diff = arith.subf %xt, %mean_b : tensor<4x1024xf32>
  %zeros = arith.constant dense<0.0> : tensor<4x1024xf32>
  %centred = arith.select %inside, %diff, %zeros : tensor<4x1024xi1>, tensor<4x1024xf32>
  // rstd = rsqrt(sum_c centred^2 / cols + eps)
  %sq = arith.mulf %centred, %centred : tensor<4x1024xf32>
  %ssq = tile.reduce sum %sq {axis = 1 : i32} : tensor<4x1024xf32> -> tensor<4xf32>
  %var = arith.divf %ssq, %n_b : tensor<4xf32>
  %eps_b = tile.splat %eps : f32 -> tensor<4xf32>
  %var_eps = arith.addf %var, %eps_b : tensor<4xf32>
  %rstd = math.rsqrt %var_eps : tensor<4xf32>
  %rstd1 = tile.expand_dims %rstd {axis = 1 : i32} : tensor<4xf32> -> tensor<4x1xf32>
  %rstd_b = tile.broadcast %rstd1 : tensor<4x1xf32> -> tensor<4x1024xf32>
  // y = centred * rstd * w + b, with w and b broadcast down the rows
  %wt = tile.load %wv[%c0] : !tile.view<f32, 1> -> tensor<1024xf32>
  %bt = tile.load %bv[%c0] : !tile.view<f32, 1> -> tensor<1024xf32>
  %wt1 = tile.expand_dims %wt {axis = 0 : i32} : tensor<1024xf32> -> tensor<1x1024xf32>
  %bt1 = tile.expand_dims %bt {axis = 0 : i32} : tensor<1024xf32> -> tensor<1x1024xf32>
  %w_b = tile.broadcast %wt1 : tensor<1x1024xf32> -> tensor<4x1024xf32>
  %b_b = tile.broadcast %bt1 : tensor<1x1024xf32> -> tensor<4x1024xf32>
  %normed = arith.mulf %centred, %rstd_b : tensor<4x1024xf32>
  %scaled = arith.mulf %normed, %w_b : tensor<4x1024xf32>
  %out = arith.addf %scaled, %b_b : tensor<4x1024xf32>
  tile.store %out, %yv[%row0, %c0] : tensor<4x1024xf32>, !tile.view<f32, 2>
  return
}
