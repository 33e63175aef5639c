#pragma once
// The DLRM inference benchmark (AGILE Figures 7-10): embedding tables on storage, fetched
// through agio in async, sync and BaM-style modes, beside a CPU-driven pipeline.
namespace agio::bench {
int dlrm_main(int argc, char** argv, int first);
}
