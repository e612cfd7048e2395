#!/usr/bin/env python3
"""The ABI baseline of libtilefoundry.so (docs/c-abi.md, ABI stability).

The public surface of include/tilefoundry/tilefoundry.h is reduced to one
normalized line per exported function, per public type (struct / enum /
typedef, with every field and enum value) and per TF_ macro. abi/baseline.txt
holds that surface as last released, headed by its version.

  abi.py check  HEADER BASELINE          exit 1 unless the header's surface and
                                         version equal the baseline (`make test`)
  abi.py update HEADER BASELINE SYMBOLS  rewrite the baseline and symbols.txt,
                                         refusing unless the version was bumped
                                         as the change requires: anything removed
                                         or changed needs a new major, an
                                         addition a new minor (`make abi-baseline`)
         [--unreleased]                  also accept changes at the same version:
                                         only while that version has never been
                                         committed (several additions assembled
                                         into one new minor)
Struct layout itself (sizes, offsets) is pinned by tests/capi/test_header.cc.
"""
import re
import sys

VERSION_MACROS = ("TF_VERSION_MAJOR", "TF_VERSION_MINOR", "TF_VERSION_PATCH", "TF_ABI_VERSION")


def _strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _norm(s):
    s = re.sub(r"\s+", " ", s).strip()
    return re.sub(r"\s*([(){};,*\[\]])\s*", r"\1", s)


def _enum_lines(line):
    """One line per value of an enum ("enum tf_backend TF_BACKEND_CUDA = 3"):
    a value appended is an addition, not a change of the whole type."""
    m = re.match(r"type typedef enum\s*\w*\{([^}]*)\}(\w+);$", line)
    if not m:
        return [line]
    return ["enum %s %s" % (m.group(2), v) for v in m.group(1).split(",") if v]


def surface(header_text):
    """(version (major, minor), sorted surface lines) of a header's text."""
    text = _strip(header_text)
    macros = dict(re.findall(r"^\s*#\s*define\s+(TF_\w+)\s+(.*?)\s*$", text, flags=re.M))
    version = (int(macros["TF_VERSION_MAJOR"]), int(macros["TF_VERSION_MINOR"]))
    lines = set()
    for name, value in macros.items():
        if name not in VERSION_MACROS and name != "TF_API":
            lines.add("macro %s %s" % (name, _norm(value)))
    body = re.sub(r"^\s*#.*$", " ", text, flags=re.M)  # preprocessor lines are done
    for decl in re.findall(r"TF_API\s+([^;]+);", body):
        lines.add("function " + _norm(decl))
    for decl in re.findall(r"typedef\s+struct[^{;]*\{[^}]*\}\s*\w+\s*;", body):
        lines.add("type " + _norm(decl))
    for decl in re.findall(r"typedef\s+enum[^{;]*\{[^}]*\}\s*\w+\s*;", body):
        lines.update(_enum_lines("type " + _norm(decl)))
    for decl in re.findall(r"typedef\s+struct\s+\w+\s*\*\s*\w+\s*;", body):
        lines.add("type " + _norm(decl))
    return version, sorted(lines)


def functions(lines):
    return sorted(re.search(r"(tf_\w+)\(", l).group(1) for l in lines if l.startswith("function "))


def read_baseline(path):
    with open(path) as f:
        rows = [l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")]
    major, minor = rows[0].split()[1].split(".")
    return (int(major), int(minor)), [e for l in rows[1:] for e in _enum_lines(l)]


def write_baseline(path, version, lines):
    with open(path, "w") as f:
        f.write("# ABI surface of include/tilefoundry/tilefoundry.h; regenerate with `make abi-baseline`.\n")
        f.write("version %d.%d\n" % version)
        f.writelines(l + "\n" for l in lines)


def diff(old, new):
    return sorted(set(old) - set(new)), sorted(set(new) - set(old))


def check(header, baseline):
    version, lines = surface(open(header).read())
    base_version, base_lines = read_baseline(baseline)
    removed, added = diff(base_lines, lines)
    if version == base_version and not removed and not added:
        print("ABI %d.%d: %d entries equal the baseline" % (version + (len(lines),)))
        print("1 passed, 0 failed")
        return 0
    print("the ABI surface of %s differs from %s" % (header, baseline))
    for l in removed:
        print("  - " + l)
    for l in added:
        print("  + " + l)
    print("header version %d.%d, baseline version %d.%d" % (version + base_version))
    print("Bump TF_VERSION_MINOR (additions only) or TF_VERSION_MAJOR (anything removed or "
          "changed) in tilefoundry.h and project(VERSION) in CMakeLists.txt, then run "
          "`make abi-baseline`.")
    print("0 passed, 1 failed")
    return 1


def update(header, baseline, symbols, unreleased=False):
    version, lines = surface(open(header).read())
    base_version, base_lines = read_baseline(baseline)
    removed, added = diff(base_lines, lines)
    refuse = None
    if removed and version[0] <= base_version[0]:
        refuse = "entries removed or changed without a major version bump:"
    elif (removed or added) and version <= base_version:
        refuse = "the ABI changed but the version is still %d.%d:" % version
    if refuse and not (unreleased and version == base_version):
        print("refusing: " + refuse)
        print("\n".join(["  - " + l for l in removed] + ["  + " + l for l in added]))
        return 1
    write_baseline(baseline, version, lines)
    with open(symbols, "w") as f:
        f.writelines(s + "\n" for s in functions(lines))
    print("wrote %s (%d entries, version %d.%d) and %s" % ((baseline, len(lines)) + version + (symbols,)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    if len(sys.argv) in (5, 6) and sys.argv[1] == "update":
        if len(sys.argv) == 6 and sys.argv[5] != "--unreleased":
            sys.exit(__doc__)
        sys.exit(update(*sys.argv[2:5], unreleased=len(sys.argv) == 6))
    sys.exit(__doc__)
