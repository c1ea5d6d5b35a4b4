"""The option lists agree: for every hearth command, the options its
getopt table takes, the options its --help lists, the options its section
of hearth(1) lists and the options of its table in the README are the
same; for hearthd, the keys config*.c take, the keys --help lists, the
keys of etc/hearthd.conf and of hearthd.conf(5), and hearthd's own flags
in --help and hearthd(8). Every list is read from where it lives, so an
option added anywhere fails this test until it is everywhere.

The Debian packages the build uses (the Makefile's PKGS_BUILD) are the
ones the README names and, but for gcc and make (build-essential), the
Build-Depends of debian/control.

The bash completion (etc/bash-completion/hearth) offers every command,
every option of each, and every hearthd flag, and completes the values
of a few.

Usage: python3 options_agree.py HEARTH HEARTHD (run from the source tree).
Prints one line per command and exits 1 on any disagreement."""
import glob
import os
import re
import subprocess
import sys

HELP_ONLY = {"-h", "--help"}
# An option line of a --help text: indented, then "-x, --long", "--long"
# or "-x"; the tokens are the option's names.
HELP_LINE = re.compile(r"^\s+((?:-[A-Za-z0-9](?:, |$| ))?(?:--[a-z0-9][a-z0-9-]*)?)")
TOKEN = re.compile(r"(?<![\w-])(--?[A-Za-z0-9][A-Za-z0-9-]*)")
problems = []


def help_text(argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        problems.append(f"{' '.join(argv)} exited {r.returncode}")
    return r.stdout


def help_options(text):
    """Names of the options on the option lines of a --help text."""
    out = set()
    for line in text.splitlines():
        m = HELP_LINE.match(line)
        if m and m.group(1).strip():
            out |= set(TOKEN.findall(m.group(1)))
    return out - HELP_ONLY


def deroff(line):
    line = line.replace("\\-", "-")
    line = re.sub(r"\\f[BIRP]", "", line)
    return re.sub(r"^\.[A-Z]+ ?", "", line)


def man_sections(path, level):
    """{title: [lines]} of the .SS (or .SH) sections of a man page."""
    out, title = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith(".SH") or line.startswith(".SS"):
            title = None
            if line.startswith(level):
                title = deroff(line).strip().strip('"')
                out[title] = []
            continue
        if title is not None:
            out[title].append(line)
    return out


def man_tags(lines):
    """Options named in the tags (the line after .TP) of a section."""
    out = set()
    for i, line in enumerate(lines[:-1]):
        if line.strip() == ".TP":
            out |= set(TOKEN.findall(deroff(lines[i + 1])))
    return out


def readme_options(text, cmd):
    """Options in the first column of the table under '## hearth CMD'."""
    m = re.search(rf"^(#+) hearth {cmd}\s*$", text, re.M)
    if not m:
        return None
    body = text[m.end():]
    nxt = re.search(r"^#", body, re.M)
    body = body[: nxt.start()] if nxt else body
    out = set()
    for line in body.splitlines():
        cells = re.split(r"(?<!\\)\|", line)
        if line.startswith("|") and len(cells) > 2 and "`" in cells[1]:
            for code in re.findall(r"`([^`]*)`", cells[1]):
                out |= set(TOKEN.findall(code))
    return out - HELP_ONLY


def getopt_tables():
    """{command: long option names} from the struct option tables in
    cli/CMD.c and cli/CMD_*.c."""
    macros = {}
    cli_h = open("cli/cli.h", encoding="utf-8").read()
    for name, body in re.findall(r"#define (CLI_\w+_OPTIONS)\s*((?:.*\\\n)*.*)", cli_h):
        macros[name] = set(re.findall(r'\{\s*"([a-z0-9-]+)"', body))
    out = {}
    for path in glob.glob("cli/*.c"):
        src = open(path, encoding="utf-8").read()
        cmd = os.path.basename(path)[:-2].split("_")[0]
        for body in re.findall(r"struct option \w+\[\]\s*=\s*\{(.*?)\n\s*\};", src, re.S):
            names = set(re.findall(r'\{\s*"([a-z0-9-]+)"\s*,\s*\w+_argument', body))
            for macro, opts in macros.items():
                if macro in body:
                    names |= opts
            out.setdefault(cmd, set()).update("--" + n for n in names)
    return {c: o - HELP_ONLY for c, o in out.items()}


def compare(what, lists):
    """Reports each option one list has and another lacks."""
    (ref_name, ref), *rest = lists
    for name, opts in rest:
        if opts is None:
            problems.append(f"{what}: {name} has no list of options")
            continue
        for o in sorted(ref - opts):
            problems.append(f"{what}: {o} is in {ref_name} but not in {name}")
        for o in sorted(opts - ref):
            problems.append(f"{what}: {o} is in {name} but not in {ref_name}")


def check_hearth(hearth):
    cmds = re.findall(r"^  ([a-z]+) ", help_text([hearth, "help"]), re.M)
    if len(cmds) < 8:
        problems.append(f"'hearth help' lists {len(cmds)} commands")
    man = man_sections("man/hearth.1", ".SS")
    readme = open("README.md", encoding="utf-8").read()
    tables = getopt_tables()
    for cmd in cmds:
        h = help_options(help_text([hearth, cmd, "--help"]))
        m = man_tags(man[f"hearth {cmd}"]) if f"hearth {cmd}" in man else None
        r = readme_options(readme, cmd)
        src = tables.get(cmd)
        longs = {o for o in h if o.startswith("--")}
        compare(cmd, [("--help", h), ("hearth(1)", m), ("the README", r)])
        compare(cmd, [("--help", longs), ("the getopt table", src)])
        print(f"{cmd}: {len(h)} options: {' '.join(sorted(h))}")


def check_hearthd(hearthd):
    h = help_options(help_text([hearthd, "--help"]))
    own = {"--config", "--verify-store", "--version"}
    keys = {o[2:].replace("-", "_") for o in h - own}
    src = set()
    for path in glob.glob("agent/config*.c"):
        src |= set(re.findall(r'!strcmp\(k, "([a-z0-9_]+)"\)', open(path).read()))
    conf = set(re.findall(r"^([a-z0-9_]+) =", open("etc/hearthd.conf").read(), re.M))
    man5 = set()
    lines = man_sections("man/hearthd.conf.5", ".SH").get("KEYS", [])
    for i, line in enumerate(lines[:-1]):
        if line.strip() == ".TP":
            man5 |= set(re.findall(r"[a-z][a-z0-9_]*", deroff(lines[i + 1]).split(" ")[0]))
    compare("hearthd keys", [("hearthd --help", keys), ("agent/config*.c", src),
                             ("etc/hearthd.conf", conf), ("hearthd.conf(5)", man5)])
    man8 = man_tags(man_sections("man/hearthd.8", ".SH").get("OPTIONS", []))
    man8 = {o for o in man8 if o != "--"}
    compare("hearthd flags", [("hearthd --help", (h & own) | {"--help"}), ("hearthd(8)", man8)])
    print(f"hearthd: {len(keys)} keys: {' '.join(sorted(keys))}")


def complete(hearth, words):
    """What the bash completion offers for the command line WORDS (the last
    one being completed), with HEARTH's folder first on PATH."""
    script = ('. etc/bash-completion/hearth; COMP_WORDS=("$@"); '
              'COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); '
              'case $1 in hearth) _hearth ;; hearthd) _hearthd ;; esac; '
              'printf "%s\\n" "${COMPREPLY[@]}"')
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(hearth)) + ":" + os.environ["PATH"])
    r = subprocess.run(["bash", "-c", script, "complete"] + words, capture_output=True,
                       text=True, env=env)
    if r.returncode != 0 or r.stderr:
        problems.append(f"completing {' '.join(words)!r}: {r.stderr.strip()}")
    return set(r.stdout.split())


