#pragma once
// agio info [URI]: a store's size and block size, or the host memory a host tier can use.
namespace agio::tools {
int info_main(int argc, char** argv, int first);
}
