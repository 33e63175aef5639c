#!/usr/bin/env bash
# Fails, listing them, if any C++ or CUDA file of the repository differs from what clang-format
# makes of it with the repository's .clang-format. Formatting depends on clang-format's version:
# this is clang-format 14 (Debian 12's), installed if missing. Fix a file with
#   clang-format-14 -i FILE
set -euo pipefail
cd "$(dirname "$0")/.."
format=""
for candidate in clang-format-14 clang-format; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" --version | grep -q 'version 14\.'; then
    format="$candidate"
    break
  fi
done
if [ -z "$format" ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq clang-format-14 >/dev/null
  format=clang-format-14
fi
unformatted=()
while IFS= read -r -d '' file; do
  "$format" --style=file "$file" | cmp -s - "$file" || unformatted+=("$file")
done < <(git ls-files -z --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h')
if [ "${#unformatted[@]}" -ne 0 ]; then
  echo "== not formatted with $format (.clang-format), ${#unformatted[@]} files; fix with: $format -i FILE..."
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "== formatting: every C++ and CUDA file matches .clang-format ($format)"
