#pragma once
// The overlap benchmark (AGILE Figure 4): async against sync I/O in one block as the
// computation-to-communication ratio grows.
namespace agio::bench {
int overlap_main(int argc, char** argv, int first);
}
