# Figure: the demo's training loss against step, fp32 and bf16 (benchmarks/results/demo_loss.json).
# gnuplot -e "datadir='DIR'; outfile='FILE'" demo_loss.gp, after results.py dat wrote DIR.
width = 820; height = 500
load datadir."/demo_loss.gp"
load "common.gp"
set title title."\n".machine font "sans,12"
set xlabel "optimizer step (32 windows of at most 128 tokens each)"
set ylabel "training loss (mean over the last 100 steps, log scale)"
set logscale y
stats [*:*] datadir."/demo_loss_fp32.dat" using 2 name "A" nooutput
stats [*:*] datadir."/demo_loss_bf16.dat" using 2 name "B" nooutput
set yrange [(A_min < B_min ? A_min : B_min) / 1.15 : (A_max > B_max ? A_max : B_max) * 1.5]
set ytics (0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 7, 10)
set grid xtics ytics
set xrange [0:*]
set key top right box opaque
plot datadir."/demo_loss_fp32.dat" using 1:2 with lines lw 2.5 lc rgb c_ours32 title label_fp32, \
     datadir."/demo_loss_bf16.dat" using 1:2 with lines lw 2.5 dt 2 lc rgb c_ours16 title label_bf16
