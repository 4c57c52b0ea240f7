#!/usr/bin/env python3
"""What `meson install` gives a user, checked in a temporary root (meson install --destdir):

- the README's "Use it from C" example builds against the installed tree with
  `pkg-config --cflags --libs gpusort`, runs, and prints what the README says;
- each public header compiles alone, and with every _INIT macro in use, as C11 and as C++, with
  -Wall -Wextra -Werror -pedantic;
- the shared library has a versioned SONAME and exports only gpusort_* symbols, and the static
  library, the pkg-config file and the man pages gpusort(1) and gpusort(3) are installed;
- the installed gpusort executable does not need the shared library (one self-contained file);
- the Python module is installed into Debian's python3 site-packages, records the installed
  shared library's path, and runs the README's "Use it from Python" example from there.

usage: test_install.py BUILD_DIR SOURCE_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = SOURCE = ROOT = None


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)


def find(name):
    for d, _, files in os.walk(ROOT):
        if name in files:
            return os.path.join(d, name)
    return None


def readme_example(section_title="## Use it from C", language="c"):
    with open(os.path.join(SOURCE, "README.md")) as f:
        text = f.read()
    section = text.split(section_title, 1)[1]
    return re.search(r"```" + language + r"\n(.*?)```", section, re.S).group(1)


class Installed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        global ROOT
        ROOT = tempfile.mkdtemp(prefix="gpusort-install-")
        p = run(["meson", "install", "-C", BUILD, "--destdir", ROOT, "--no-rebuild", "--quiet"])
        if p.returncode != 0:
            raise RuntimeError("meson install failed: " + p.stdout + p.stderr)
        pc = find("gpusort.pc")
        if not pc:
            raise RuntimeError("no gpusort.pc installed")
        cls.env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pc), PKG_CONFIG_SYSROOT_DIR=ROOT)
        cls.shared = find("libgpusort.so")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(ROOT, ignore_errors=True)

    def pkg_config(self, *what):
        p = run(["pkg-config", *what, "gpusort"], env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.split()

    def test_readme_example_builds_and_runs(self):
        src = os.path.join(ROOT, "example.c")
        with open(src, "w") as f:
            f.write(readme_example())
        exe = os.path.join(ROOT, "example")
        flags = self.pkg_config("--cflags", "--libs")
        p = run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", src, "-o", exe, *flags])
        self.assertEqual(p.returncode, 0, p.stderr)
        libdir = os.path.dirname(self.shared)
        p = run([exe], env=dict(os.environ, LD_LIBRARY_PATH=libdir))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "-2 -0 0.5 0.5 3 7.25\n2 5 0 3 4 1\n")
        # and it ran on the installed shared library, not something else
        p = run(["ldd", exe], env=dict(os.environ, LD_LIBRARY_PATH=libdir))
        self.assertIn(libdir, p.stdout)

    def test_headers_compile_alone_as_c11_and_cxx(self):
        cflags = self.pkg_config("--cflags")
        for header in ["gpusort.h", "gpusort_vulkan.h"]:
            for compiler, std, ext in [("cc", "-std=c11", "c"), ("c++", "-std=c++11", "cpp")]:
                src = os.path.join(ROOT, f"alone.{ext}")
                with open(src, "w") as f:
                    f.write(f"#include <{header}>\nint main(void) {{ return GPUSORT_VERSION_NUMBER > 0 ? 0 : 1; }}\n")
                p = run([compiler, std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", src, "-o",
                         os.path.join(ROOT, "alone.o"), *cflags])
                self.assertEqual(p.returncode, 0, f"{header} as {compiler} {std}:\n{p.stderr}")

    def test_every_initializer_compiles_as_c11_and_cxx(self):
        """The _INIT macros in use, without a warning in either language."""
        body = """#include <gpusort_vulkan.h>
