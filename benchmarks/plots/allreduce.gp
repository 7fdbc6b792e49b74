# Figure: averaging the gradients of 2 ranks (benchmarks/results/allreduce.json). Left: bandwidth (buffer bytes /
# time) against buffer size for one MPI_Allreduce, all_reduce_sum's 8 MiB pieces and the gradient reducer. Right:
# a simulated backward, step time without overlap / with it, the communication thread sharing the rank's core
# (spin) or with a core to itself (sleep); above each bar the share of the communication hidden.
width = 1060; height = 540
load datadir."/allreduce.gp"
load "common.gp"
set multiplot layout 1, 2 title title."\n".machine font "sans,13" margins 0.07, 0.98, 0.12, 0.79 spacing 0.09
set title "Gradient averaging, every bucket ready at once" font "sans,11"
set logscale x
set xlabel "buffer, MB (log scale)"
set ylabel "GB/s (buffer bytes / time, higher is better)"
set xtics (1, 4, 10, 25, 50, 100, 200, 435.6)
set grid xtics ytics
stats [*:*] datadir."/allreduce.dat" using 2 name "R" nooutput
stats [*:*] datadir."/allreduce.dat" using 3 name "P" nooutput
set yrange [0:(R_max > P_max ? R_max : P_max) * 1.5]  # room for the key above the lines
set key top right box opaque font "sans,11"
plot datadir."/allreduce.dat" using 1:2 with linespoints lw 2 pt 7 lc rgb c_torch32 title "one MPI_Allreduce", \
     "" using 1:3 with linespoints lw 2 pt 5 lc rgb c_grey title "all_reduce_sum (8 MiB pieces)", \
     "" using 1:5 with linespoints lw 2 pt 9 lc rgb c_ours32 title "gradient reducer, no overlap", \
     "" using 1:4 with linespoints lw 2 pt 13 dt 2 lc rgb c_ours16 title "gradient reducer, overlap thread"
unset logscale x
set xtics 1 scale 0
unset grid
set grid ytics
set title "Simulated backward: step speed-up from overlap\n(above each bar: share of the communication hidden)" \
    font "sans,11"
set xlabel "buffer (those of more than one bucket)"
set ylabel "step time without overlap / with it"
set boxwidth 0.34
set xrange [-0.6:*]
f = datadir."/allreduce_sim.dat"
stats [*:*] f using 4 nooutput
set yrange [0:STATS_max * 1.25]
set key top left box opaque font "sans,11"
plot f using ($0 - 0.18):2 with boxes lc rgb c_torch16 title "compute on the rank's one core (spin)", \
     f using ($0 + 0.18):4 with boxes lc rgb c_ours32 title "a core free for the communication thread (sleep)", \
     f using ($0 - 0.18):2:(sprintf("%.0f %%", $3)) with labels offset 0, 0.8 font "sans,10" notitle, \
     f using ($0 + 0.18):4:(sprintf("%.0f %%", $5)) with labels offset 0, 0.8 font "sans,10" notitle, \
     f using 0:(0):xtic(1) with lines lc rgb "black" notitle, \
     1 with lines lc rgb "#404040" dt 3 notitle
unset multiplot
