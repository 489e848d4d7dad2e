//===- main.cpp - flare-opt -----------------------------------------------===//
#include "flare/Tools/Tools.h"

int main(int argc, char **argv) { return flare::tools::flareOptMain(argc, argv); }
