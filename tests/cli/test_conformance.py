#!/usr/bin/env python3
"""test_conformance.py — every verb of the amq tools held to the same rules.

Walks every verb and subcommand each tool's own overview and usage lines
name (amq, the user's tool, and amq-lab, the experiments), and asserts of
each:

  --help          exit 0, its usage on stdout;
  a bad option    exit 2, "unknown option" with the usage and 'amq help';
  a typo          a near miss of a verb, subcommand or long option gets
                  "did you mean";
  a missing file  exit 2, a message naming the file;
  /dev/full       a command that prints data exits 2 with "write error"
                  when stdout cannot take it;
  --json          every verb that prints data accepts it, and what it
                  prints is JSON (one document, or one per line);
  options         every option its help documents is accepted, and a short
                  letter means the same long option in every verb;
  the dispatcher  lists exactly the subcommands the usage line names;
  completion      bash, zsh and fish scripts complete verbs, subcommands,
                  options and type names;
  examples        `amq help examples` (the man page's EXAMPLES) runs as
                  written;
  the split       amq names exactly the user's verbs, amq-lab the
                  experiments, and each experiment's old amq command line
                  exits 2 naming its amq-lab one.

usage: test_conformance.py path/to/amq path/to/amq-lab [TMPDIR]
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

AMQ = os.path.abspath(sys.argv[1])
LAB = os.path.abspath(sys.argv[2])
TMP = sys.argv[3] if len(sys.argv) > 3 else tempfile.mkdtemp(prefix="amq-conf-")
USER_VERBS = ["build", "query", "add", "remove", "adapt", "merge", "count", "info",
              "recommend", "cascade", "map", "kmer", "shard", "range",
              "clock", "parquet", "lsm", "help"]
LAB_VERBS = ["demo", "clock", "lsm", "cascade", "help"]
failures = []
passed = 0


def check(cond, what):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(tool, *args, stdin=None, stdout=subprocess.PIPE, env=None):
    return subprocess.run([tool, *args], cwd=TMP, input=stdin, stdout=stdout,
                          stderr=subprocess.PIPE, env=env, timeout=300)


def amq(*args, **kw):
    return run(AMQ, *args, **kw)


def name_of(tool):
    return os.path.basename(tool)


def text(r):
    return (r.stdout or b"").decode(errors="replace"), r.stderr.decode(
        errors="replace")


# ---- the fixtures every verb runs on ------------------------------------------

def setup():
    if os.path.isdir(TMP):
        shutil.rmtree(TMP)
    os.makedirs(TMP)
    w = lambda name, data: open(os.path.join(TMP, name), "w").write(data)
    w("keys.txt", "".join("key-%d\n" % i for i in range(2000)))
    w("members.txt", "".join("member-%d.example.org\n" % i
                             for i in range(400)))
    w("others.txt", "".join("other-%d.test\n" % i for i in range(4000)))
    w("pairs.tsv", "".join("k%d\t%d\n" % (i, i % 7 + 1) for i in range(300)))
    w("seq.fa", ">a\nACGTACGTTGCAAGGCTTAACGGTACCAGT\n>b\nTTGGCCAAACGT\n")
    w("kmers.txt", "ACGTA\nTTTTT\n")
    w("runs.csv", "name,keys,lookups\nhot,1000,50\ncold,100000,1\n")
    for args in (["build", "-q", "-o", "f.amq", "keys.txt"],
                 ["build", "-q", "-t", "cms", "-o", "cms.amq", "keys.txt"],
                 ["map", "build", "-q", "--op", "sum", "-o", "m.amq",
                  "pairs.tsv"],
                 ["kmer", "count", "-q", "-k", "5", "-o", "k.amq", "seq.fa"],
                 ["kmer", "index", "-q", "-k", "5", "-o", "idx.amq",
                  "seq.fa"],
                 ["cascade", "train", "-q", "--members", "members.txt",
                  "--nonmembers", "others.txt", "--fpr", "0.05",
                  "--dim-bits", "10", "--learned", "-o", "c.amq"]):
        r = amq(*args)
        if r.returncode != 0:
            sys.exit("setup: amq %s: %s" % (" ".join(args), text(r)[1]))


# ---- what the tool says of itself ----------------------------------------------

def verbs(tool):
    """(verb, [subcommands]) from the overview's usage lines: the word
    after a verb names its subcommands when it is lower-case words joined
    by '|'."""
    out, _ = text(run(tool, "help"))
    found = []
    for line in out.splitlines():
        m = re.match(r"  %s ([a-z]+)(?: (\S+))?" % re.escape(name_of(tool)),
                     line)
        if not m:
            continue
        word = m.group(2) or ""
        subs = word.split("|") \
            if re.fullmatch(r"[a-z][a-z-]*(\|[a-z][a-z-]*)*", word) \
            else []
        found.append((m.group(1), subs))
    return found


def option_lines(tool, verb):
    """(short, long, ARG) of every option line of the verb's help."""
    out, _ = text(run(tool, "help", verb))
    opts = []
    for line in out.splitlines():
        m = re.match(r"\s+(?:(-[A-Za-z]), )?(--[a-z][a-z0-9-]*)(?: ([A-Z]\S*))?",
                     line)
        if m:
            opts.append(m.groups())
    return opts


