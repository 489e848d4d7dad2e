//===- TileRegisters.cpp - The source kernel's values as lowered ---------===//
#include "TileRegisters.h"

namespace flare::tgpu::lowering {

ArrayRef<Value> TileRegisters::threadCoord(Attribute layoutAttr) {
  auto it = threadCoords.find(layoutAttr);
  if (it != threadCoords.end())
    return it->second;
  // Computed once, in the kernel's prologue, so that every region can use them.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(prologueAnchor);
  Location savedLoc = loc;
  loc = func.getLoc();
  LinearLayout layout = cast<LinearLayoutAttr>(layoutAttr).getLayout();
  SmallVector<Value> coords;
  for (int d = 0; d < layout.rank(); ++d) {
    Value acc = i32(0);
    for (auto [in, id] : {std::pair<LayoutInput, Value>{LayoutInput::Lane, laneId}, {LayoutInput::Warp, warpId}}) {
      const auto &bases = layout.bases(in);
      for (size_t bit = 0; bit < bases.size(); ++bit) {
        if (bases[bit][d] == 0)
          continue;
        // ((id >> bit) & 1) * basis, XOR-ed in.
        Value sel = arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, id, i32(bit)), i32(1));
        acc = arith::XOrIOp::create(b, loc, acc, arith::MulIOp::create(b, loc, sel, i32(bases[bit][d])));
      }
    }
    coords.push_back(acc);
  }
  loc = savedLoc;
  return threadCoords[layoutAttr] = coords;
}

} // namespace flare::tgpu::lowering
