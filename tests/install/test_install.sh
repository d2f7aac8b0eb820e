#!/bin/sh
# test_install.sh — install the build into a temporary prefix the way
# `make install PREFIX=P` does (cmake --install --prefix P) and use it as a
# user would: a program built with `pkg-config --cflags --libs amq` runs
# without LD_LIBRARY_PATH, also after the prefix is moved (amq.pc is
# relative to its own directory); a throwaway CMake project finds amq with
# find_package and links amq::amq and amq::amq_static; both tools (amq,
# amq-lab), their man pages and completions are installed; uninstall
# removes every file.
# Prints "test_install: N passed, N failed".
#
# usage: tests/install/test_install.sh SOURCE_DIR BUILD_DIR [TMPDIR]
set -u
SRC=${1:?usage: test_install.sh SOURCE_DIR BUILD_DIR [TMPDIR]}
BUILD=${2:?usage: test_install.sh SOURCE_DIR BUILD_DIR [TMPDIR]}
T=${3:-${TMPDIR:-/tmp}/amq-test-install.$$}
rm -rf "$T" && mkdir -p "$T" || exit 2
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH

passed=0
failed=0
check() {
    desc=$1
    shift
    if "$@" >"$T/out" 2>&1; then passed=$((passed + 1)); else
        failed=$((failed + 1))
        echo "FAIL: $desc" >&2
        sed 's/^/  | /' "$T/out" | tail -8 >&2
    fi
}

# The build directory's manifest belongs to the user's own `make install`:
# keep it, and give it back at the end.
manifest="$BUILD/install_manifest.txt"
[ -e "$manifest" ] && cp -p "$manifest" "$T/manifest.user"

P="$T/prefix"
check "cmake --install --prefix" cmake --install "$BUILD" --prefix "$P"
cp "$manifest" "$T/manifest.test"
for f in bin/amq bin/amq-lab include/amq/amq.h include/amq/filter.h \
    include/amq/version.h lib/libamq.so lib/libamq.a lib/pkgconfig/amq.pc \
    lib/cmake/amq/amqConfig.cmake lib/cmake/amq/amqConfigVersion.cmake \
    share/man/man1/amq.1 share/man/man1/amq-lab.1 \
    share/bash-completion/completions/amq \
    share/bash-completion/completions/amq-lab \
    share/zsh/site-functions/_amq-lab \
    share/fish/vendor_completions.d/amq-lab.fish lib/amq/amq-redis.so; do
    check "installed $f" test -e "$P/$f"
done
check "amq.pc is relative to its directory" grep -q '^prefix=${pcfiledir}/../..$' "$P/lib/pkgconfig/amq.pc"
check "amq.pc carries an rpath outside the loader's path" grep -q -- '-Wl,-rpath,${libdir}' "$P/lib/pkgconfig/amq.pc"
if command -v man >/dev/null 2>&1; then
    check "installed man page renders" sh -c "man -l '$P/share/man/man1/amq.1' 2>/dev/null | grep -q 'amq add'"
fi
check "installed completion is valid bash" bash -n "$P/share/bash-completion/completions/amq"
check "installed amq runs" "$P/bin/amq" --version
check "installed amq-lab runs" "$P/bin/amq-lab" --version
check "installed amq-lab completion is valid bash" bash -n "$P/share/bash-completion/completions/amq-lab"

# The installed Redis module loads into Debian's redis-server and answers
# (the server on loopback, stopped by its PID).
check "installed module is executable" test -x "$P/lib/amq/amq-redis.so"
if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
    port=$((20000 + $$ % 20000))
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$T" --loadmodule "$P/lib/amq/amq-redis.so" >"$T/redis.log" 2>&1 &
    rpid=$!
    up=0
    for _ in $(seq 1 50); do
        if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then up=1; break; fi
        sleep 0.1
    done
    check "redis-server starts with the installed module" test "$up" -eq 1
    check "the installed module answers BF.ADD" sh -c "redis-cli -p $port BF.ADD k a | grep -qx 1"
    check "and BF.EXISTS" sh -c "redis-cli -p $port BF.EXISTS k a | grep -qx 1"
    kill "$rpid" 2>/dev/null
    wait "$rpid" 2>/dev/null
    [ "$up" -eq 1 ] || sed 's/^/  redis| /' "$T/redis.log" | tail -5 >&2
fi

# The installed headers compile in strict ISO mode, as C and as C++ (the
# inline queries of amq/query.h are code in a header).
check "headers compile as pedantic C11" cc -std=c11 -Wall -Wextra -pedantic \
    -Werror -fsyntax-only -I"$P/include" "$SRC/tests/install/consumer/main.c"
