#!/bin/bash
# Reduced dieharder battery (17 tests of reliability "Good": -d 0 1 2 3 4 8 10 11 15 16 17 100
# 101 202 205 206 209), one verdict file per generator named on the command line.
# Usage: docs/dieharder/reduced-battery.sh fortuna-aes-concurrent nodepools ...
# Needs `apt-get install -y dieharder`. `cargo xtask stats --list` names the generators.
set -u
cd "$(git rev-parse --show-toplevel)"
cargo build --quiet --release -p scalrand-benches --bin stats
for g in "$@"; do
  out=docs/dieharder/$g.txt
  : > $out
  for d in 0 1 2 3 4 8 10 11 15 16 17 100 101 202 205 206 209; do
    ./target/release/stats $g 2>/dev/null | dieharder -g 200 -d $d 2>&1 | grep -E "^ *[a-z_0-9]+\|" | grep -v test_name >> $out
  done
  echo "# done" >> $out
done
