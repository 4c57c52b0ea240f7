#!/usr/bin/env python3
"""--help, the man page and the README must describe the same options and exit codes.

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
    commands = {"sort", "check", "scan", "reduce", "gen", "bench", "devices"}
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
            if opt not in ("--print-errorlogs", "--tag", "--reconfigure"):
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

    for f in failures:
        print("FAIL:", f)
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
