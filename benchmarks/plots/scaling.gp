# Figure: predicted scaling efficiency (one node's step / N nodes' step) of bert-base and bert-large, seq 384, batch
# 12 per rank, 2 ranks per node, against nodes, for three link speeds, fp32 (solid) and bf16 (dashed) gradients on
# the wire; Hugging Face's published DistilBERT point (4 nodes, 87 %) for reference. Drawn by
# scripts/plot_benchmarks.sh from benchmarks/results/scaling_table.dat (benchmarks/scaling_model.py table ... --dat).
width = 1000; height = 460
load "common.gp"
set multiplot layout 1, 2 title "Predicted scaling efficiency, cputrain data parallelism (benchmarks/scaling_model.py)\ncompute measured on AMD EPYC Zen 5 (2 cores), scaled to a 2 x 32-core node; see docs/scaling.md for every assumption" font "sans,12"
set logscale x 2
set xrange [3.4:75]
set xtics ("4" 4, "8" 8, "16" 16, "64" 64)
set yrange [0.5:1.02]
set ytics ("50%%" 0.5, "60%%" 0.6, "70%%" 0.7, "80%%" 0.8, "90%%" 0.9, "100%%" 1.0)
set xlabel "nodes (2 ranks each)"
set ylabel "efficiency (higher is better)"
set key bottom left font "sans,9" box opaque maxrows 7 width -2
sel(m, w, g) = sprintf("< awk '$1==\"%s\" && $2==\"%s\" && $3==%d {print $4, $6}' %s", m, w, g, datafile)
do for [m in "bert-base bert-large"] {
  set title m." (seq 384, batch 12 per rank)" font "sans,12"
  plot sel(m, "fp32", 10) with linespoints lw 2 pt 7 lc rgb c_torch32 title "10 Gbit/s fp32", \
       sel(m, "bf16", 10) with linespoints lw 2 pt 6 dt 2 lc rgb c_torch32 title "10 Gbit/s bf16", \
       sel(m, "fp32", 25) with linespoints lw 2 pt 7 lc rgb c_ours16 title "25 Gbit/s fp32", \
       sel(m, "bf16", 25) with linespoints lw 2 pt 6 dt 2 lc rgb c_ours16 title "25 Gbit/s bf16", \
       sel(m, "fp32", 100) with linespoints lw 2 pt 7 lc rgb c_ours32 title "100 Gbit/s fp32", \
       sel(m, "bf16", 100) with linespoints lw 2 pt 6 dt 2 lc rgb c_ours32 title "100 Gbit/s bf16", \
       "+" using (4):(0.87) every ::0::0 with points pt 5 ps 1.5 lc rgb c_grey title "HF published: DistilBERT, 4 nodes"
}
unset multiplot