if command -v c++ >/dev/null 2>&1; then
    check "headers compile as pedantic C++17" c++ -x c++ -std=c++17 -Wall \
        -pedantic -Werror -fsyntax-only -I"$P/include" \
        "$SRC/tests/install/consumer/main.c"
fi

# The Python package: installed beside the library, it finds it with no
# AMQ_LIBRARY or LD_LIBRARY_PATH, also after the prefix is moved; and
# `pip install ./python` into a fresh venv finds the library through
# pkg-config at install time.
PY=/usr/bin/python3
if [ -x "$PY" ]; then
    pyver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    site="lib/python$pyver/dist-packages"
    for f in amq/__init__.py amq/_config.py amq/py.typed; do
        check "installed $site/$f" test -e "$P/$site/$f"
    done
    py_uses() { # PREFIX SITE-DIR: import amq from SITE-DIR, with PREFIX's library
        (cd "$T" && PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$2" "$PY" -c "
import amq, amq._native as n
assert n.lib._name.startswith('$1/'), n.lib._name
f = amq.Filter(1000, 0.01)
f.add('x')
assert 'x' in f and amq.__version__ == amq.version()")
    }
    check "installed package imports, with the installed library" py_uses "$P" "$P/$site"
    mv "$P" "$T/moved"
    check "and from the moved prefix" py_uses "$T/moved" "$T/moved/$site"
    mv "$T/moved" "$P"
    if "$PY" -m venv --system-site-packages "$T/venv" >"$T/venv.log" 2>&1; then
        check "pip install ./python into a venv" env PYTHONDONTWRITEBYTECODE=1 \
            PKG_CONFIG_PATH="$P/lib/pkgconfig" "$T/venv/bin/pip" install \
            --no-cache-dir -q "$SRC/python"
        check "the venv's amq uses the installed library" sh -c \
            "cd '$T' && PYTHONDONTWRITEBYTECODE=1 '$T/venv/bin/python' -c \"
import amq, amq._native as n
assert n.lib._name.startswith('$P/'), n.lib._name
assert amq.__file__.startswith('$T/venv/'), amq.__file__
assert amq.Filter('blocked', 100, 0.01).capacity == 100\""
    else
        echo "test_install: no python3 venv (Debian python3-venv); pip install not checked" >&2
    fi
fi

# pkg-config, from where it was installed and after moving the prefix.
pc_build() { # PREFIX OUTPUT
    PKG_CONFIG_PATH="$1/lib/pkgconfig" sh -c \
        'cc -o "$1" "$2" $(pkg-config --cflags --libs amq)' sh "$2" \
        "$SRC/tests/install/consumer/main.c"
}
check "build with pkg-config" pc_build "$P" "$T/pc-app"
check "pkg-config program runs without LD_LIBRARY_PATH" "$T/pc-app" "$T/a.amq"
check "it uses the installed library" sh -c "ldd '$T/pc-app' | grep -q '$P/lib'"
mv "$P" "$T/moved"
check "pkg-config resolves the moved prefix" sh -c \
    "PKG_CONFIG_PATH='$T/moved/lib/pkgconfig' pkg-config --cflags amq | grep -q '$T/moved/lib/pkgconfig/../../include'"
check "build against the moved prefix" pc_build "$T/moved" "$T/pc-app2"
check "moved-prefix program runs" "$T/pc-app2" "$T/b.amq"
mv "$T/moved" "$P"

# find_package from a throwaway project.
check "configure a find_package(amq) project" cmake -S "$SRC/tests/install/consumer" \
    -B "$T/consumer" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release
check "build it" cmake --build "$T/consumer"
check "amq::amq program runs" "$T/consumer/consumer_shared" "$T/c.amq"
check "amq::amq_static program runs" "$T/consumer/consumer_static" "$T/d.amq"
check "amq::amq_static needs no libamq.so" sh -c "! ldd '$T/consumer/consumer_static' | grep -q libamq"

# uninstall removes every file it installed.
check "uninstall" cmake -DMANIFEST="$T/manifest.test" -P "$SRC/cmake/uninstall.cmake"
check "nothing left in the prefix" sh -c "[ -z \"\$(find '$P' -type f -o -type l)\" ]"
check "amq's own directories removed" sh -c "[ ! -e '$P/include/amq' ] && [ ! -e '$P/lib/cmake/amq' ] && [ ! -e '$P/lib/amq' ]"

if [ -e "$T/manifest.user" ]; then cp -p "$T/manifest.user" "$manifest"; else rm -f "$manifest"; fi
rm -rf "$T"
echo "test_install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
