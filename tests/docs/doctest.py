#!/usr/bin/env python3
"""doctest.py — run the examples of README.md and docs/*.md as written.

Every fenced code block names its language, and the language says what
happens to it:

  ```sh        a script, run with `sh -e`; it must exit 0
  ```console   a transcript: "$ command" lines (a trailing backslash
               continues one) run in order, each followed by the output it
               must print (stdout and stderr together). A line "..." matches
               any run of lines, "..." inside a line any text; a command
               with no output lines below it may print anything. A command
               may end in "# exit N" (the status it must return; default 0)
  ```python    a script, run with python3 and the binding on its path
  ```pycon     a ">>> " session, checked by Python's doctest (ELLIPSIS on)
  ```c         a program: compiled against the build tree and run
  ```text      shown, not run: synopses, output without its command, tables
               (and ```cmake, ```json, ```svmlight, ```roff: other
               languages' text)

A block with no language is an error, and so is a command in an indented
code block: a doc cannot hold an example this runner does not see.

Directives, in HTML comments (invisible when rendered):

  <!-- doctest: skip REASON -->     the next block is not run; the run
                                    prints every skip with its reason
  <!-- doctest: exit N -->          the next sh block must exit N
  <!-- doctest: redis -->           (once, anywhere in the file) a
                                    redis-server with the built module runs
                                    on a free loopback port for the file's
                                    blocks; `redis-cli` talks to it, and
                                    REDIS_PORT names its port
  <!-- doctest-setup                shell lines run (sh -e) in the file's
  seq 1 100000 > keys                 directory at that point, for files an
  -->                                 example needs but does not make

Each file runs in a fresh directory holding links to the source tree's
top-level entries (build/ is the build directory), so `build/amq` and
`python/` work as they do from a checkout, and whatever an example writes
stays out of the tree. The Makefile and CMakeLists.txt are left out: an
example cannot rebuild the tree under test (skip `make` examples; CI
builds first). The build directory is first on PATH (`amq` and `amq-lab`
are the tools just built); AMQ_LIBRARY and PYTHONPATH point at the build's library
and the binding.

usage: doctest.py --source DIR --build DIR [--check] [FILE.md ...]
(--check: parse only, run nothing)
Exit status 0 when every block passes, 1 otherwise.
"""

import argparse
import doctest as pydoctest
import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

RUN = {"sh", "console", "python", "pycon", "c"}
TEXT = {"text", "cmake", "json", "svmlight", "roff", "csv", "tsv", "diff"}
COMMANDISH = re.compile(r"^(\$ |amq |amq-lab |make |redis-cli |redis-server |"
                        r"python3 |"
                        r"sh |seq |printf |cmake |AMQ_LIBRARY=|scripts/|"
                        r"tests/|build/|bench/|\./)")
TIMEOUT = 600


class Block:
    def __init__(self, path, line, lang, body, directives):
        self.path, self.line, self.lang, self.body = path, line, lang, body
        self.directives = directives

    def where(self):
        return "%s:%d" % (os.path.relpath(self.path), self.line)


def parse(path):
    """The file's blocks and setups in order; errors for blocks it cannot
    classify."""
    lines = open(path, encoding="utf-8").read().split("\n")
    items, errors, pending = [], [], []
    redis = False
    i = 0
    in_list = False
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^(\s*)(```+|~~~+)\s*([^\s`]*)\s*(.*)$", line)
        if m:
            fence, lang = m.group(2), m.group(3)
            start = i + 1
            i += 1
            body = []
            while i < len(lines) and not lines[i].strip().startswith(fence):
                body.append(lines[i][len(m.group(1)):] if
                            lines[i].startswith(m.group(1)) else lines[i])
                i += 1
            i += 1
            if not lang:
                errors.append("%s:%d: a fenced block without a language "
                              "(text for synopses and output)" %
                              (os.path.relpath(path), start))
            elif lang not in RUN and lang not in TEXT:
                errors.append("%s:%d: unknown block language '%s'" %
                              (os.path.relpath(path), start, lang))
            items.append(Block(path, start, lang, "\n".join(body), pending))
            pending = []
            continue
        d = re.match(r"^<!--\s*doctest:\s*(.*?)\s*-->\s*$", line)
        if d:
            if d.group(1) == "redis":
                redis = True
            else:
                pending.append(d.group(1))
            i += 1
            continue
        if re.match(r"^<!--\s*doctest-setup\s*$", line):
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("-->"):
                body.append(lines[i])
                i += 1
            items.append(Block(path, i, "setup", "\n".join(body), []))
            i += 1
            continue
        # An indented code block (after a blank line, not in a list) that
        # holds a command.
        if line.strip() == "":
            pass
        elif re.match(r"^\s*([-*+]|\d+\.)\s", line):
            in_list = True
        elif not line.startswith(" "):
            in_list = False
        if (line.startswith("    ") and not in_list and i > 0 and
                lines[i - 1].strip() == "" and
                COMMANDISH.match(line.strip())):
            errors.append("%s:%d: a command in an indented block: fence it "
                          "(```sh or ```console) so it runs" %
                          (os.path.relpath(path), i + 1))
        i += 1
    return items, errors, redis


