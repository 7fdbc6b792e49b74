#!/usr/bin/env bash
# docs/user-commands: the build and install commands the user docs give work as written on a machine that has only
# the library's dependencies (scripts/install-deps.sh without --test). Catch2 and Google Benchmark are hidden from
# CMake (CMAKE_DISABLE_FIND_PACKAGE_<name>), so a documented user command that reaches the tests or the benchmarks
# fails here, as it would there.
#
#   user_commands_test.sh <source dir> <work dir> [cmake] [ninja]
#
# The commands are read from the docs, not copied: every code block of the docs below (fenced, indented, or a
# `code span` in the text) that mentions the user preset (`--preset user` or `build/user/`), in document order. They
# run in <work dir>/src, a stand-in for the checkout (links to the source tree's top-level entries, but not build/:
# build/user lands in the work dir, never in the source tree):
#   cmake configure (--preset, -S, -B)            run, with the two packages hidden
#   cmake --build                                 a dry run (-- -n): the targets must exist; nothing is compiled
#   cmake --install, other cmake commands         run
#   anything else (scripts/install-deps.sh, the programs, a cmake file's lines)   not run
# Absolute paths and <prefix> are moved under <work dir>/root; a configure command that comes again word for word
# (the same build directory, the same settings) runs once. Then every program path build/user/examples/<name> in the
# docs must be an executable of that build, and run_qa must be one. And README.md, docs/user-guide.md, docs/training.md and
# docs/text-and-data.md may name no other preset (`--preset release`, `build/release/`): those build the tests.
# A few seconds: two configures, three installs of the headers, dry runs.
set -euo pipefail