# A value each documented argument accepts.
VALUE = {"SPEC": "bloom", "E": "0.01", "N": "10", "K": "5", "S": "1",
         "KIND": "xxh3", "FILE": "x.amq", "OUT": "x.amq", "B": "8", "T": "2",
         "L": "3", "C": "bloom", "X": "0.5", "P": "0.5", "M": "64", "H": "4",
         "F": "0.5", "G": "1", "D": "12", "R": "0.5", "W": "uniform",
         "LIST": "10,20", "NAME": "f", "OP": "sum", "SHELL": "bash",
         "DIR": ".", "Y": "1"}


def test_help_and_usage(tool, all_verbs):
    name = name_of(tool)
    for verb, subs in all_verbs:
        r = run(tool, verb, "--help")
        out, _ = text(r)
        check(r.returncode == 0 and ("usage: %s %s" % (name, verb)) in out,
              "%s %s --help: exit %d" % (name, verb, r.returncode))
        for sub in subs:
            r = run(tool, verb, sub, "--help")
            out, err = text(r)
            check(r.returncode == 0 and "usage: %s %s" % (name, verb) in out,
                  "%s %s %s --help: exit %d %s" % (name, verb, sub,
                                                   r.returncode, err))
        head = [verb] + subs[:1]
        r = run(tool, *head, "--no-such-option")
        _, err = text(r)
        check(r.returncode == 2 and "unknown option '--no-such-option'" in err
              and "Try '%s help %s'" % (name, verb) in err,
              "%s %s: a bad option: exit %d, %r" % (name, " ".join(head),
                                                     r.returncode, err))
        if subs:
            r = run(tool, verb)
            _, err = text(r)
            listed = re.search(r"missing subcommand \(([^)]*)\)", err)
            check(r.returncode == 2 and listed is not None and
                  listed.group(1).split(", ") == subs,
                  "%s: the dispatcher's subcommands %r are the usage's %r" %
                  (verb, listed and listed.group(1), subs))
            typo = subs[0][:-1] + "x" if len(subs[0]) > 3 else subs[0] + "x"
            r = run(tool, verb, typo)
            _, err = text(r)
            check(r.returncode == 2 and "did you mean '%s'" % subs[0] in err,
                  "%s %s: no suggestion: %r" % (verb, typo, err))


def test_suggestions():
    for args, want in ((["buidl"], "did you mean 'build'"),
                       (["build", "--tpye", "bloom"], "did you mean --type"),
                       (["build", "-t", "blom", "-o", "x.amq", "keys.txt"],
                        "did you mean 'bloom'"),
                       (["build", "-t", "Bloom", "-o", "x.amq", "keys.txt"],
                        "did you mean 'bloom'"),
                       (["build", "-t", "bloom:kk=3", "-o", "x.amq",
                         "keys.txt"], "did you mean 'k'")):
        r = amq(*args)
        _, err = text(r)
        check(r.returncode == 2 and want in err,
              "amq %s: %r lacks %r" % (" ".join(args), err, want))


def test_options(tools):
    """Documented options are accepted; one meaning per short letter, in
    both tools."""
    letters = {}
    for tool, all_verbs in tools:
        for verb, subs in all_verbs:
            for short, long_, arg in option_lines(tool, verb):
                if short:
                    letters.setdefault(short, set()).add(long_)
                value = [VALUE.get(arg, "1")] if arg else []
                heads = [[verb, s] for s in subs] or [[verb]]
                ok = False
                for head in heads:
                    r = run(tool, *head, long_, *value, "--help")
                    if "unknown option" not in text(r)[1]:
                        ok = True
                        break
                check(ok, "%s %s: documented %s is refused" %
                      (name_of(tool), verb, long_))
    # One meaning a letter; a meaning may have one long name per context
    # (how many keys: a filter's capacity, an LSM tree's or shards' keys).
    same = [{"--capacity", "--keys"}]
    for short, longs in sorted(letters.items()):
        check(len(longs) == 1 or any(longs <= g for g in same),
              "%s means %s" % (short, ", ".join(sorted(longs))))