# ---- running ---------------------------------------------------------------------


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Redis:
    """redis-server with the built module on a free port, and a redis-cli
    on PATH that talks to it."""

    def __init__(self, build, work, bindir):
        self.port = free_port()
        module = os.path.join(build, "modules", "redis", "amq-redis.so")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", work,
             "--loadmodule", module],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        real = shutil.which("redis-cli")
        with open(os.path.join(bindir, "redis-cli"), "w") as f:
            f.write('#!/bin/sh\nexec %s -p %d "$@"\n' % (real, self.port))
        os.chmod(os.path.join(bindir, "redis-cli"), 0o755)
        for _ in range(100):
            r = subprocess.run([real, "-p", str(self.port), "ping"],
                               capture_output=True)
            if r.stdout.strip() == b"PONG":
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def line_match(want, got):
    if "..." not in want:
        return want.rstrip() == got.rstrip()
    parts = [re.escape(p) for p in want.rstrip().split("...")]
    return re.fullmatch(".*".join(parts), got.rstrip(), re.S) is not None


def output_match(want, got):
    """want's lines against got's: "..." alone skips any lines."""
    def match(wi, gi):
        if wi == len(want):
            return gi == len(got)
        if want[wi].strip() == "...":
            return any(match(wi + 1, g) for g in range(gi, len(got) + 1))
        return gi < len(got) and line_match(want[wi], got[gi]) and \
            match(wi + 1, gi + 1)
    return match(0, 0)


def console_commands(body):
    """(command, expected exit, expected output lines) of a transcript."""
    out, cmd, lines = [], None, body.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            c = line[2:]
            while c.endswith("\\") and i + 1 < len(lines):
                i += 1
                c = c + "\n" + lines[i]  # sh joins the lines itself
            code = 0
            m = re.search(r"\s#\s*exit\s+(\d+)\s*$", c)
            if m:
                code = int(m.group(1))
                c = c[:m.start()]
            cmd = [c, code, []]
            out.append(cmd)
        elif cmd is not None:
            cmd[2].append(line)
        i += 1
    for c in out:
        while c[2] and c[2][-1].strip() == "":
            c[2].pop()
    return out


