#pragma once
// agio stage and agio export: a .npy file into a store as a record that agio.Array.open opens
// (and back out as a .npy file), or a local file's bytes into a store at a byte offset (and a
// store's byte range back out), through the runtime's device-side I/O.
namespace agio::tools {
int stage_main(int argc, char** argv, int first);
int export_main(int argc, char** argv, int first);
}  // namespace agio::tools