# Data-printing commands that succeed on the fixtures: (args, stdin).
DATA = [
    (["--version"], None, False),
    (["help"], None, False),
    (["help", "build"], None, False),
    (["help", "types"], None, False),
    (["help", "--man"], None, False),
    (["help", "--completion"], None, False),
    (["info", "f.amq"], None, True),
    (["info", "f.amq", "cms.amq"], None, True),
    (["query", "f.amq", "keys.txt"], None, True),
    (["query", "-c", "f.amq", "keys.txt"], None, True),
    (["query", "--mark", "f.amq", "--key", "key-1", "--key", "x"], None,
     True),
    (["count", "cms.amq", "keys.txt"], None, True),
    (["count", "cms.amq", "keys.txt", "--top", "3"], None, True),
    (["recommend", "-n", "1e6"], None, True),
    (["map", "get", "m.amq", "--key", "k1", "--key", "k2"], None, True),
    (["kmer", "histo", "k.amq"], None, True),
    (["kmer", "dump", "k.amq"], None, True),
    (["kmer", "query", "k.amq", "kmers.txt"], None, True),
    (["kmer", "search", "idx.amq", "seq.fa"], None, True),
    (["cascade", "info", "c.amq"], None, True),
    (["cascade", "query", "c.amq", "members.txt"], None, True),
    (["cascade", "audit", "c.amq", "--members", "members.txt",
      "--nonmembers", "others.txt"], None, True),
    (["shard", "plan", "-t", "bloom", "-e", "0.01", "-n", "100,200"], None,
     True),
    (["shard", "slot", "a", "b"], None, True),
    (["shard", "route", "--shards", "4", "keys.txt"], None, True),
    (["lsm", "plan", "-B", "8"], None, True),
    (["lsm", "plan", "--csv", "runs.csv", "-B", "8"], None, True),
    (["add", "--new", "f.amq", "-o", "g.amq", "--key", "fresh"], None, True),
]
# The same of amq-lab's.
LAB_DATA = [
    (["--version"], None, False),
    (["help"], None, False),
    (["help", "--man"], None, False),
    (["lsm", "simulate", "--law", "loglaw", "--quick"], None, True),
    (["lsm", "simulate", "--law", "frontier", "--quick"], None, True),
    (["clock", "simulate", "--events", "2000"], None, True),
    (["demo", "--n", "2000", "-t", "bloom"], None, False),
]


def parse_json(out):
    """One JSON document, or one per line; False if neither."""
    try:
        json.loads(out)
        return True
    except ValueError:
        pass
    lines = [l for l in out.splitlines() if l.strip()]
    try:
        for l in lines:
            json.loads(l)
        return len(lines) > 0
    except ValueError:
        return False


def test_data_commands(tool, data):
    name = name_of(tool)
    for args, stdin, has_json in data:
        cmd = " ".join([name] + args)
        r = run(tool, *args, stdin=stdin)
        out, err = text(r)
        check(r.returncode in (0, 1) and out,
              "%s: exit %d, %d bytes out, %r" % (cmd, r.returncode, len(out),
                                                err))
        with open("/dev/full", "wb") as full:
            r = run(tool, *args, stdin=stdin, stdout=full)
        _, err = text(r)
        check(r.returncode == 2 and "write error" in err,
              "%s > /dev/full: exit %d, %r" % (cmd, r.returncode, err))
        if not has_json:
            continue
        r = run(tool, *args, "--json", stdin=stdin)
        out, err = text(r)
        check(r.returncode in (0, 1) and parse_json(out),
              "%s --json: exit %d, not JSON: %r %r" %
              (cmd, r.returncode, out[:200], err))
        check(not re.search(r"[:\[,]\s*-?(nan|inf)", out, re.I),
              "%s --json prints a non-finite number" % cmd)


