#pragma once
// The evaluation command: Figures 4, 7-10, 11 and 12 of the AGILE paper in one run.
namespace agio::bench {
int evaluation_main(int argc, char** argv, int first);
}
