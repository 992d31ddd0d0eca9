#!/usr/bin/env bash
# Build batsched 1.4.0 (Batsim's C++ reference schedulers; upstream tag v1.4.0, commit b020e48b "bump
# version 1.4.0", 2020-07-29) on Debian bookworm, for tests/test_batsched_batsim.py.
# Binary: $EXT/build/batsched (EXT defaults to ~/.cache/batsched-1.4.0). Idempotent: re-running rebuilds
# nothing that is up to date. This repository holds no batsched code and no loguru code.
#
# batsched source, first found of:
#   BATSCHED_SRC_DIR=/path/to/batsched-1.4.0       (an unpacked tree: meson.build says version 1.4.0);
#   BATSCHED_SRC_TARBALL=/path/to/batsched-1.4.0.tar.gz (top folder stripped);
#   BATSCHED_GIT_DIR=/path/to/git/dir holding tag v1.4.0 (upstream gitlab.inria.fr/batsim/batsched, or a
#     fork that kept its history, e.g. github.com/hpc/batsched4);
#   an already unpacked $EXT/src.
# Dependencies:
#   Debian: meson ninja-build pkg-config g++ libboost-dev libboost-locale-dev libboost-regex-dev
#     libboost-system-dev rapidjson-dev libzmq3-dev cppzmq-dev libgmp-dev (installed when missing, as root);
#   intervalset + the redox stub: the ones the real Batsim 4.2.1 build installed (its build-batsim.sh), in
#     INTERVALSET_DEPS (default ~/.cache/batsim-4.2.1/deps: include/intervalset.hpp, include/redox.hpp,
#     lib/libintervalset.a); batsched uses the same intervalset API and never connects to redis;
#     The header is copied to $EXT/deps with two member declarations added when it lacks them,
#     biggest_interval() and random_pick(n) (batsched calls them; Batsim does not), defined in
#     tests/batsched/intervalset_extras.cpp (declarations only: the struct's layout is unchanged);
#   loguru: tests/batsched/loguru.hpp beside this script, a small stand-in for the few loguru macros batsched
#     uses (LOG_F, LOG_SCOPE_FUNCTION, g_stderr_verbosity); log lines go to stderr only.
# Build-system adjustments (no change to batsched's sources): pkg-config files for loguru, intervalset and
# redox written to $EXT/deps; meson's cpp_std raised from c++11 to c++17 (the intervalset header's; CPP_STD);
# `-include fstream` for every file (batsched 1.4.0 declares std::ofstream members in headers that include
# <fstream> only transitively, through headers of older g++/boost versions; g++ 12 needs it said). Usage: bash tests/batsched/build-batsched.sh  (then: batsched --version).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
EXT="${EXT:-$HOME/.cache/batsched-1.4.0}"
SRC="$EXT/src"
DEPS="$EXT/deps"
BUILD="$EXT/build"
INTERVALSET_DEPS="${INTERVALSET_DEPS:-$HOME/.cache/batsim-4.2.1/deps}"
BATSCHED_TAG="${BATSCHED_TAG:-v1.4.0}"
CPP_STD="${CPP_STD:-c++17}"
JOBS="${JOBS:-2}"

echo "== [1/5] Debian packages"
PKGS="meson ninja-build pkg-config g++ libboost-dev libboost-locale-dev libboost-regex-dev libboost-system-dev
      rapidjson-dev libzmq3-dev cppzmq-dev libgmp-dev"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
fi

echo "== [2/5] batsched 1.4.0 source -> $SRC"
if [ ! -f "$SRC/meson.build" ]; then
    rm -rf "$SRC"; mkdir -p "$SRC"
    if [ -n "${BATSCHED_SRC_DIR:-}" ]; then
        cp -a "$BATSCHED_SRC_DIR/." "$SRC/"
    elif [ -n "${BATSCHED_SRC_TARBALL:-}" ]; then
        tar -xzf "$BATSCHED_SRC_TARBALL" -C "$SRC" --strip-components=1
    elif [ -n "${BATSCHED_GIT_DIR:-}" ] \
         && git --git-dir="$BATSCHED_GIT_DIR" rev-parse -q --verify "$BATSCHED_TAG^{commit}" >/dev/null; then
        git --git-dir="$BATSCHED_GIT_DIR" archive "$BATSCHED_TAG" | tar -x -C "$SRC"
    else
        rmdir "$SRC"
        echo "no batsched source: set BATSCHED_SRC_DIR, BATSCHED_SRC_TARBALL or BATSCHED_GIT_DIR (tag $BATSCHED_TAG)"
        exit 1
    fi
