# Figure: run_qa steps per second, 1 process x 2 threads against 2 ranks x 1 thread, the embedding gradient sent as
# rows or as the whole table, per alternated round (benchmarks/results/distributed.json). Above the ranks' bars:
# their speed relative to the 1 process and the share of communication hidden behind backward.
width = 960; height = 540
load datadir."/distributed.gp"
load "common.gp"
f = datadir."/distributed.dat"
set title title."\n".machine."\nabove the ranks' bars: steps/s (ratio to 1 process) and the share of communication hidden behind backward" \
    font "sans,12"
set ylabel "training steps per second (higher is better)"
set boxwidth 0.27
set xrange [-0.6:1.6]
stats [*:*] f using 2 nooutput
set yrange [0:STATS_max * 1.35]
set xtics scale 0
set key top center horizontal maxcols 1 box opaque font "sans,11"
plot f using ($0 - 0.29):2 with boxes lc rgb c_grey title label_one, \
     f using ($0):3:xtic(1) with boxes lc rgb c_ours32 title label_sparse, \
     f using ($0 + 0.29):4 with boxes lc rgb c_ours16 title label_dense, \
     f using ($0 - 0.29):2:5 with labels offset 0, 0.8 font "sans,10" notitle, \
     f using ($0):3:6 with labels offset 0, 1.8 font "sans,10" notitle, \
     f using ($0):3:7 with labels offset 0, 0.8 font "sans,10" notitle, \
     f using ($0 + 0.29):4:8 with labels offset 0, 1.8 font "sans,10" notitle, \
     f using ($0 + 0.29):4:9 with labels offset 0, 0.8 font "sans,10" notitle
