#!/usr/bin/env python3
"""--help, the man page and the README must describe the same options and exit codes; the
library's man page gpusort(3) every public function, status code, flag and struct; the README
every environment knob the library reads; the header the version --version prints; and every
pointer into the tuning record (doc/tuning.md) one of its headings.

usage: test_docs.py GPUSORT SOURCE_ROOT
"""
import os
import re
import subprocess
import sys


def main():
    gpusort, root = sys.argv[1], sys.argv[2]
    help_text = subprocess.run([gpusort, "--help"], capture_output=True, check=True, text=True).stdout
    man = open(os.path.join(root, "man", "gpusort.1")).read()
    man = re.sub(r"\\f[BIRP]", "", man).replace("\\-", "-")  # roff fonts and hyphens to text
    readme = open(os.path.join(root, "README.md")).read()
    failures = []

    longs = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", help_text))
    shorts = set(re.findall(r"(?m)^\s+(-[a-zA-Z])[ ,]", help_text))
    commands = {"sort", "check", "scan", "reduce", "select", "partition", "unique", "rle", "reduce-by-key", "gen",
                "bench", "devices"}
    if len(longs) < 12 or len(shorts) < 6:
        failures.append(f"could not read the options from --help: {sorted(longs)} {sorted(shorts)}")
    for name, text in [("man page", man), ("README", readme)]:
        for opt in sorted(longs | shorts):
            if not re.search(r"(?<![\w-])" + re.escape(opt) + r"(?![\w-])", text):
                failures.append(f"{opt} is in --help but not in the {name}")
        for cmd in sorted(commands):
            if (f"gpusort {cmd}" not in text and f"`{cmd}`" not in text
                    and not re.search(rf"(?m)^\.B {cmd}\s*$", text)):
                failures.append(f"command {cmd} is not in the {name}")
        if "XXH3 (" not in text or "xxhsum -c" not in text:
            failures.append(f"the checksum line is not described in the {name}")
    # Every long option the man page or README documents must exist.
    for name, text in [("man page", man), ("README", readme)]:
        for opt in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", text)) - longs):
            if opt not in ("--print-errorlogs", "--tag", "--reconfigure", "--cflags", "--libs", "--destdir"):
                failures.append(f"{opt} is in the {name} but not in --help")

    # Exit codes: each of 0..3 with the same key words everywhere.
    words = {0: ["success"], 1: ["runtime", "--timeout"], 2: ["usage", "whole number"],
             3: ["verif", "check"]}
    help_codes = dict(re.findall(r"(?m)^\s+([0-3])\s+(.*(?:\n\s{5,}.*)*)", help_text.split("Exit status:")[1]))
    man_codes = dict(re.findall(r"(?m)^\.B ([0-3])\n((?:(?!\.TP|\.PP|\.SH).*\n)*)", man.split(".SH EXIT STATUS")[1]))
    readme_codes = dict(re.findall(r"(?m)^\| ([0-3]) \| (.*) \|$", readme))
    for name, codes in [("--help", help_codes), ("man page", man_codes), ("README", readme_codes)]:
        for code, needed in words.items():
            text = " ".join(codes.get(str(code), "").split()).lower()
            if not text:
                failures.append(f"exit status {code} is missing from the {name}")
            for w in needed:
                if w.lower() not in text:
                    failures.append(f"exit status {code} in the {name} does not mention '{w}'")

    failures += library_docs(root, help_text, gpusort)
    failures += tuning_record_pointers(root)

    for f in failures:
        print("FAIL:", f)
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


def library_docs(root, help_text, gpusort):
    """gpusort(3) against the public headers; the README against the knobs; the version."""
    failures = []
    man3 = open(os.path.join(root, "man", "gpusort.3")).read()
    man3 = re.sub(r"\\f[BIRP]", "", man3).replace("\\-", "-")
    headers = ""
    for h in ["gpusort.h", "gpusort_vulkan.h"]:
        with open(os.path.join(root, "include", h)) as f:
            headers += f.read()
    functions = set(re.findall(r"GPUSORT_API\s+[\w\s\*]*?\b(gpusort_\w+)\s*\(", headers))
    constants = set(re.findall(r"\b(GPUSORT_(?:ERROR_\w+|OK|STAGE_\w+|OPEN_\w+|VK_REDUCE|DESCENDING|VERIFY|"
                               r"EXCLUSIVE|DETERMINISTIC|OVERWRITE|SYNC|SCAN_\w+|SUM|MIN|MAX|\w+_INIT)|"
                               r"gpusort_\w+)\b", headers)) - functions
    if len(functions) < 30:
        failures.append(f"could not read the functions from the headers: {sorted(functions)}")
    for name in sorted(functions | constants):
        if name.endswith("_") or name in ("GPUSORT_STAGE_COUNT",):
            continue
        if not re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", man3):
            failures.append(f"{name} is in the public headers but not in gpusort(3)")
    version = re.search(r'#define GPUSORT_VERSION_STRING "([^"]+)"', headers).group(1)
    printed = subprocess.run([gpusort, "--version"], capture_output=True, text=True).stdout.strip()
    if printed != f"gpusort {version}":
        failures.append(f"gpusort --version prints '{printed}', the header says {version}")
    with open(os.path.join(root, "src", "util", "knobs.c")) as f:
        knobs = set(re.findall(r'"(GPUSORT_[A-Z_]+)"', f.read()))
    with open(os.path.join(root, "README.md")) as f:
        readme = f.read()
    man1 = open(os.path.join(root, "man", "gpusort.1")).read()
    man3_environment = man3.split(".SH ENVIRONMENT")[-1].split(".SH ")[0]
    for knob in sorted(knobs):
        if knob not in readme:
            failures.append(f"the environment knob {knob} is not in the README")
        if not re.search(rf"(?m)^\.BR? {knob}\b", man1):
            failures.append(f"the environment knob {knob} is not in gpusort(1)")
        if knob not in man3_environment:
            failures.append(f"the environment knob {knob} is not in gpusort(3)'s ENVIRONMENT")
    return failures


def tuning_record_pointers(root):
    """Every pointer into doc/tuning.md (`doc/tuning.md, "Section"` in a comment or the README)
    names one of its section headings."""
    failures = []
    with open(os.path.join(root, "doc", "tuning.md")) as f:
        headings = set(re.findall(r"(?m)^#+ (.+?)\s*$", f.read()))
    sources = [os.path.join(root, "README.md")]
    for folder in ["src", "shaders", "include"]:
        for parent, _, names in os.walk(os.path.join(root, folder)):
            sources += [os.path.join(parent, n) for n in names if n.endswith((".c", ".h", ".comp", ".glsl"))]
    pointers = 0
    for path in sorted(sources):
        with open(path) as f:
            text = f.read()
        # a title may wrap onto the comment's next line
        text = re.sub(r"\s*\n\s*(?://|\*(?!/))?\s*", " ", text)
        for title in re.findall(r'doc/tuning\.md`?,? \(?"([^"]+)"', text):
            pointers += 1
            if title not in headings:
                failures.append(f"{os.path.relpath(path, root)} points to \"{title}\", not a heading of doc/tuning.md")
    if pointers < 10:
        failures.append(f"found only {pointers} pointers into doc/tuning.md")
    return failures


if __name__ == "__main__":
    sys.exit(main())