fi
grep -q "version: '1.4.0'" "$SRC/meson.build" || { echo "$SRC is not a batsched 1.4.0 tree"; exit 1; }

echo "== [3/5] local deps (loguru stand-in; intervalset, redox from $INTERVALSET_DEPS) -> $DEPS"
for f in include/intervalset.hpp include/redox.hpp lib/libintervalset.a; do
    [ -f "$INTERVALSET_DEPS/$f" ] || { echo "missing $INTERVALSET_DEPS/$f (build the real Batsim 4.2.1 first)"; exit 1; }
done
mkdir -p "$DEPS/include" "$DEPS/lib/pkgconfig"
# put FILE: replace FILE with stdin only when the content differs (keeps mtimes, so re-runs rebuild nothing)
put() { local t; t=$(mktemp); cat > "$t"; if cmp -s "$t" "$1"; then rm -f "$t"; else mv "$t" "$1"; chmod 644 "$1"; fi; }
put "$DEPS/include/loguru.hpp" < "$HERE/loguru.hpp"
put "$DEPS/include/redox.hpp" < "$INTERVALSET_DEPS/include/redox.hpp"
if grep -q "biggest_interval" "$INTERVALSET_DEPS/include/intervalset.hpp"; then
    put "$DEPS/include/intervalset.hpp" < "$INTERVALSET_DEPS/include/intervalset.hpp"
    EXTRA_LIBS=""
else
    # add the declarations just before the first "IntervalSet left(" member
    sed '0,/^\( *\)IntervalSet left(/s//\1Set::const_iterator biggest_interval() const;\n\1IntervalSet random_pick(unsigned int nb_elements) const;\n&/' \
        "$INTERVALSET_DEPS/include/intervalset.hpp" | put "$DEPS/include/intervalset.hpp"
    grep -q "random_pick" "$DEPS/include/intervalset.hpp" || { echo "could not declare the extra members"; exit 1; }
    if [ ! -f "$DEPS/lib/libintervalset_extra.a" ] || [ "$HERE/intervalset_extras.cpp" -nt "$DEPS/lib/libintervalset_extra.a" ] \
       || [ "$DEPS/include/intervalset.hpp" -nt "$DEPS/lib/libintervalset_extra.a" ]; then
        g++ -std=c++17 -O2 -fPIC -I"$DEPS/include" -c "$HERE/intervalset_extras.cpp" -o "$DEPS/lib/intervalset_extras.o"
        ar rcs "$DEPS/lib/libintervalset_extra.a" "$DEPS/lib/intervalset_extras.o"
    fi
    EXTRA_LIBS="-L$DEPS/lib -lintervalset_extra"
fi
put "$DEPS/lib/pkgconfig/loguru.pc" <<PC
prefix=$DEPS
Name: loguru
Description: header-only stand-in for the loguru macros batsched uses
Version: 2.1.0
Cflags: -I\${prefix}/include
Libs:
PC
put "$DEPS/lib/pkgconfig/intervalset.pc" <<PC
prefix=$DEPS
Name: intervalset
Description: intervalset API (the real Batsim 4.2.1 build's)
Version: 1.2.0
Cflags: -I\${prefix}/include
Libs: $EXTRA_LIBS -L$INTERVALSET_DEPS/lib -lintervalset
PC
put "$DEPS/lib/pkgconfig/redox.pc" <<PC
prefix=$DEPS
Name: redox
Description: header-only stub of the redox redis client (redis unused)
Version: 0.3.0
Cflags: -I\${prefix}/include
Libs:
PC

echo "== [4/5] meson setup"
export PKG_CONFIG_PATH="$DEPS/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
if [ ! -f "$BUILD/build.ninja" ]; then
    rm -rf "$BUILD"
    (cd "$SRC" && CXXFLAGS="-include fstream" meson setup "$BUILD" --buildtype=release -Dcpp_std="$CPP_STD")
fi

echo "== [5/5] ninja"
ninja -C "$BUILD" -j "$JOBS" batsched
v=$("$BUILD/batsched" --version); echo "batsched --version: $v"
[ "$v" = "1.4.0" ] || { echo "unexpected version '$v'"; exit 1; }
echo "OK: $BUILD/batsched"
