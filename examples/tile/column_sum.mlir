// Column sums with atomics: out[c] += sum_r x[r, c] over a [rows, cols] f32 matrix. Each program
// instance reduces a 64 x 128 block to 128 partial sums and adds them into `out` atomically, so the
// blocks of one column may run in any order. Launch with grid = (ceil(rows / 64), ceil(cols / 128))
// on a zeroed `out`.
func.func @column_sum(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>, %rows: i32, %cols: i32, %row_stride: i32)
    attributes {tile.kernel, tile.num_warps = 4 : i32} {
  %rb = tile.program_id x
  %cb = tile.program_id y
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %c128 = arith.constant 128 : i32
  %row0 = arith.muli %rb, %c64 : i32
  %col0 = arith.muli %cb, %c128 : i32
  %xv = tile.make_view %x, [%rows, %cols], [%row_stride, %c1] : !tile.ptr<f32> -> !tile.view<f32, 2>
  %ov = tile.make_view %out, [%cols], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %xt = tile.load %xv[%row0, %col0] : !tile.view<f32, 2> -> tensor<64x128xf32>
  %partial = tile.reduce sum %xt {axis = 0 : i32} : tensor<64x128xf32> -> tensor<128xf32>
  tile.atomic_add %partial, %ov[%col0] : tensor<128xf32>, !tile.view<f32, 1>
  return
}
