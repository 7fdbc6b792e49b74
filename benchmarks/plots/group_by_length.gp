# Figure: run_qa steps per second on the demo data, plain shuffling against --group_by_length, per alternated
# round (benchmarks/results/group_by_length.json).
width = 760; height = 460
load datadir."/group_by_length.gp"
load "common.gp"
f = datadir."/group_by_length.dat"
set title title."\n".machine font "sans,12"
set ylabel "training steps per second (higher is better)"
set boxwidth 0.36
set xrange [-0.6:1.6]
set xtics ("round 1" 0, "round 2" 1)
stats [*:*] f using 3 nooutput
set yrange [0:STATS_max * 1.3]
set xtics scale 0
set key top left box opaque font "sans,11"
plot f using ($0 - 0.2):2 with boxes lc rgb c_grey title "shuffled, each batch padded to its longest window", \
     f using ($0 + 0.2):3 with boxes lc rgb c_ours32 title "--group_by_length", \
     f using ($0 - 0.2):2:4 with labels offset 0, 0.8 font "sans,11" notitle, \
     f using ($0 + 0.2):3:5 with labels offset 0, 0.8 font "sans,11" notitle
