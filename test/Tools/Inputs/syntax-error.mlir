// A kernel with a syntax error on line 5: the type of the addition lacks its colon.
func.func @broken(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c1 = arith.constant 1 : i32
  %next = arith.addi %pid, %c1 i32
  return
}
