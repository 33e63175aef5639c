#pragma once
// agio info URI: a store's size and block size.
namespace agio::tools {
int info_main(int argc, char** argv, int first);
}
