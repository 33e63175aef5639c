#!/bin/bash
# The probe, compiled and run on the device (carry .scratch holding probe/retire_copy.cu).
cd .scratch/session14/probe && nvcc -std=c++20 -O3 -arch=sm_90 -o /tmp/retire_copy retire_copy.cu && timeout 120 /tmp/retire_copy 2>&1 | tee $OUT/retire_copy.log
