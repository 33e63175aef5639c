#pragma once
// `agio demo`: the embedded default job.
namespace agio::tools {
int demo_main(int argc, char** argv, int first);
}
