//===- main.cpp - flare-warmup --------------------------------------------===//
#include "flare/Tools/Tools.h"

int main(int argc, char **argv) { return flare::tools::flareWarmupMain(argc, argv); }