(( $# >= 2 )) || { echo "usage: $0 <source dir> <work dir> [cmake] [ninja]" >&2; exit 2; }
source_dir=$(cd "$1" && pwd)
work=$2
[[ -n ${3:-} ]] && PATH=$(dirname "$3"):$PATH
[[ -n ${4:-} && $4 == /* ]] && PATH=$PATH:$(dirname "$4")  # the build's own ninja, where PATH has none
export PATH

preset=user
docs=(README.md docs/user-guide.md docs/training.md docs/build.md docs/text-and-data.md)
user_only_docs=(README.md docs/user-guide.md docs/training.md docs/text-and-data.md)
hide=(-DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON)
fence_re='^[[:space:]]*(```|~~~)'
mentions_user="(--preset[= ]$preset([^[:alnum:]_-]|\$)|build/$preset/)"
started=$SECONDS

fail() { echo "user_commands_test: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work/src" "$work/root"
work=$(cd "$work" && pwd)
for entry in "$source_dir"/*; do
  name=${entry##*/}
  [[ $name == build || $name == Testing ]] || ln -s "$entry" "$work/src/$name"
done

# --- The other presets named in the user-only docs.
mapfile -t other_presets < <(grep -oE '"name": *"[^"]+"' "$source_dir/CMakePresets.json" |
                             sed -E 's/.*"([^"]+)"$/\1/' | sort -u | grep -vx "$preset")
for doc in "${user_only_docs[@]}"; do
  while IFS=: read -r line match; do
    name=${match#--preset}; name=${name:1}
    [[ $name == "$preset" ]] ||
      fail "$doc:$line: '$match': the user docs build with the $preset preset (the others build the tests and" \
           "benchmarks, which need scripts/install-deps.sh --test); docs/build.md is the developers' page"
  done < <(grep -noE -- '--preset[= ][A-Za-z0-9_-]+' "$source_dir/$doc" || true)
  for name in "${other_presets[@]}"; do
    while IFS=: read -r line _; do
      fail "$doc:$line: 'build/$name/': the user docs build with the $preset preset, in build/$preset/"
    done < <(grep -noF "build/$name/" "$source_dir/$doc" || true)
  done
done

# --- The blocks: block_locs[i] (file:line) and block_texts[i] (one logical line each: continuations joined).
block_locs=()
block_texts=()
add_block() {  # <file:line> <lines...>
  local loc=$1 text="" line joined=""
  shift
  for line in "$@"; do
    if [[ $line == *\\ ]]; then joined+="${line%\\} "; continue; fi
    text+="$joined$line"$'\n'
    joined=""
  done
  [[ -n $joined ]] && text+="$joined"$'\n'
  [[ $text =~ $mentions_user ]] || return 0
  block_locs+=("$loc")
  block_texts+=("$text")
}

scan_doc() {  # <doc>
  local doc=$1 n=0 line fence="" fence_start=0 para_start=0 para_code=0 span rest
  local -a fence_lines=() para=()
  flush_para() {
    if (( ${#para[@]} )); then
      if (( para_code )); then
        add_block "$doc:$para_start" "${para[@]}"
      else
        rest="${para[*]}"
        while [[ $rest == *'`'*'`'* ]]; do
          rest=${rest#*'`'}; span=${rest%%'`'*}; rest=${rest#*'`'}
          [[ $span =~ ^cmake[[:space:]] ]] && add_block "$doc:$para_start" "$span"
        done
      fi
    fi
    para=()
    para_code=0
  }
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    if [[ -n $fence ]]; then
      if [[ $line =~ $fence_re ]]; then
        add_block "$doc:$fence_start" "${fence_lines[@]}"
        fence=""
      else
        fence_lines+=("$line")
      fi
      continue
    fi
    if [[ $line =~ $fence_re ]]; then
      flush_para
      fence=open
      fence_start=$n
      fence_lines=()
      continue
    fi
    if [[ -z ${line//[[:space:]]/} ]]; then flush_para; continue; fi
    if (( ${#para[@]} == 0 )); then
      para_start=$n
      [[ $line == '    '* ]] && para_code=1
    fi
    para+=("$line")
  done < "$source_dir/$doc"
  flush_para
}
for doc in "${docs[@]}"; do scan_doc "$doc"; done

# --- Running them.
declare -A configured=()
configures=0 builds=0 installs=0 log=$work/command.log
run_command() {  # <file:line> <command>
  local loc=$1 cmd=$2
  cmd=${cmd//<prefix>//prefix}
  cmd=$(sed -E "s#(^|[[:space:]=\"'])/#\\1$work/root/#g" <<< "$cmd")
  if [[ $cmd =~ ^cmake[[:space:]]+--build([[:space:]]|$) ]]; then
    if [[ $cmd == *' -- '* ]]; then cmd+=" -n"; else cmd+=" -- -n"; fi
    builds=$((builds + 1))
  elif [[ $cmd =~ ^cmake[[:space:]]+--install([[:space:]]|$) ]]; then
    installs=$((installs + 1))
  elif [[ $cmd =~ ^cmake[[:space:]](.*[[:space:]])?(--preset|-S|-B) ]]; then
    cmd+=" ${hide[*]}"
    if [[ -n ${configured[$cmd]:-} ]]; then
      echo "$loc: $cmd  (ran at ${configured[$cmd]})"
      return
    fi
    configured[$cmd]=$loc
    configures=$((configures + 1))
  fi
  echo "$loc: $cmd"
  (cd "$work/src" && bash -c "$cmd") > "$log" 2>&1 || {
    tail -n 40 "$log" >&2
    fail "$loc: the documented command failed (above, the end of its output; the command as run:" \
         "$cmd)"
  }
}

for i in "${!block_locs[@]}"; do
  loc=${block_locs[$i]}
  while IFS= read -r line; do
    line=${line#"${line%%[![:space:]]*}"}
    line=${line#'$ '}
    chain=""
    if [[ $line =~ ^cmake[[:space:]] ]]; then
      chain=${line%%[[:space:]]#*}
    elif [[ $line == *'#'* ]]; then  # a command in a comment: find_package(...)  # after: cmake --preset ...
      rest=${line#*'#'}
      before=${rest%%cmake[[:space:]]*}
      [[ $before != "$rest" ]] && chain=${rest:${#before}}
      [[ $chain =~ ^cmake[[:space:]]+(--preset|--build|--install|-S|-B)([[:space:]=]) ]] || chain=""
    fi
    [[ -n $chain ]] || continue
    chain=${chain//&&/$'\n'}
    while IFS= read -r cmd; do
      cmd=${cmd#"${cmd%%[![:space:]]*}"}
      cmd=${cmd%"${cmd##*[![:space:]]}"}
      [[ -n $cmd ]] && run_command "$loc" "$cmd"
    done <<< "$chain"
  done <<< "${block_texts[$i]}"
done

(( configures > 0 && builds > 0 )) ||
  fail "found no '--preset $preset' configure and build commands in ${docs[*]}: was the preset renamed? (this test" \
       "reads the docs for it)"

# --- The programs the docs name are what that build makes.
[[ -f $work/src/build/$preset/build.ninja ]] ||
  fail "no documented command configured build/$preset (the docs name programs in it)"
programs=$(ninja -C "$work/src/build/$preset" -t targets all | sed -nE 's/^([^:]+): CXX_EXECUTABLE_LINKER.*/\1/p')
grep -qx examples/run_qa <<< "$programs" || fail "the $preset preset does not build run_qa (examples/run_qa)"
paths=0
for doc in "${docs[@]}"; do
  while IFS=: read -r line path; do
    grep -qxF "${path#build/"$preset"/}" <<< "$programs" ||
      fail "$doc:$line: $path: the $preset preset builds no such program (it builds: $(tr '\n' ' ' <<< "$programs"))"
    paths=$((paths + 1))
  done < <(grep -noE "build/$preset/examples/[A-Za-z0-9_.+-]+" "$source_dir/$doc" || true)
done

echo "user_commands_test: ${#block_locs[@]} blocks name the $preset preset: $configures configures and $installs" \
     "installs run, $builds builds dry-run, $paths program paths checked, with Catch2 and Google Benchmark hidden;" \
     "$((SECONDS - started)) s"