def check_completion(hearth, hearthd):
    if os.path.dirname(os.path.abspath(hearth)) != os.path.dirname(os.path.abspath(hearthd)):
        problems.append("hearth and hearthd are in different folders")
    cmds = set(re.findall(r"^  ([a-z]+) ", help_text([hearth, "help"]), re.M))
    compare("completing 'hearth '", [("hearth help", cmds | {"help", "--version"}),
                                     ("the completion", complete(hearth, ["hearth", ""]))])
    for cmd in sorted(cmds):
        longs = {o for o in help_options(help_text([hearth, cmd, "--help"])) if o.startswith("--")}
        compare(f"completing 'hearth {cmd} --'",
                [("--help", longs | {"--help"}), ("the completion", complete(hearth, ["hearth", cmd, "--"]))])
    flags = {o for o in help_options(help_text([hearthd, "--help"])) if o.startswith("--")}
    compare("completing 'hearthd --'", [("hearthd --help", flags | {"--help"}),
                                        ("the completion", complete(hearth, ["hearthd", "--"]))])
    for words, want in ((["hearth", "export", "--unit", ""], {"samples", "nanoseconds", "bytes"}),
                        (["hearth", "record", "--unwind", ""], {"fp", "dwarf", "auto"}),
                        (["hearthd", "--off-cpu", ""], {"yes", "no"}),
                        (["hearth", "record", "-o", "etc/bash-c"], {"etc/bash-completion"}),
                        (["hearth", "record", "-d", ""], set())):
        compare(f"completing {' '.join(words)!r}", [("the values", want),
                                                  ("the completion", complete(hearth, words))])
    if str(os.getpid()) not in complete(hearth, ["hearth", "snapshot", "--pid", str(os.getpid())]):
        problems.append("completing --pid does not offer a running process")
    print(f"completion: {len(cmds)} commands and their options, hearthd's {len(flags)} flags")


def check_packages():
    build = set(subprocess.run(["make", "-s", "--no-print-directory", "print-PKGS_BUILD"],
                               capture_output=True, text=True).stdout.split())
    readme = open("README.md", encoding="utf-8").read()
    m = re.search(r"^- Debian 12 packages to build(.*?)Not root\?", readme, re.M | re.S)
    listed = set(re.findall(r"`([a-z0-9][a-z0-9.+-]*)`", m.group(1))) if m else None
    control = open("debian/control", encoding="utf-8").read()
    bd = re.search(r"^Build-Depends:(.*?)^\S", control, re.M | re.S).group(1)
    deps = {d.split("(")[0].strip() for d in bd.split(",") if d.strip()}
    deps = {d for d in deps if not d.startswith("debhelper") and not d.startswith("dh-")}
    compare("packages", [("the Makefile's PKGS_BUILD", build), ("the README", listed)])
    compare("packages", [("the Makefile's PKGS_BUILD", build - {"gcc", "make"}),
                         ("debian/control", deps)])
    print(f"packages: {len(build)} to build: {' '.join(sorted(build))}")


check_hearth(sys.argv[1])
check_packages()
check_completion(sys.argv[1], sys.argv[2])
check_hearthd(sys.argv[2])
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
