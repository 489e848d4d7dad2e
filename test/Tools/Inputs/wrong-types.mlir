// Well-formed text, but the verifier rejects line 6: storing f16 values into an f32 view.
func.func @mismatch(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %c1 = arith.constant 1 : i32
  %v = tile.make_view %x, [%n], [%c1] : !tile.ptr<f32> -> !tile.view<f32, 1>
  %h = arith.constant dense<1.0> : tensor<64xf16>
  tile.store %h, %v[%n] : tensor<64xf16>, !tile.view<f32, 1>
  return
}
