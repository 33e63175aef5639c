#pragma once
// agio stage in|out: copies a local file into a store at a byte offset, or a store range out
// to a local file, through the runtime's device-side I/O.
namespace agio::tools {
int stage_in_main(int argc, char** argv, int first);
int stage_out_main(int argc, char** argv, int first);
}  // namespace agio::tools
