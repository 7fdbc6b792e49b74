# Figure: one training step, cputrain against PyTorch, fp32 and bf16, per model size: samples/s (top row) and peak
# RSS (bottom row) (benchmarks/results/step_pytorch.json). Under each value: the ratio to PyTorch fp32.
width = 1060; height = 720
load datadir."/step_pytorch.gp"
load "common.gp"
n = int(panels)
colour(i) = i == 0 ? n_ours32 : i == 1 ? n_ours16 : i == 2 ? n_torch32 : n_torch16
set boxwidth 0.72
set xrange [-0.6:3.6]
set xtics ("cputrain\nfp32" 0, "cputrain\nbf16" 1, "PyTorch\nfp32" 2, "PyTorch\nbf16" 3) scale 0
set multiplot layout 2, n title title."\n".machine."\nin grey: the ratio to PyTorch fp32 of the same size" \
    font "sans,13" margins 0.07, 0.99, 0.08, 0.84 spacing 0.06, 0.14
do for [row = 0:1] {
  do for [i = 0:n-1] {
    f = sprintf("%s/step_pytorch_%d.dat", datadir, i)
    col = row + 1
    set autoscale y
    stats [*:*] f using (column(col)) nooutput
    set yrange [0:STATS_max * 1.3]
    set title (row == 0 ? value(sprintf("panel%d", i)) : "") font "sans,11"
    set ylabel (i == 0 ? (row == 0 ? "samples per second (higher is better)" : "peak RSS, MiB (lower is better)") : "")
    plot f using 0:col:(colour($0)) with boxes lc rgb variable notitle, \
         f using 0:(valid(col) ? column(col) : 0):(valid(col) ? strcol(2 * row + 3) : "not run") \
           with labels offset 0, 1.9 font "sans,11" notitle, \
         f using 0:(valid(col) ? column(col) : 0):(strcol(2 * row + 4)) with labels offset 0, 0.8 font "sans,11" \
           tc rgb c_grey notitle
  }
}
unset multiplot
