#!/usr/bin/env bash
# Lints deploy/docker/Dockerfile with dockerfile-utils (npm, the version pinned in lint/package-lock.json), proves
# the linter rejects a broken Dockerfile, and checks the project's own rule: every RUN step is a script of the
# repository (which CI runs on the host: image_steps_test.sh), and every COPY source exists.
#   lint_test.sh <source dir> <work dir>
set -euo pipefail
src=$1 work=$2
dockerfile=$src/deploy/docker/Dockerfile
mkdir -p "$work"
cp "$src/tests/deploy/docker/lint/package.json" "$src/tests/deploy/docker/lint/package-lock.json" "$work/"
if ! cmp -s "$work/package-lock.json" "$work/node_modules/.package-lock.json.installed" 2>/dev/null; then
  command -v npm >/dev/null || { echo "lint_test: npm is needed (scripts/install-deps.sh --test installs it)" >&2; exit 1; }
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error) >&2
  cp "$work/package-lock.json" "$work/node_modules/.package-lock.json.installed"
fi
lint=$work/node_modules/.bin/dockerfile-utils

printf 'FROM debian:12-slim\nRUNN true\nENV\n' > "$work/broken.Dockerfile"
if "$lint" lint "$work/broken.Dockerfile" >/dev/null; then
  echo "lint_test: the linter accepted a broken Dockerfile: it checks nothing" >&2; exit 1
fi
if ! out=$("$lint" lint "$dockerfile"); then
  echo "lint_test: $dockerfile:"; echo "$out"; exit 1
fi

status=0
# Instructions continued over several lines are joined first.
joined=$(sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$dockerfile" | grep -v '^[[:space:]]*#')
while read -r instruction rest; do
  case "$instruction" in
    RUN)
      script=${rest%% *}
      case "$script" in
        scripts/*|deploy/docker/*) path=$src/$script ;;
        /tmp/cputrain-runtime/*) path=$src/deploy/docker/${script#/tmp/cputrain-runtime/} ;;
        *) echo "lint_test: RUN $rest: not a script of the repository, so CI does not run it" >&2; status=1; continue ;;
      esac
      [[ -x $path ]] || { echo "lint_test: RUN $rest: $path is not an executable file" >&2; status=1; }
      ;;
    COPY)
      [[ $rest == --from=* ]] && continue
      read -ra words <<<"$rest"
      for source in "${words[@]:0:${#words[@]}-1}"; do
        [[ -e $src/$source ]] || { echo "lint_test: COPY $rest: $source does not exist" >&2; status=1; }
      done
      ;;
  esac
done <<<"$joined"
[[ $status -eq 0 ]] && echo "lint_test: $dockerfile is clean; every RUN is a repository script"
exit $status
