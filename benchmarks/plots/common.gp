# Shared by the figure scripts: the SVG terminal, white background (readable in dark mode too), no enhanced text
# (names like all_reduce_sum keep their underscores), and one colour per series across the figures (as strings
# for "lc rgb", as numbers for "lc rgb variable").
set terminal svg size width, height font "sans,12" noenhanced background rgb "white"
set output outfile
set encoding utf8
set style fill solid 0.85 border rgb "#404040"
set grid ytics lc rgb "#d0d0d0" lw 1 dt 1
set border 3
set tics nomirror
n_ours32 = 0x1f5fa8; c_ours32 = "#1f5fa8"
n_ours16 = 0x6fa8dc; c_ours16 = "#6fa8dc"
n_torch32 = 0xc0392b; c_torch32 = "#c0392b"
n_torch16 = 0xf0a090; c_torch16 = "#f0a090"
n_grey = 0x9a9a9a; c_grey = "#9a9a9a"