# Commands given a file that does not exist: (args, the name shown).
MISSING = [
    (["build", "-o", "x.amq", "none.txt"], "none.txt"),
    (["query", "none.amq", "--key", "a"], "none.amq"),
    (["query", "f.amq", "none.txt"], "none.txt"),
    (["add", "none.amq", "--key", "a"], "none.amq"),
    (["remove", "none.amq", "--key", "a"], "none.amq"),
    (["merge", "-o", "x.amq", "f.amq", "none.amq"], "none.amq"),
    (["count", "none.amq", "--key", "a"], "none.amq"),
    (["info", "none.amq"], "none.amq"),
    (["map", "build", "-o", "x.amq", "none.tsv"], "none.tsv"),
    (["map", "get", "none.amq", "--key", "a"], "none.amq"),
    (["map", "add", "none.amq", "pairs.tsv"], "none.amq"),
    (["map", "del", "none.amq", "pairs.tsv"], "none.amq"),
    (["map", "merge", "m.amq", "none.amq", "-o", "x.amq"], "none.amq"),
    (["kmer", "count", "-k", "5", "-o", "x.amq", "none.fa"], "none.fa"),
    (["kmer", "query", "none.amq"], "none.amq"),
    (["kmer", "histo", "none.amq"], "none.amq"),
    (["kmer", "dump", "none.amq"], "none.amq"),
    (["kmer", "index", "-k", "5", "-o", "x.amq", "none.fa"], "none.fa"),
    (["kmer", "search", "none.amq", "seq.fa"], "none.amq"),
    (["cascade", "train", "--members", "none.txt", "--nonmembers",
      "others.txt", "--fpr", "0.05", "-o", "x.amq"], "none.txt"),
    (["cascade", "query", "none.amq"], "none.amq"),
    (["cascade", "info", "none.amq"], "none.amq"),
    (["cascade", "audit", "none.amq", "--members", "members.txt",
      "--nonmembers", "others.txt"], "none.amq"),
    (["cascade", "features", "none.txt"], "none.txt"),
    (["shard", "route", "--shards", "2", "none.txt"], "none.txt"),
    (["lsm", "plan", "--csv", "none.csv", "-B", "8"], "none.csv"),
]


def test_missing_files():
    for args, name in MISSING:
        r = amq(*args, stdin=b"")
        _, err = text(r)
        check(r.returncode == 2 and name in err,
              "amq %s: exit %d, %r" % (" ".join(args), r.returncode, err))
        check(not os.path.exists(os.path.join(TMP, "x.amq")),
              "amq %s wrote x.amq" % " ".join(args))


def test_wrong_kind_of_file():
    for args in (["info", "c.amq"], ["query", "c.amq", "--key", "a"],
                 ["map", "get", "c.amq", "--key", "a"]):
        r = amq(*args)
        _, err = text(r)
        check(r.returncode == 2 and "learned cascade" in err and
              "amq cascade" in err,
              "amq %s on a cascade: %r" % (" ".join(args), err))
    for t in ("vqf", "prefix", "morton", "scalable", "cqf"):
        amq("build", "-q", "-t", t, "-o", "t.amq", "keys.txt")
        r = amq("map", "get", "t.amq", "--key", "a")
        _, err = text(r)
        check(r.returncode == 2 and "not a maplet" in err,
              "map get on a %s file: exit %d %r" % (t, r.returncode, err))
    r = amq("cascade", "info", "f.amq")  # a filter is a plain cascade
    check(r.returncode == 0 and "a plain filter" in text(r)[0],
          "cascade info on a filter: %r" % (text(r),))


def test_completion(tool, cases):
    name = name_of(tool)
    fn = "_" + name.replace("-", "_")
    verbs_subs = dict(verbs(tool))
    bash = run(tool, "help", "--completion", "bash").stdout.decode()
    zsh = run(tool, "help", "--completion", "zsh").stdout.decode()
    fish = run(tool, "help", "--completion", "fish").stdout.decode()
    open(os.path.join(TMP, "c.bash"), "w").write(bash)
    open(os.path.join(TMP, "c.zsh"), "w").write(zsh)
    open(os.path.join(TMP, "c.fish"), "w").write(fish)
    for words, want in cases:
        words = [name] + words
        script = ('source ./c.bash; COMP_WORDS=(%s); COMP_CWORD=%d; %s; '
                  'printf "%%s\\n" "${COMPREPLY[@]}"' %
                  (" ".join(words), len(words) - 1, fn))
        r = subprocess.run(["bash", "-c", script], cwd=TMP,
                           capture_output=True, timeout=60)
        check(want in r.stdout.decode().split(),
              "bash completes %r to %r, got %r" % (words, want, r.stdout))
        if shutil.which("zsh"):
            stub = ('compadd() { if [[ $1 == -a ]]; then print -rl -- '
                    '${(P)2}; else [[ $1 == -- ]] && shift; print -rl -- "$@";'
                    ' fi }; _files() { :; }; words=(%s); CURRENT=%d; '
                    'PREFIX=%s; source ./c.zsh' %
                    (" ".join(words), len(words), words[-1]))
            r = subprocess.run(["zsh", "-f", "-c", stub], cwd=TMP,
                               capture_output=True, timeout=60)
            got = [w for w in r.stdout.decode().split()
                   if w.startswith(words[-1])]
            check(want in got, "zsh completes %r to %r, got %r %r" %
                  (words, want, got, r.stderr))
        if shutil.which("fish"):
            line = " ".join(words)
            r = subprocess.run(["fish", "-c", "source ./c.fish; complete -C "
                                "'%s'" % line], cwd=TMP,
                               capture_output=True, timeout=60)
            got = [l.split("\t")[0] for l in r.stdout.decode().splitlines()]
            check(want in got, "fish completes %r to %r, got %r" %
                  (words, want, got))
    check(all(v in bash for v in verbs_subs), "bash names every verb of %s"
          % name)


