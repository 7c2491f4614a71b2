# Sourced by the test command (the workspace's own build) and the scripts with builds of
# their own (aarch64, wasm32, the Java natives through zig, fuzzing, the valgrind check, the
# frame-pointer build): each keeps its target directory in a cache outside the repository,
# as the peers are, so a fresh clone
# reuses what an earlier run compiled of its dependencies and toolchain libraries (the
# project's own crates are rebuilt: a clone's files are newer than any build of them).
# SHANGMI_BUILD_CACHE moves the cache (default ~/.cache/shangmi-build); one grown past
# SHANGMI_BUILD_CACHE_GB (default 24) is emptied before it is used.

# build_dir NAME: the cached target directory for one kind of build (made when missing).
build_dir() {
  local root=${SHANGMI_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/shangmi-build}
  local limit_kb=$(( ${SHANGMI_BUILD_CACHE_GB:-24} * 1024 * 1024 ))
  if [ -d "$root" ] && [ "$(du -sk "$root" 2>/dev/null | cut -f1)" -gt "$limit_kb" ]; then
    echo "build cache $root is over ${SHANGMI_BUILD_CACHE_GB:-24} GB: emptied" >&2
    rm -rf "$root"
  fi
  mkdir -p "$root/$1"
  echo "$root/$1"
}