int main(void) {
  gpusort_context_params params = GPUSORT_CONTEXT_PARAMS_INIT;
  gpusort_layout keys = GPUSORT_LAYOUT_KEYS(GPUSORT_U32);
  gpusort_layout pairs = GPUSORT_LAYOUT_PAIRS(GPUSORT_U64, GPUSORT_F32);
  gpusort_layout records = GPUSORT_LAYOUT_RECORDS(GPUSORT_I32, 16, 4);
  const gpusort_key_part parts[] = {{0, GPUSORT_U16BE, 0, GPUSORT_KEY_DESCENDING}, {2, GPUSORT_BYTES, 6, 0}};
  const char *const fields[] = {"price", "name"};
  gpusort_layout strings = GPUSORT_LAYOUT_BYTES(100, 0, 10);
  gpusort_layout composite = GPUSORT_LAYOUT_COMPOSITE(8, 2, parts);
  gpusort_layout npy = GPUSORT_LAYOUT_NPY;
  gpusort_layout named = GPUSORT_LAYOUT_NPY_FIELDS(2, parts, fields);
  gpusort_sort_options sort = GPUSORT_SORT_OPTIONS_INIT;
  gpusort_scan_options scan = GPUSORT_SCAN_OPTIONS_INIT(GPUSORT_F64);
  gpusort_generate_options gen = GPUSORT_GENERATE_OPTIONS_INIT(100);
  gpusort_report report = GPUSORT_REPORT_INIT;
  gpusort_device_info info = GPUSORT_DEVICE_INFO_INIT;
  gpusort_bench_result bench = GPUSORT_BENCH_RESULT_INIT;
  gpusort_bench_scan_result scans = GPUSORT_BENCH_SCAN_RESULT_INIT;
  gpusort_vk_device device = GPUSORT_VK_DEVICE_INIT(VK_NULL_HANDLE, VK_NULL_HANDLE);
  gpusort_vk_sorter_info sorter = GPUSORT_VK_SORTER_INFO_INIT(GPUSORT_U32);
  gpusort_vk_sort_info one = GPUSORT_VK_SORT_INFO_INIT;
  gpusort_vk_scanner_info scanner = GPUSORT_VK_SCANNER_INFO_INIT(&scan);
  gpusort_vk_scan_info scan_info = GPUSORT_VK_SCAN_INFO_INIT;
  gpusort_vk_requirements requirements = GPUSORT_VK_REQUIREMENTS_INIT;
  return params.struct_size + keys.struct_size + pairs.struct_size + records.struct_size + strings.struct_size +
         composite.struct_size + npy.struct_size + named.struct_size + sort.struct_size +
         gen.struct_size + report.struct_size + info.struct_size + bench.struct_size + scans.struct_size +
         device.struct_size + sorter.struct_size + one.struct_size + scanner.struct_size + scan_info.struct_size +
         requirements.struct_size == 0;
}
"""
        cflags = self.pkg_config("--cflags")
        for compiler, std, ext in [("cc", "-std=c11", "c"), ("c++", "-std=c++11", "cpp")]:
            src = os.path.join(ROOT, f"init.{ext}")
            with open(src, "w") as f:
                f.write(body)
            p = run([compiler, std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", src, "-o",
                     os.path.join(ROOT, "init.o"), *cflags])
            self.assertEqual(p.returncode, 0, f"{compiler} {std}:\n{p.stderr}")

    def test_shared_library_exports_only_gpusort_names(self):
        p = run(["nm", "-D", "--defined-only", self.shared])
        self.assertEqual(p.returncode, 0, p.stderr)
        names = [line.split()[-1] for line in p.stdout.splitlines() if line.strip()]
        self.assertIn("gpusort_sort_file", names)
        self.assertIn("gpusort_vk_cmd_sort", names)
        self.assertEqual([n for n in names if not n.startswith("gpusort_")], [])
        p = run(["readelf", "-d", self.shared])
        self.assertRegex(p.stdout, r"SONAME.*\[libgpusort\.so\.\d+\]")

    def test_everything_is_installed(self):
        for name in ["gpusort", "gpusort.h", "gpusort_vulkan.h", "libgpusort.a", "gpusort.pc", "gpusort.1",
                     "gpusort.3"]:
            self.assertIsNotNone(find(name), name)

    def test_python_module_runs_the_readme_example(self):
        init = find("__init__.py")
        self.assertIsNotNone(init, "the Python module gpusort is not installed")
        package = os.path.dirname(init)
        self.assertEqual(os.path.basename(package), "gpusort")
        self.assertIn("-packages", package)
        namespace = {}
        with open(os.path.join(package, "_library.py")) as f:
            exec(f.read(), namespace)
        library = namespace["LIBRARY"]
        # The recorded path is where the shared library lands once the destdir is the root.
        self.assertTrue(os.path.isabs(library), library)
        self.assertTrue(os.path.exists(ROOT + library), library)
        script = os.path.join(ROOT, "example.py")
        output = os.path.join(ROOT, "sorted.bin")
        with open(script, "w") as f:
            f.write(readme_example("## Use it from Python", "python").replace("/tmp/sorted.bin", output))
        env = dict(os.environ, PYTHONPATH=os.path.dirname(package), GPUSORT_LIBRARY=ROOT + library,
                   PYTHONDONTWRITEBYTECODE="1")
        p = run(["/usr/bin/python3", script], env=env, cwd=SOURCE)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[:3], ["[1 3 3 5 9]", "[2 0 1 3 4]", "[ 5  8 17 20 21]"])
        self.assertEqual(lines[3].split()[0], "65536")
        # The file is the input's keys in order, and the reported checksum is xxhsum's.
        with open(os.path.join(SOURCE, "data", "sample-u32.bin"), "rb") as f:
            data = f.read()
        keys = sorted(int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4))
        with open(output, "rb") as f:
            self.assertEqual(f.read(), b"".join(k.to_bytes(4, "little") for k in keys))
        p = run(["xxhsum", "-H3", output])
        self.assertEqual(re.search(r"\b([0-9a-f]{16})\b", p.stdout).group(1), lines[3].split()[1], p.stdout)

    def test_executable_is_self_contained(self):
        p = run(["ldd", find("gpusort")])
        self.assertNotIn("libgpusort", p.stdout)


if __name__ == "__main__":
    BUILD, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