AMQ_COMPLETIONS = [(["bui"], "build"), (["cascade", "tr"], "train"),
                   (["build", "--ty"], "--type"),
                   (["build", "-t", "blo"], "blocked"),
                   (["kmer", "h"], "histo"), (["lsm", "p"], "plan"),
                   (["help", "ty"], "types")]
LAB_COMPLETIONS = [(["cl"], "clock"), (["clock", "si"], "simulate"),
                   (["lsm", "si"], "simulate"), (["cascade", "e"], "eval"),
                   (["demo", "--ty"], "--type"),
                   (["demo", "-t", "blo"], "blocked"),
                   (["help", "de"], "demo")]


def test_split(amq_verbs, lab_verbs):
    """amq holds the user's verbs, amq-lab the experiments; the old amq
    command lines of the experiments point at their amq-lab ones."""
    check([v for v, _ in amq_verbs] == USER_VERBS,
          "amq names the user's verbs: %r" % [v for v, _ in amq_verbs])
    check([v for v, _ in lab_verbs] == LAB_VERBS,
          "amq-lab names the experiments: %r" % [v for v, _ in lab_verbs])
    for words in (["demo", "-n", "100"], ["clock", "simulate"],
                  ["clock", "eval", "--quick"], ["lsm", "simulate"],
                  ["cascade", "eval"]):
        r = amq(*words)
        out, err = text(r)
        check(r.returncode == 2 and not out and
              "moved to amq-lab: amq-lab %s" % " ".join(words) in err,
              "amq %s: exit %d, %r" % (" ".join(words), r.returncode, err))
        head = [w for w in words[:2] if not w.startswith("-")]
        r = run(LAB, *head, "--help")
        check(r.returncode == 0, "amq-lab %s --help: exit %d" %
              (" ".join(head), r.returncode))


def test_examples():
    out, _ = text(amq("help", "examples"))
    man, _ = text(amq("help", "--man"))
    check(".SH EXAMPLES" in man, "the man page has EXAMPLES")
    d = os.path.join(TMP, "examples")
    os.makedirs(d)
    env = dict(os.environ, PATH=os.path.dirname(AMQ) + os.pathsep +
               os.environ.get("PATH", ""))
    for line in out.splitlines():
        cmd = line.strip()
        if not cmd:
            continue
        r = subprocess.run(["sh", "-c", cmd], cwd=d, capture_output=True,
                           env=env, timeout=300)
        check(r.returncode == 0, "example %r: exit %d %r" %
              (cmd, r.returncode, r.stderr.decode()[-300:]))
        check(cmd.replace("\\\\", "\\") in man.replace("\\-", "-")
              .replace("\\e", "\\"), "the man page shows %r" % cmd)


def main():
    setup()
    amq_verbs, lab_verbs = verbs(AMQ), verbs(LAB)
    test_split(amq_verbs, lab_verbs)
    test_help_and_usage(AMQ, amq_verbs)
    test_help_and_usage(LAB, lab_verbs)
    test_suggestions()
    test_options([(AMQ, amq_verbs), (LAB, lab_verbs)])
    test_data_commands(AMQ, DATA)
    test_data_commands(LAB, LAB_DATA)
    test_missing_files()
    test_wrong_kind_of_file()
    test_completion(AMQ, AMQ_COMPLETIONS)
    test_completion(LAB, LAB_COMPLETIONS)
    test_examples()
    print("test_conformance: %d passed, %d failed" % (passed, len(failures)))
    shutil.rmtree(TMP, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