class Runner:
    def __init__(self, source, build):
        self.source, self.build = source, build
        self.failures, self.skips, self.ran = [], [], 0

    def fail(self, block, msg):
        self.failures.append("%s: %s" % (block.where(), msg))
        print("FAIL %s: %s" % (block.where(), msg), file=sys.stderr)

    def sh(self, script, cwd, env, timeout=TIMEOUT):
        return subprocess.run(["sh", "-ec", script], cwd=cwd, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout)

    def run_block(self, b, work, env):
        skip = [d for d in b.directives if d.startswith("skip")]
        if skip:
            self.skips.append("%s: %s" % (b.where(), skip[0][4:].strip()))
            return
        want = 0
        for d in b.directives:
            m = re.match(r"exit\s+(\d+)$", d)
            if m:
                want = int(m.group(1))
        self.ran += 1
        if b.lang in ("sh", "setup"):
            r = self.sh(b.body, work, env)
            if r.returncode != want:
                self.fail(b, "exit %d, want %d:\n%s" % (
                    r.returncode, want, r.stdout.decode(errors="replace")[-2000:]))
        elif b.lang == "console":
            for cmd, code, expect in console_commands(b.body):
                r = self.sh(cmd, work, env)
                got = r.stdout.decode(errors="replace").rstrip("\n")
                got_lines = got.split("\n") if got else []
                if r.returncode != code:
                    self.fail(b, "$ %s: exit %d, want %d:\n%s" %
                              (cmd, r.returncode, code, got[-2000:]))
                elif expect and not output_match(expect, got_lines):
                    self.fail(b, "$ %s: output differs:\n--- want\n%s\n--- got"
                              "\n%s" % (cmd, "\n".join(expect), got[-3000:]))
        elif b.lang == "python":
            r = subprocess.run([sys.executable, "-c", b.body], cwd=work,
                               env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=TIMEOUT)
            if r.returncode != want:
                self.fail(b, "exit %d:\n%s" % (r.returncode,
                                               r.stdout.decode()[-2000:]))
        elif b.lang == "pycon":
            script = ("import doctest, sys\n"
                      "t = doctest.DocTestParser().get_doctest(sys.stdin.read(),"
                      " {}, 'doc', 'doc', 0)\n"
                      "r = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS |"
                      " doctest.NORMALIZE_WHITESPACE)\n"
                      "r.run(t)\nsys.exit(1 if r.failures else 0)\n")
            r = subprocess.run([sys.executable, "-c", script], cwd=work,
                               env=env, input=b.body.encode(),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=TIMEOUT)
            if r.returncode != 0:
                self.fail(b, r.stdout.decode()[-3000:])
        elif b.lang == "c":
            src = os.path.join(work, "example-%d.c" % b.line)
            exe = src[:-2]
            open(src, "w").write(b.body + "\n")
            cc = ["cc", "-std=c11", "-Wall", "-Werror", "-o", exe, src,
                  "-I", os.path.join(self.source, "include"),
                  "-I", os.path.join(self.build, "include"),
                  "-L", self.build, "-Wl,-rpath," + self.build, "-lamq"]
            r = subprocess.run(cc, cwd=work, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
            if r.returncode != 0:
                self.fail(b, "does not compile:\n" + r.stdout.decode())
                return
            r = subprocess.run([exe], cwd=work, env=env,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=TIMEOUT)
            if r.returncode != want:
                self.fail(b, "exit %d:\n%s" % (r.returncode, r.stdout.decode()))

    def run_file(self, path):
        blocks, errors, redis = parse(path)
        for e in errors:
            self.failures.append(e)
            print("FAIL", e, file=sys.stderr)
        if not any(b.lang in RUN or b.lang == "setup" for b in blocks):
            return
        work = tempfile.mkdtemp(prefix="amq-doc-")
        bindir = os.path.join(work, ".bin")
        os.makedirs(bindir)
        for name in os.listdir(self.source):
            # No Makefile or CMakeLists.txt: an example must not rebuild or
            # reconfigure the tree under test (build/ is the real one).
            if name in (".git", "build", "Makefile", "CMakeLists.txt") or \
                    name.startswith("build-"):
                continue
            os.symlink(os.path.join(self.source, name),
                       os.path.join(work, name))
        os.symlink(self.build, os.path.join(work, "build"))
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([bindir, self.build, env["PATH"]])
        env["AMQ_LIBRARY"] = os.path.join(self.build, "libamq.so")
        env["PYTHONPATH"] = os.path.join(self.source, "python")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        server = Redis(self.build, work, bindir) if redis else None
        if server:
            env["REDIS_PORT"] = str(server.port)
        try:
            for b in blocks:
                if b.lang in RUN or b.lang == "setup":
                    self.run_block(b, work, env)
        finally:
            if server:
                server.stop()
            shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--check", action="store_true",
                    help="only parse: report unclassified blocks, run nothing")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    source, build = os.path.abspath(a.source), os.path.abspath(a.build)
    files = a.files or [os.path.join(source, "README.md")] + sorted(
        glob.glob(os.path.join(source, "docs", "*.md")))
    r = Runner(source, build)
    for f in files:
        if a.check:
            blocks, errors, _ = parse(os.path.abspath(f))
            r.failures += errors
            for e in errors:
                print("FAIL", e)
            r.ran += sum(b.lang in RUN for b in blocks)
        else:
            r.run_file(os.path.abspath(f))
    for s in r.skips:
        print("skipped %s" % s)
    print("doctest: %d blocks run, %d skipped, %d failed" %
          (r.ran, len(r.skips), len(r.failures)))
    return 1 if r.failures else 0


if __name__ == "__main__":
    sys.exit(main())
