#!/usr/bin/env python3
"""Checks the package recipes without vcpkg or Conan (neither can be installed on the CI machines):

  check_recipes.py vcpkg      --source-dir S --build-dir B --cmake CMAKE --work-dir W
      the root vcpkg.json and the overlay port parse and carry what vcpkg requires (name, a version equal to
      include/cputrain/version.hpp, dependencies naming ports that exist in microsoft/vcpkg, well-formed features),
      the components (mpi, cli, hwloc) are default features, the portfile passes each feature to the CMake option
      that gates the same library, and the port's usage text shows find_package() with and without COMPONENTS and
      names exactly the targets the CMake config can export (cputrain::cputrain and cputrain::<component>), of which
      those the installed tree has are checked against its export files.
  check_recipes.py conanfile  --source-dir S --work-dir W
      conanfile.py and test_package/conanfile.py compile, and conanfile.py, run against the stand-in for Conan in
      conan_stub/, asks for what it should and gives consumers the right CMake names, components (one per CMake
      target: cputrain::cputrain and cputrain::mpi, ::cli, ::hwloc), requirements and defines with its default
      options, with with_openblas=True, with_hwloc=False, with_onednn=True, with_mpi=False, with_cli=False and
      both off (then no boost at all), and refuses a boost that lacks what an enabled component links.
  check_recipes.py agreement  --source-dir S
      the dependencies of cmake/cputrain-dependencies.cmake, vcpkg.json, the port and conanfile.py are the same
      (each mapped to one name per library), each gated the same way (always, a component: mpi, cli, hwloc, or an
      option of the core: oneDNN, BLAS), a component's libraries sit in that component in every recipe, and every
      component target the CMake package can export has a Conan component and is named by the vcpkg usage text.

Standard library only; every failure names the file and what is wrong, and the script exits 1.
"""
import argparse
import importlib.util
import json
import os
import py_compile
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # never leave __pycache__ in the source tree

HERE = os.path.dirname(os.path.abspath(__file__))
PORT_DIR = os.path.join("packaging", "vcpkg", "ports", "cputrain")
TARGET = "cputrain::cputrain"

# Ports looked up in microsoft/vcpkg (ports/<name>/vcpkg.json exists there); a dependency outside this list fails
# the check until someone confirms the port exists and adds it here.
KNOWN_VCPKG_PORTS = {
    "benchmark", "blas", "boost-mpi", "boost-program-options", "catch2", "eigen3", "hwloc", "mpi",
    "nlohmann-json", "onednn", "openblas", "tbb", "utf8proc", "vcpkg-cmake", "vcpkg-cmake-config", "xxhash",
}
# vcpkg features that only the repository's own build uses (tests, benchmarks): not dependencies of the library.
BUILD_ONLY_FEATURES = {"tests", "benchmarks"}

# One name per library, from each ecosystem's names. A name missing here fails the agreement check: add the
# library to every recipe and to these tables together.
CMAKE_NAMES = {"Eigen3": "eigen", "TBB": "tbb", "MPI": "mpi", "nlohmann_json": "nlohmann-json", "BLAS": "blas",
               "utf8proc": "utf8proc", "libutf8proc": "utf8proc", "xxHash": "xxhash", "libxxhash": "xxhash",
               "hwloc": "hwloc", "dnnl": "onednn",
               "Boost:mpi": "boost-mpi", "Boost:program_options": "boost-program-options"}
# The compiler's threads and OpenMP runtime (linked for a static oneDNN) and the pkg-config tool: no package to ship.
CMAKE_TOOLS = {"Threads", "OpenMP", "PkgConfig"}
# Packages looked for only to choose how another library is found, never linked: each is allowed QUIET, under the
# gate of the library it serves. (Debian's dnnl config insists on OpenCL, so dnnl's config is asked for only where
# OpenCL is found.)
CMAKE_PROBES = {"OpenCL": "onednn"}
VCPKG_NAMES = {"eigen3": "eigen", "tbb": "tbb", "mpi": "mpi", "boost-mpi": "boost-mpi",
               "boost-program-options": "boost-program-options", "nlohmann-json": "nlohmann-json",
               "utf8proc": "utf8proc", "xxhash": "xxhash", "hwloc": "hwloc", "onednn": "onednn", "blas": "blas",
               "openblas": "blas"}
VCPKG_HOST_TOOLS = {"vcpkg-cmake", "vcpkg-cmake-config"}
CONAN_NAMES = {"eigen": "eigen", "onetbb": "tbb", "boost::mpi": "boost-mpi",
               "boost::program_options": "boost-program-options", "nlohmann_json": "nlohmann-json",
               "utf8proc": "utf8proc", "xxhash": "xxhash", "hwloc": "hwloc", "onednn": "onednn", "openblas": "blas",
               "MPI": "mpi"}
# Gates: how each ecosystem spells "only with the mpi / cli / hwloc component", "only with oneDNN", "only with BLAS".
# In cmake/cputrain-dependencies.cmake a component's dependencies are the ones its branch of the
# _cputrain_component_dependencies macro finds; the other gates are if()s on the CMake option.
VCPKG_FEATURE_GATES = {"mpi": "mpi", "cli": "cli", "hwloc": "hwloc", "onednn": "onednn", "openblas": "blas",
                       "instances": "instances"}
CMAKE_GATE_VARIABLES = {"CPUTRAIN_WITH_MPI": "mpi", "CPUTRAIN_WITH_CLI": "cli", "CPUTRAIN_WITH_HWLOC": "hwloc",
                        "CPUTRAIN_WITH_INSTANCES": "instances",
                        "CPUTRAIN_WITH_ONEDNN": "onednn", "CPUTRAIN_USE_BLAS": "blas"}
CONAN_OPTION_GATES = {"with_mpi": "mpi", "with_cli": "cli", "with_hwloc": "hwloc", "with_instances": "instances",
                      "with_onednn": "onednn",
                      "with_openblas": "blas"}
# The Conan options' defaults: the components as the CMake build has them (ON, ON, AUTO); oneDNN off because
# ConanCenter has no onednn recipe; OpenBLAS off as CPUTRAIN_USE_BLAS.
CONAN_OPTION_DEFAULTS = {"with_mpi": True, "with_cli": True, "with_hwloc": True, "with_onednn": False,
                         "with_openblas": False, "with_instances": False}
# The Conan options that gate nothing: the compiled component's instruction-set level (-march=<level>).
CONAN_OTHER_OPTIONS = {"instances_arch": "x86-64-v3"}
# The gates that are components of the CMake package (cputrain::<gate>, its own export file); the others are
# options of cputrain::cputrain itself.
COMPONENT_GATES = ("mpi", "cli", "hwloc")
# The compiled component (cputrain::instances, a static library; CMakeLists.txt's CPUTRAIN_INSTALLED_COMPONENTS): no
# dependency of its own, off by default in vcpkg and Conan (the package is header-only unless asked), and it needs
# the cli component (it holds the command line's functions too).
COMPILED_COMPONENTS = ("instances",)
COMPILED_DEFINES = {"CPUTRAIN_SEPARATE_COMPILATION", "CPUTRAIN_PREBUILT_MODELS"}
failures = []


def fail(message):
    failures.append(message)


def finish(what):
    if failures:
        for message in failures:
            print(f"FAIL: {message}")
        print(f"{what}: {len(failures)} problem(s)")
        sys.exit(1)
    print(f"{what}: OK")


def tree_version(source_dir):
    text = open(os.path.join(source_dir, "include", "cputrain", "version.hpp"), encoding="utf-8").read()
    parts = [re.search(rf"#define CPUTRAIN_VERSION_{p} ([0-9]+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: not valid JSON: {e}")
        return None


def dependency_name(entry, where):
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
        return entry["name"]
    fail(f"{where}: a dependency must be a port name or an object with \"name\": {entry!r}")
    return None


# ---------------------------------------------------------------------------------------------------------- vcpkg

def check_vcpkg_manifest(path, version, is_port):
    manifest = load_json(path)
    if manifest is None:
        return None
    name = manifest.get("name")
    if name != "cputrain":
        fail(f"{path}: \"name\" must be \"cputrain\", not {name!r}")
    if name and not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name):
        fail(f"{path}: \"name\" {name!r} is not a valid vcpkg name (lower-case letters, digits, hyphens)")
    version_fields = [f for f in ("version", "version-semver", "version-date", "version-string") if f in manifest]
    if len(version_fields) != 1:
        fail(f"{path}: needs exactly one of version, version-semver, version-date, version-string; has {version_fields}")
    elif manifest[version_fields[0]] != version:
        fail(f"{path}: {version_fields[0]} is {manifest[version_fields[0]]!r} but include/cputrain/version.hpp says {version}")
    if manifest.get("license") != "Apache-2.0":
        fail(f"{path}: \"license\" must be the SPDX id of LICENSE, Apache-2.0")
    if is_port and not manifest.get("description"):
        fail(f"{path}: a port needs a \"description\"")

    features = manifest.get("features", {})
    if not isinstance(features, dict):
        fail(f"{path}: \"features\" must be an object")
        features = {}
    for feature, body in features.items():
        if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", feature):
            fail(f"{path}: feature name {feature!r} is not valid")
        if not isinstance(body, dict) or not body.get("description"):
            fail(f"{path}: feature {feature!r} needs a \"description\"")
    default_names = set()
    for default in manifest.get("default-features", []):
        default_name = default if isinstance(default, str) else default.get("name")
        default_names.add(default_name)
        if default_name not in features:
            fail(f"{path}: default feature {default_name!r} is not one of its features")
    for component in COMPONENT_GATES:
        feature = next(f for f, gate in VCPKG_FEATURE_GATES.items() if gate == component)
        if feature not in features:
            fail(f"{path}: lacks the feature {feature!r} (the component cputrain::{component})")
        elif feature not in default_names:
            fail(f"{path}: feature {feature!r} (cputrain::{component}) must be a default feature: the CMake build "
                 "has the component by default")
    for component in COMPILED_COMPONENTS:
        if component not in features:
            fail(f"{path}: lacks the feature {component!r} (the compiled component cputrain::{component})")
        elif component in default_names:
            fail(f"{path}: feature {component!r} must not be a default feature: the package is header-only unless "
                 "asked for the compiled component")

    all_deps = [(None, d) for d in manifest.get("dependencies", [])]
    for feature, body in features.items():
        all_deps += [(feature, d) for d in (body.get("dependencies", []) if isinstance(body, dict) else [])]
    for feature, entry in all_deps:
        dep = dependency_name(entry, path)
        if dep is None:
            continue
        if dep not in KNOWN_VCPKG_PORTS:
            fail(f"{path}: dependency {dep!r} is not a port this check knows exists in microsoft/vcpkg")
        if dep in VCPKG_HOST_TOOLS and not (isinstance(entry, dict) and entry.get("host") is True):
            fail(f"{path}: {dep} is a build tool: declare it {{\"name\": \"{dep}\", \"host\": true}}")
    openblas = features.get("openblas", {}) if isinstance(features.get("openblas"), dict) else {}
    openblas_deps = {dependency_name(e, path) for e in openblas.get("dependencies", [])}
    if "openblas" in features and not {"blas", "openblas"} <= openblas_deps:
        fail(f"{path}: feature openblas must depend on openblas and on blas (vcpkg's blas port is what serves "
             "find_package(BLAS))")
    if is_port:
        names = {dependency_name(e, path) for _, e in all_deps}
        for tool in sorted(VCPKG_HOST_TOOLS):
            if tool not in names:
                fail(f"{path}: the portfile uses {tool}'s functions, so the port must depend on it (host)")
    else:
        baseline = manifest.get("builtin-baseline")
        if manifest.get("overrides") and not baseline:
            fail(f"{path}: \"overrides\" need a \"builtin-baseline\"")
        if baseline is not None and not re.fullmatch(r"[0-9a-f]{40}", baseline):
            fail(f"{path}: \"builtin-baseline\" must be a full commit id of microsoft/vcpkg")
    return manifest


def installed_targets(cmake, build_dir, work_dir):
    """{export file name: set of targets it defines} of the tree `cmake --install` makes, or None."""
    prefix = os.path.join(work_dir, "prefix")
    result = subprocess.run([cmake, "--install", build_dir, "--prefix", prefix], capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"cmake --install {build_dir} failed:\n{result.stdout}\n{result.stderr}")
        return None
    directory = os.path.join(prefix, "lib", "cmake", "cputrain")
    found = {}
    try:
        names = sorted(os.listdir(directory))
    except OSError as e:
        fail(f"the installed tree lacks {directory}: {e}")
        return None
    for name in names:
        if re.fullmatch(r"cputrain(-\w+)?-targets\.cmake", name):
            text = open(os.path.join(directory, name), encoding="utf-8").read()
            found[name] = set(re.findall(r"add_library\(([A-Za-z0-9_]+::[A-Za-z0-9_]+) ", text))
    if "cputrain-targets.cmake" not in found:
        fail(f"the installed tree lacks {directory}/cputrain-targets.cmake")
    return found


def cmake_components(source_dir):
    """The components the CMake package can export: CMakeLists.txt's list(APPEND CPUTRAIN_COMPONENTS <name>)."""
    path = os.path.join(source_dir, "CMakeLists.txt")
    text = open(path, encoding="utf-8").read()
    components = re.findall(r"list\(APPEND CPUTRAIN_COMPONENTS (\w+)\)", text)
    if not components:
        fail(f"{path}: no list(APPEND CPUTRAIN_COMPONENTS <name>) found (the parser no longer understands the file?)")
    for component in components:
        if component not in COMPONENT_GATES:
            fail(f"{path}: component {component!r} is not in check_recipes.py's tables (COMPONENT_GATES and the "
                 "gate tables): add it to every recipe and there")
    return components


def compiled_components(source_dir):
    """The compiled components the CMake package can export: list(APPEND CPUTRAIN_INSTALLED_COMPONENTS <name>)."""
    path = os.path.join(source_dir, "CMakeLists.txt")
    found = re.findall(r"list\(APPEND CPUTRAIN_INSTALLED_COMPONENTS (\w+)\)", open(path, encoding="utf-8").read())
    if sorted(found) != sorted(COMPILED_COMPONENTS):
        fail(f"{path}: the compiled components are {found}, check_recipes.py knows {list(COMPILED_COMPONENTS)}: add "
             "a new one to every recipe and there")
    return found


def usage_link_targets(usage):
    """Every namespaced target inside the target_link_libraries() calls of the usage text."""
    targets = set()
    for call in re.findall(r"target_link_libraries\(([^)]*)\)", usage):
        targets |= set(re.findall(r"\b([A-Za-z0-9_]+::[A-Za-z0-9_]+)", call))
    return targets


def check_usage_names_components(usage, components):
    """The port's usage text shows the lean target, how to ask for the components, and each component's target."""
    where = f"{PORT_DIR}/usage"
    if "find_package(cputrain CONFIG REQUIRED)" not in usage:
        fail(f"{where}: must show find_package(cputrain CONFIG REQUIRED)")
    asked = set()
    for match in re.findall(r"find_package\(cputrain CONFIG REQUIRED COMPONENTS ([\w ]+)\)", usage):
        asked |= set(match.split())
    for component in components:
        if component not in asked:
            fail(f"{where}: no find_package(cputrain CONFIG REQUIRED COMPONENTS ...) names the component {component}")
    for component in sorted(asked - set(components)):
        fail(f"{where}: asks for the component {component}, which the CMake package does not have")
    expected = {TARGET} | {f"cputrain::{c}" for c in components}
    linked = usage_link_targets(usage)
    for target in sorted(expected - linked):
        fail(f"{where}: no target_link_libraries() names {target}")
    for target in sorted(linked - expected):
        fail(f"{where}: links {target}, which the CMake package does not export")
    return linked


def check_feature_options(portfile, manifest_path):
    """vcpkg_check_features() must turn each feature of the port into the CMake option gating the same library."""
    where = f"{PORT_DIR}/portfile.cmake"
    match = re.search(r"vcpkg_check_features\(OUT_FEATURE_OPTIONS\s+\w+\s+FEATURES\s+([^)]*)\)", portfile)
    if not match:
        fail(f"{where}: lacks vcpkg_check_features(OUT_FEATURE_OPTIONS ... FEATURES ...) for the port's features")
        return
    words = [w for line in match.group(1).splitlines() for w in line.split("#", 1)[0].split()]
    if len(words) % 2:
        fail(f"{where}: vcpkg_check_features() FEATURES must be pairs of feature and CMake variable: {words}")
        return
    passed = dict(zip(words[0::2], words[1::2]))
    manifest = load_json(manifest_path) or {}
    variables = {gate: variable for variable, gate in CMAKE_GATE_VARIABLES.items()}
    for feature in manifest.get("features", {}):
        if feature in BUILD_ONLY_FEATURES or feature not in VCPKG_FEATURE_GATES:
            continue  # vcpkg_dependencies() reports features without a gate
        expected = variables[VCPKG_FEATURE_GATES[feature]]
        if passed.get(feature) != expected:
            fail(f"{where}: feature {feature} must set {expected} (vcpkg_check_features), "
                 f"not {passed.get(feature, 'nothing')}")
    for feature in passed:
        if feature not in manifest.get("features", {}):
            fail(f"{where}: vcpkg_check_features() names {feature!r}, which is not a feature of the port")


def run_vcpkg(args):
    version = tree_version(args.source_dir)
    check_vcpkg_manifest(os.path.join(args.source_dir, "vcpkg.json"), version, is_port=False)
    port_dir = os.path.join(args.source_dir, PORT_DIR)
    check_vcpkg_manifest(os.path.join(port_dir, "vcpkg.json"), version, is_port=True)

    portfile = open(os.path.join(port_dir, "portfile.cmake"), encoding="utf-8").read()
    for needle, why in (("vcpkg_cmake_configure(", "configures with vcpkg-cmake"),
                        ("vcpkg_cmake_install()", "installs"),
                        ("vcpkg_cmake_config_fixup(CONFIG_PATH lib/cmake/cputrain)", "moves the CMake package to share/"),
                        ("vcpkg_install_copyright(FILE_LIST \"${SOURCE_PATH}/LICENSE\")", "installs the copyright"),
                        ("-DCPUTRAIN_BUILD_TESTS=OFF", "builds no tests"),
                        ("-DCPUTRAIN_BUILD_EXAMPLES=OFF", "builds no examples"),
                        ("-DCPUTRAIN_BUILD_BENCHMARKS=OFF", "builds no benchmarks"),
                        ("\"${CMAKE_CURRENT_LIST_DIR}/usage\"", "installs the usage text")):
        if needle not in portfile:
            fail(f"{PORT_DIR}/portfile.cmake: lacks {needle} (the port {why})")
    check_feature_options(portfile, os.path.join(port_dir, "vcpkg.json"))
    match = re.search(r'get_filename_component\(SOURCE_PATH "\$\{CMAKE_CURRENT_LIST_DIR\}/([./]+)" ABSOLUTE\)', portfile)
    if not match or os.path.normpath(os.path.join(port_dir, match.group(1))) != os.path.normpath(args.source_dir):
        fail(f"{PORT_DIR}/portfile.cmake: SOURCE_PATH must lead from the port's folder to the checkout's root")
    if not os.path.exists(os.path.join(args.source_dir, "LICENSE")):
        fail("LICENSE: missing (the port installs it as the copyright)")

    usage = open(os.path.join(port_dir, "usage"), encoding="utf-8").read()
    components = cmake_components(args.source_dir) + compiled_components(args.source_dir)
    usage_targets = check_usage_names_components(usage, components)
    installed = installed_targets(args.cmake, args.build_dir, args.work_dir)
    if installed is not None:
        # The build tree may lack a component whose dependency this machine lacks (hwloc: AUTO); what it has must
        # match the names the usage text gives.
        expected_files = {"cputrain-targets.cmake": {TARGET}}
        expected_files.update({f"cputrain-{c}-targets.cmake": {f"cputrain::{c}"} for c in components})
        for name, exported in sorted(installed.items()):
            if name not in expected_files:
                fail(f"the installed tree has {name}, for no component of CMakeLists.txt")
            elif exported != expected_files[name]:
                fail(f"the installed {name} exports {sorted(exported)}, expected {sorted(expected_files[name])}")
            for target in sorted(exported - usage_targets):
                fail(f"the installed {name} exports {target}, which {PORT_DIR}/usage does not name")
        for component in components:
            if f"cputrain-{component}-targets.cmake" not in installed:
                print(f"note: the build tree {args.build_dir} has no component {component} (its dependency was not "
                      "found there); its usage names are checked against CMakeLists.txt alone")
    finish("vcpkg recipes")


# ----------------------------------------------------------------------------------------------------- conanfile

def load_conanfile(source_dir):
    stub = os.path.join(HERE, "conan_stub")
    sys.path.insert(0, stub)
    for module in [m for m in sys.modules if m == "conan" or m.startswith("conan.")]:
        del sys.modules[module]
    import conan  # noqa: F401  (the stub, first on the path)
    if os.path.dirname(os.path.abspath(conan.__file__)) != os.path.join(stub, "conan"):
        fail(f"imported {conan.__file__} instead of the stub in {stub}")
    spec = importlib.util.spec_from_file_location("cputrain_conanfile", os.path.join(source_dir, "conanfile.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    recipes = [v for v in vars(module).values()
               if isinstance(v, type) and issubclass(v, conan.ConanFile) and v is not conan.ConanFile]
    if len(recipes) != 1:
        fail(f"conanfile.py: expected one ConanFile subclass, found {len(recipes)}")
        return None, module
    return recipes[0], module


GOOD_BOOST = {"header_only": False, "without_mpi": False, "without_program_options": False}
NO_BOOST = object()  # instantiate(boost=NO_BOOST): the graph has no boost (with_mpi and with_cli both off)


def instantiate(recipe, source_dir, options=None, settings=None, boost=None):
    if boost is NO_BOOST:
        dependencies = {}
    else:
        dependencies = {"boost": boost if boost is not None else GOOD_BOOST}
    conanfile = recipe(options=options, settings=settings, dependencies=dependencies, recipe_folder=source_dir)
    conanfile.set_version()
    conanfile.ref = f"{conanfile.name}/{conanfile.version}"
    return conanfile


def effective_options(recipe, options):
    values = {k: v for k, v in recipe.default_options.items() if ":" not in k}
    values.update(options or {})
    return values


def run_recipe(recipe, source_dir, options, label=None):
    """Runs the methods Conan would run for one configuration; returns the instance with what they recorded."""
    values = effective_options(recipe, options)
    # Without a component that links Boost, the graph has no boost: validate() must not look for it.
    boost = None if values.get("with_mpi", True) or values.get("with_cli", True) else NO_BOOST
    conanfile = instantiate(recipe, source_dir, options, boost=boost)
    conanfile.export_sources()
    conanfile.configure()
    conanfile.layout()
    conanfile.requirements()
    conanfile.package_id()
    try:
        conanfile.validate()
    except KeyError as e:
        fail(f"{label or 'conanfile.py'}: validate() looks up the dependency {e}, which this configuration does not "
             "require")
    conanfile.generate()
    conanfile.build()
    conanfile.package()
    conanfile.package_info()
    return conanfile


def requirement_names(conanfile):
    names = {}
    for reference, traits in conanfile.requirements_seen:
        match = re.fullmatch(r"([a-z0-9_.+-]+)/(\[[^\]]+\]|[A-Za-z0-9_.+-]+)", reference)
        if not match:
            fail(f"conanfile.py: {reference!r} is not a Conan reference name/version or name/[range]")
            continue
        names[match.group(1)] = (reference, traits)
    return names


def saved_files(conanfile):
    return {path: content for op, path, *rest in getattr(conanfile, "file_operations", []) if op == "save"
            for content in rest}


def build_modules(conanfile, label="conanfile.py"):
    """{package found: the cputrain targets the module adds to} over the build modules the recipe declares."""
    modules = conanfile.cpp_info.get_property("cmake_build_modules") or []
    saved = saved_files(conanfile)
    found = {}
    for module in modules:
        path = os.path.join(conanfile.package_folder, module)
        if path not in saved:
            fail(f"{label}: package_info() declares the build module {module} but package() does not write it")
            continue
        targets = set(re.findall(r"TARGET (cputrain::\w+)", saved[path]))
        if not targets:
            fail(f"{label}: the build module {module} adds to no cputrain target")
        for package in re.findall(r"find_package\((\w+)", saved[path]):
            found.setdefault(package, set()).update(targets)
    for name, component in conanfile.cpp_info.components.items():
        if component.get_property("cmake_build_modules"):
            fail(f"{label}: component {name!r} declares cmake_build_modules: declare them on self.cpp_info, where "
                 "CMakeDeps reads them")
    return found


def components_by_target(conanfile, label):
    """{cmake_target_name: (component name, component)}; every component must name its target."""
    result = {}
    for name, component in conanfile.cpp_info.components.items():
        target = component.get_property("cmake_target_name")
        if not target:
            fail(f"{label}: component {name!r} sets no cmake_target_name (CMakeDeps would call it cputrain::{name})")
            continue
        if target in result:
            fail(f"{label}: components {result[target][0]!r} and {name!r} both name the target {target}")
        result[target] = (name, component)
    return result


def check_compiled_component(label, name, component, arch):
    """The compiled component's Conan component: the static library, and the instruction-set level it was built
    for given to the programs that link it."""
    if component.libdirs != ["lib"] or component.bindirs or component.libs != ["cputrain_instances"]:
        fail(f"{label}: component {name!r}: libdirs {component.libdirs}, bindirs {component.bindirs}, libs "
             f"{component.libs}, expected ['lib'], [] and ['cputrain_instances']")
    if component.cxxflags != [f"-march={arch}"]:
        fail(f"{label}: component {name!r} gives its programs {component.cxxflags}, expected ['-march={arch}'] (the "
             "level it was compiled for)")


def check_configuration(recipe, source_dir, options, components):
    label = f"conanfile.py with {options or 'default options'}"
    values = effective_options(recipe, options)
    gates = {gate for option, gate in CONAN_OPTION_GATES.items() if values.get(option)}
    conanfile = run_recipe(recipe, source_dir, options, label)
    if conanfile.version != tree_version(source_dir):
        fail(f"{label}: set_version() gives {conanfile.version}, version.hpp says {tree_version(source_dir)}")
    compiled = "instances" in gates
    if getattr(conanfile, "package_type", None) != ("static-library" if compiled else "header-library"):
        fail(f"{label}: package_type must be \"{'static-library' if compiled else 'header-library'}\"")
    if not compiled and not conanfile.info.cleared:
        fail(f"{label}: package_id() must clear the package id (one package for every configuration)")
    if compiled and conanfile.info.cleared:
        fail(f"{label}: with the compiled component the package id must keep the settings and options")
    if getattr(conanfile, "layout_used", None) != "cmake_layout":
        fail(f"{label}: layout() must use cmake_layout")

    exported = [entry[1] for entry in getattr(conanfile, "file_operations", []) if entry[0] == "copy"
                and entry[3] == conanfile.export_sources_folder]
    for needed in ("CMakeLists.txt", "LICENSE", "cmake/*", "include/*"):
        if needed not in exported:
            fail(f"{label}: export_sources() must export {needed}")
    for pattern in exported:
        if not os.path.exists(os.path.join(source_dir, pattern.rstrip("/*"))):
            fail(f"{label}: export_sources() exports {pattern}, which the checkout does not have")

    tc = getattr(conanfile, "toolchain", None)
    if tc is None:
        fail(f"{label}: generate() must write a CMakeToolchain")
    else:
        expected = {"CPUTRAIN_BUILD_TESTS": False, "CPUTRAIN_BUILD_EXAMPLES": False, "CPUTRAIN_BUILD_BENCHMARKS": False,
                    "CPUTRAIN_WITH_MPI": "mpi" in gates, "CPUTRAIN_WITH_CLI": "cli" in gates,
                    "CPUTRAIN_WITH_HWLOC": "ON" if "hwloc" in gates else "OFF",
                    "CPUTRAIN_WITH_ONEDNN": "ON" if "onednn" in gates else "OFF", "CPUTRAIN_USE_BLAS": "blas" in gates,
                    "CPUTRAIN_WITH_INSTANCES": compiled}
        if compiled:
            expected["CPUTRAIN_ARCH_FLAGS"] = f"-march={values.get('instances_arch')}"
        for variable, value in expected.items():
            if tc.cache_variables.get(variable) != value:
                fail(f"{label}: generate() sets {variable}={tc.cache_variables.get(variable)!r}, expected {value!r}")
    if not getattr(conanfile, "cmakedeps_generated", False):
        fail(f"{label}: generate() must write CMakeDeps files (the CMake build finds the dependencies with them)")
    if "install" not in getattr(conanfile, "cmake_steps", []):
        fail(f"{label}: package() must install with CMake")
    if ("build" in getattr(conanfile, "cmake_steps", [])) != compiled:
        fail(f"{label}: build() must build with CMake exactly when there is the compiled component")

    # The package's own cpp_info: names only. With components, CMakeDeps builds its targets from the components, and
    # Conan refuses requires on the package's cpp_info next to components.
    info = conanfile.cpp_info
    component_targets = {TARGET} | {f"cputrain::{c}" for c in components}
    if info.get_property("cmake_file_name") != "cputrain":
        fail(f"{label}: cmake_file_name is {info.get_property('cmake_file_name')!r}, expected 'cputrain'")
    root_target = info.get_property("cmake_target_name") or TARGET  # CMakeDeps' default: cputrain::cputrain
    if root_target in component_targets:
        fail(f"{label}: the package's cmake_target_name is {root_target}: CMakeDeps makes that target link every "
             "component, so it must not be a component's name (the lean cputrain::cputrain would link MPI, Boost and "
             "hwloc, and itself)")
    for field in ("requires", "defines", "system_libs"):
        if getattr(info, field):
            fail(f"{label}: self.cpp_info.{field} is {getattr(info, field)}: with components it belongs to a component")

    by_target = components_by_target(conanfile, label)
    expected_targets = {TARGET} | {f"cputrain::{c}" for c in list(components) + list(COMPILED_COMPONENTS) if c in gates}
    for target in sorted(expected_targets - set(by_target)):
        fail(f"{label}: no component has cmake_target_name {target}")
    for target in sorted(set(by_target) - expected_targets):
        fail(f"{label}: component {by_target[target][0]!r} ({target}) should not exist with these options")
    core_name = by_target.get(TARGET, (None, None))[0]
    for name, component in info.components.items():
        target = component.get_property("cmake_target_name")
        if target in {f"cputrain::{c}" for c in COMPILED_COMPONENTS}:
            check_compiled_component(label, name, component, values.get("instances_arch"))
        elif component.libdirs or component.bindirs:
            fail(f"{label}: component {name!r}: a header-only target has no libdirs or bindirs")
        if component.includedirs != ["include"]:
            fail(f"{label}: component {name!r}: includedirs {component.includedirs}, expected ['include']")
        for entry in component.requires:
            if "::" not in entry and entry not in info.components:
                fail(f"{label}: component {name!r} requires {entry!r}, which is no component of the package")

    # What each target needs, as cmake/cputrain-dependencies.cmake links it.
    expected = {TARGET: ({"eigen::eigen", "onetbb::libtbb", "onetbb::tbbmalloc", "nlohmann_json::nlohmann_json",
                          "utf8proc::utf8proc", "xxhash::xxhash"}, {"EIGEN_DONT_PARALLELIZE"}, ["pthread"])}
    if "onednn" in gates:
        expected[TARGET][0].add("onednn::onednn")
        expected[TARGET][1].add("CPUTRAIN_HAVE_ONEDNN=1")
    if "blas" in gates:
        expected[TARGET][0].add("openblas::openblas")
        expected[TARGET][1].update({"EIGEN_USE_BLAS", "CPUTRAIN_USE_BLAS=1"})
    component_needs = {"mpi": ({"boost::mpi"}, set()), "cli": ({"boost::program_options"}, set()),
                       "hwloc": ({"hwloc::hwloc"}, {"CPUTRAIN_HAVE_HWLOC=1"})}
    for component in components:
        requires, defines = component_needs[component]
        expected[f"cputrain::{component}"] = ({core_name} | requires, defines, [])
    # The compiled component: over the core, the command line and hwloc where the package has it (its macros).
    expected["cputrain::instances"] = ({core_name} | {c for c in ("cli", "hwloc") if c in gates}, COMPILED_DEFINES, [])
    for target, (name, component) in sorted(by_target.items()):
        if target not in expected:
            continue
        requires, defines, system_libs = expected[target]
        if set(component.requires) != requires:
            fail(f"{label}: component {name!r} ({target}) requires {sorted(component.requires)}, expected "
                 f"{sorted(r for r in requires if r)}")
        if set(component.defines) != defines:
            fail(f"{label}: component {name!r} ({target}) defines {sorted(component.defines)}, expected "
                 f"{sorted(defines)}")
        if list(component.system_libs) != system_libs:
            fail(f"{label}: component {name!r} ({target}) system_libs {component.system_libs}, expected {system_libs}")

    required = requirement_names(conanfile)
    # Conan refuses a recipe whose components leave out a direct requirement, or name a package it does not require.
    used = {entry.split("::")[0] for c in info.components.values() for entry in c.requires if "::" in entry}
    if used != set(required):
        fail(f"{label}: requirements() asks for {sorted(required)} but the components use {sorted(used)}")
    for name, (reference, traits) in required.items():
        if not (traits.get("transitive_headers") and traits.get("transitive_libs")):
            fail(f"{label}: {reference} must be transitive_headers and transitive_libs (cputrain's headers include it)")
    if "openmpi" in required:
        fail(f"{label}: requires openmpi, but ConanCenter's Boost.MPI is built against the system MPI")
    if ("boost" in required) != bool(gates & {"mpi", "cli"}):
        fail(f"{label}: requires boost {'without' if 'boost' in required else 'with'} a component that links it "
             "(with_mpi, with_cli)")

    # The system MPI, through the build module: to cputrain::mpi alone, and only when there is one.
    modules = build_modules(conanfile, label)
    module_path = os.path.join(conanfile.package_folder, "lib", "cmake")
    if not any(path.startswith(module_path) and "MPI" in content for path, content in saved_files(conanfile).items()):
        fail(f"{label}: package() must write the MPI build module whatever the options (package_id() makes one "
             "package serve every option)")
    if "mpi" in gates:
        if "MPI" not in modules:
            fail(f"{label}: no build module finds MPI: consumers of cputrain::mpi would not link the MPI that "
                 "Boost.MPI uses")
        elif modules["MPI"] != {"cputrain::mpi"}:
            fail(f"{label}: the MPI build module adds to {sorted(modules['MPI'])}, expected cputrain::mpi alone "
                 "(cputrain::cputrain needs no MPI)")
    elif modules:
        fail(f"{label}: without with_mpi, package_info() must declare no build module (it finds "
             f"{sorted(modules)} for a cputrain::mpi that does not exist)")

    dependency_options = {k: v for k, v in recipe.default_options.items() if ":" in k}
    if "boost/*:without_mpi" in dependency_options:
        fail(f"{label}: default_options must not set boost/*:without_mpi: configure() asks for Boost.MPI only "
             "with with_mpi (Boost.MPI needs a system MPI)")
    boost_without_mpi = conanfile.options["boost"].get_safe("without_mpi")
    if "mpi" in gates and boost_without_mpi is not False:
        fail(f"{label}: with with_mpi, configure() must build Boost.MPI (self.options[\"boost\"].without_mpi = False)")
    if "mpi" not in gates and boost_without_mpi is False:
        fail(f"{label}: without with_mpi, configure() must not ask for Boost.MPI (it needs a system MPI)")
    if dependency_options.get("onetbb/*:tbbmalloc") is not True:
        fail(f"{label}: default_options must build tbbmalloc (\"onetbb/*:tbbmalloc\": True)")
    if "blas" in gates and conanfile.options["openblas"].get_safe("shared") is not True:
        fail(f"{label}: with OpenBLAS, configure() must ask for a shared libopenblas (FindBLAS links it)")
    return conanfile


def expect_invalid(recipe, source_dir, why, **kwargs):
    from conan.errors import ConanInvalidConfiguration
    conanfile = instantiate(recipe, source_dir, **kwargs)
    try:
        conanfile.validate()
    except ConanInvalidConfiguration:
        return
    fail(f"conanfile.py: validate() accepts {why}")


def expect_valid(recipe, source_dir, why, **kwargs):
    from conan.errors import ConanInvalidConfiguration
    conanfile = instantiate(recipe, source_dir, **kwargs)
    try:
        conanfile.validate()
    except ConanInvalidConfiguration as e:
        fail(f"conanfile.py: validate() refuses {why}: {e}")
    except KeyError as e:
        fail(f"conanfile.py: validate() looks up the dependency {e} for {why}")


def run_conanfile(args):
    os.makedirs(args.work_dir, exist_ok=True)
    for relative in ("conanfile.py", os.path.join("test_package", "conanfile.py")):
        try:
            py_compile.compile(os.path.join(args.source_dir, relative), doraise=True,
                               cfile=os.path.join(args.work_dir, relative.replace(os.sep, "_") + "c"))
        except py_compile.PyCompileError as e:
            fail(f"{relative} does not compile: {e.msg}")
    if failures:
        finish("conanfile.py")
    recipe, _ = load_conanfile(args.source_dir)
    if recipe is None:
        finish("conanfile.py")
    if recipe.name != "cputrain":
        fail(f"conanfile.py: name is {recipe.name!r}")
    if recipe.license != "Apache-2.0":
        fail("conanfile.py: license must be Apache-2.0 (LICENSE)")
    if set(recipe.options) != set(CONAN_OPTION_GATES) | set(CONAN_OTHER_OPTIONS):
        fail(f"conanfile.py: options {sorted(recipe.options)}, expected "
             f"{sorted(set(CONAN_OPTION_GATES) | set(CONAN_OTHER_OPTIONS))}")
    for option, default in dict(CONAN_OPTION_DEFAULTS, **CONAN_OTHER_OPTIONS).items():
        value = recipe.default_options.get(option)
        if value != default or type(value) is not type(default):
            fail(f"conanfile.py: default_options[{option!r}] is {recipe.default_options.get(option)!r}, "
                 f"expected {default}")
    components = cmake_components(args.source_dir)

    for options in ({}, {"with_openblas": True}, {"with_hwloc": False}, {"with_onednn": True}, {"with_mpi": False},
                    {"with_cli": False}, {"with_mpi": False, "with_cli": False},
                    {"with_mpi": False, "with_cli": False, "with_hwloc": False}, {"with_instances": True},
                    {"with_instances": True, "with_hwloc": False, "instances_arch": "x86-64-v4"}):
        check_configuration(recipe, args.source_dir, options, components)
    expect_invalid(recipe, args.source_dir, "C++17", settings={"os": "Linux", "compiler.cppstd": "17"})
    expect_invalid(recipe, args.source_dir, "Windows", settings={"os": "Windows"})
    expect_invalid(recipe, args.source_dir, "a boost without Boost.MPI", boost=dict(GOOD_BOOST, without_mpi=True))
    expect_invalid(recipe, args.source_dir, "a boost without Boost.ProgramOptions",
                   boost=dict(GOOD_BOOST, without_program_options=True))
    expect_invalid(recipe, args.source_dir, "a header-only boost", boost=dict(GOOD_BOOST, header_only=True))
    expect_invalid(recipe, args.source_dir, "with_instances without with_cli",
                   options={"with_instances": True, "with_cli": False})
    expect_valid(recipe, args.source_dir, "a boost without Boost.MPI when with_mpi=False",
                 options={"with_mpi": False}, boost=dict(GOOD_BOOST, without_mpi=True))
    expect_valid(recipe, args.source_dir, "a boost without Boost.ProgramOptions when with_cli=False",
                 options={"with_cli": False}, boost=dict(GOOD_BOOST, without_program_options=True))
    expect_valid(recipe, args.source_dir, "a graph without boost when with_mpi=False and with_cli=False",
                 options={"with_mpi": False, "with_cli": False}, boost=NO_BOOST)

    test_package = open(os.path.join(args.source_dir, "test_package", "conanfile.py"), encoding="utf-8").read()
    if "self.tested_reference_str" not in test_package:
        fail("test_package/conanfile.py: must require self.tested_reference_str")
    test_cmake = open(os.path.join(args.source_dir, "test_package", "CMakeLists.txt"), encoding="utf-8").read()
    if not re.search(r"find_package\(cputrain CONFIG REQUIRED\)", test_cmake):
        fail("test_package/CMakeLists.txt: must find_package(cputrain CONFIG REQUIRED)")
    if not re.search(r"target_link_libraries\(test_package PRIVATE cputrain::cputrain\)", test_cmake):
        fail("test_package/CMakeLists.txt: must link cputrain::cputrain")
    finish("conanfile.py")


# ----------------------------------------------------------------------------------------------------- agreement

COMPONENT_BRANCH = re.compile(r'"\$\{_cputrain_component\}"\s+STREQUAL\s+"(\w+)"')
COMPONENT_MACRO = "_cputrain_component_dependencies"
COMPONENT_LINK_FUNCTION = "cputrain_link_component_dependencies"


def cmake_dependencies(source_dir):
    """{library: gate} from cmake/cputrain-dependencies.cmake: gate is 'always', the gate of the if()s' variable,
    or the component whose branch of _cputrain_component_dependencies finds it. Also checks that the branches of
    that macro and of cputrain_link_component_dependencies are the components of CMakeLists.txt."""
    path = os.path.join(source_dir, "cmake", "cputrain-dependencies.cmake")
    result = {}
    # Each entry: [kind ('if' or 'def'), text (the condition, or the macro/function name), in an else() branch].
    stack = []
    branches = {COMPONENT_MACRO: set(), COMPONENT_LINK_FUNCTION: set()}
    for number, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.split("#", 1)[0].strip()
        where = f"{path}:{number}"
        if re.match(r"(if|elseif)\s*\(", line):
            if line.startswith("if"):
                stack.append(["if", line, False])
            elif not stack or stack[-1][0] != "if":
                fail(f"{where}: elseif() outside an if() (the parser no longer understands the file?)")
            else:
                stack[-1][1:] = [line, False]
            definition = next((e[1] for e in reversed(stack) if e[0] == "def"), None)
            match = COMPONENT_BRANCH.search(line)
            if match and definition == COMPONENT_MACRO:
                branches[COMPONENT_MACRO].add(match.group(1))
            match = re.search(r'\bcomponent\s+STREQUAL\s+"(\w+)"', line)
            if match and definition == COMPONENT_LINK_FUNCTION:
                branches[COMPONENT_LINK_FUNCTION].add(match.group(1))
            continue
        if re.match(r"else\s*\(", line):
            if stack and stack[-1][0] == "if":
                stack[-1][2] = True
            continue
        if re.match(r"endif\s*\(", line):
            if not stack or stack.pop()[0] != "if":
                fail(f"{where}: endif() without an if() (the parser no longer understands the file?)")
            continue
        match = re.match(r"(macro|function)\s*\(\s*(\w+)", line)
        if match:
            stack.append(["def", match.group(2), False])
            continue
        if re.match(r"end(macro|function)\s*\(", line):
            if not stack or stack.pop()[0] != "def":
                fail(f"{where}: end of a definition inside an if() (the parser no longer understands the file?)")
            continue

        # The component whose branch this line is in (only inside _cputrain_component_dependencies).
        component = None
        definition = next((e[1] for e in reversed(stack) if e[0] == "def"), None)
        if definition == COMPONENT_MACRO:
            for kind, text, in_else in stack:
                match = COMPONENT_BRANCH.search(text) if kind == "if" and not in_else else None
                if match:
                    component = match.group(1)
        names = []
        match = re.match(r"_cputrain_find_component_package\(\S+\s+(\w+)(.*)\)$", line)
        if match:
            if component is None:
                fail(f"{where}: _cputrain_find_component_package() outside a component's branch of {COMPONENT_MACRO}")
        else:
            match = re.match(r"(?:_cputrain_find_package|find_package)\((\w+)(.*)\)$", line)
            if match and component is not None and line.startswith("_cputrain_find_package("):
                fail(f"{where}: the {component} component's dependency {match.group(1)} must be found by "
                     "_cputrain_find_component_package(), or the package config fails when it is missing instead of "
                     "leaving the component out")
        if match:
            package, rest = match.groups()
            components = re.search(r"COMPONENTS\s+([\w\s]+)", rest)
            if package == "Boost" and components:
                names = [f"Boost:{c}" for c in components.group(1).split()]
            else:
                names = [package]
        match = re.match(r"pkg_check_modules\(\w+(?:\s+[A-Z_]+)*\s+([\w+-]+)", line)
        if match:
            names = [match.group(1)]
        match = re.match(r"find_library\(\w+\s+(?:NAMES\s+)?([\w+-]+)", line)
        if match:
            names = [match.group(1)]
        line_gates = {gate for variable, gate in CMAKE_GATE_VARIABLES.items()
                      if any(kind == "if" and re.search(rf"\b{variable}\b", text) for kind, text, _ in stack)}
        if component is not None:
            line_gates.add(component)
        for name in names:
            if name in CMAKE_TOOLS:
                continue
            if name in CMAKE_PROBES:
                if line_gates != {CMAKE_PROBES[name]} or not re.search(r"\bQUIET\b", line):
                    fail(f"{where}: {name} may only be looked for QUIET under the {CMAKE_PROBES[name]} gate "
                         "(it only chooses how that library is found)")
                continue
            if name not in CMAKE_NAMES:
                fail(f"{where}: {name} is not in check_recipes.py's tables: add it to every recipe and there")
                continue
            if len(line_gates) > 1:
                fail(f"{where}: {name} is found under several gates at once: {sorted(line_gates)}")
                continue
            gate = next(iter(line_gates)) if line_gates else "always"
            if gate in COMPONENT_GATES and component is None and not re.search(r"\bQUIET\b", line):
                fail(f"{where}: {name}, a dependency of the {gate} component, must be found QUIET or by "
                     "_cputrain_find_component_package() (the package config leaves the component out without it)")
            library = CMAKE_NAMES[name]
            if result.setdefault(library, gate) != gate:
                fail(f"{where}: {library} is found under two different conditions ({result[library]} and {gate})")
    if stack:
        fail(f"{path}: {len(stack)} if()/macro()/function() left open (the parser no longer understands the file?)")
    components = cmake_components(source_dir)
    for definition, found in branches.items():
        if found != set(components):
            fail(f"{path}: {definition}() has branches for {sorted(found)}, but CMakeLists.txt's components are "
                 f"{sorted(components)}")
    return result


def vcpkg_dependencies(path):
    manifest = load_json(path)
    result = {}
    if manifest is None:
        return result

    def add(entry, gate):
        name = dependency_name(entry, path)
        if name is None or name in VCPKG_HOST_TOOLS:
            return
        if name not in VCPKG_NAMES:
            fail(f"{path}: {name} is not in check_recipes.py's tables: add it to every recipe and there")
            return
        library = VCPKG_NAMES[name]
        if result.setdefault(library, gate) != gate:
            fail(f"{path}: {name} is both {result[library]} and {gate} ({library} must be one or the other)")

    for entry in manifest.get("dependencies", []):
        add(entry, "always")
    for feature, body in manifest.get("features", {}).items():
        if feature in BUILD_ONLY_FEATURES:
            continue
        if feature not in VCPKG_FEATURE_GATES:
            fail(f"{path}: feature {feature!r} has no counterpart in cmake/cputrain-dependencies.cmake's options")
            continue
        for entry in body.get("dependencies", []):
            add(entry, VCPKG_FEATURE_GATES[feature])
    return result


def conan_libraries(conanfile, label):
    """{library: the cputrain target that gets it} for one configuration of the recipe."""
    found = {}
    for name, component in conanfile.cpp_info.components.items():
        target = component.get_property("cmake_target_name") or f"cputrain::{name}"
        for entry in component.requires:
            if "::" not in entry:
                continue  # another component of cputrain
            key = entry if entry in CONAN_NAMES else entry.split("::")[0]
            if key not in CONAN_NAMES:
                fail(f"{label}: {entry} is not in check_recipes.py's tables: add it to every recipe and there")
                continue
            found.setdefault(CONAN_NAMES[key], set()).add(target)
    for package, targets in build_modules(conanfile, label).items():
        if package not in CONAN_NAMES:
            fail(f"{label}: its build module finds {package}, which is not in check_recipes.py's tables")
            continue
        found.setdefault(CONAN_NAMES[package], set()).update(targets)
    return found


def conan_dependencies(source_dir):
    """{library: gate} from conanfile.py, by turning one option on at a time; a library a component's option adds
    must go to that component's target, and the others to cputrain::cputrain."""
    recipe, _ = load_conanfile(source_dir)
    if recipe is None:
        return {}
    none = {option: False for option in CONAN_OPTION_GATES}
    label = "conanfile.py with every option off"
    base = conan_libraries(run_recipe(recipe, source_dir, none, label), label)
    result = {library: "always" for library in base}
    placement = dict(base)
    for option, gate in CONAN_OPTION_GATES.items():
        if gate in COMPILED_COMPONENTS:
            continue  # no library of its own (check_configuration checks what it requires)
        label = f"conanfile.py with {option}=True alone"
        found = conan_libraries(run_recipe(recipe, source_dir, dict(none, **{option: True}), label), label)
        for library in sorted(set(found) - set(base)):
            result[library] = gate
            placement[library] = found[library]
    for library, gate in sorted(result.items()):
        expected = {f"cputrain::{gate}"} if gate in COMPONENT_GATES else {TARGET}
        if placement[library] != expected:
            fail(f"conanfile.py: {library} ({gate}) goes to {sorted(placement[library])}, expected "
                 f"{sorted(expected)}")
    return result


def check_component_names(source_dir):
    """Every component target the CMake package can export has a Conan component of that name (all options on)
    and is named by the vcpkg usage text."""
    components = cmake_components(source_dir)
    compiled = compiled_components(source_dir)
    targets = {TARGET} | {f"cputrain::{c}" for c in components + compiled}
    recipe, _ = load_conanfile(source_dir)
    if recipe is not None:
        label = "conanfile.py with every option on"
        conanfile = run_recipe(recipe, source_dir, {option: True for option in CONAN_OPTION_GATES}, label)
        conan_targets = set(components_by_target(conanfile, label))
        for target in sorted(targets - conan_targets):
            fail(f"{label}: no component has cmake_target_name {target} (the CMake package exports it)")
        for target in sorted(conan_targets - targets):
            fail(f"{label}: a component has cmake_target_name {target}, which the CMake package does not export")
    usage = open(os.path.join(source_dir, PORT_DIR, "usage"), encoding="utf-8").read()
    check_usage_names_components(usage, components + compiled)


def run_agreement(args):
    lists = {
        "cmake/cputrain-dependencies.cmake": cmake_dependencies(args.source_dir),
        "vcpkg.json": vcpkg_dependencies(os.path.join(args.source_dir, "vcpkg.json")),
        f"{PORT_DIR}/vcpkg.json": vcpkg_dependencies(os.path.join(args.source_dir, PORT_DIR, "vcpkg.json")),
        "conanfile.py": conan_dependencies(args.source_dir),
    }
    reference_name = "cmake/cputrain-dependencies.cmake"
    reference = lists[reference_name]
    if not reference:
        fail(f"{reference_name}: found no dependencies at all (the parser no longer understands the file?)")
    for name, found in lists.items():
        print(f"{name}: " + ", ".join(f"{lib}({gate})" for lib, gate in sorted(found.items())))
    libraries = set().union(*lists.values())
    for library in sorted(libraries):
        gates = {name: found.get(library, "missing") for name, found in lists.items()}
        if len(set(gates.values())) != 1:
            fail(f"{library}: " + "; ".join(f"{name}: {gate}" for name, gate in gates.items()))
    for gate in COMPONENT_GATES:
        if gate not in reference.values():
            fail(f"{reference_name}: no dependency of the {gate} component found (the parser no longer understands "
                 "the file?)")
    check_component_names(args.source_dir)
    finish("dependency lists")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("check", choices=("vcpkg", "conanfile", "agreement"))
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--build-dir")
    parser.add_argument("--cmake")
    parser.add_argument("--work-dir")
    args = parser.parse_args()
    args.source_dir = os.path.abspath(args.source_dir)
    if args.check == "vcpkg":
        if not (args.build_dir and args.cmake and args.work_dir):
            parser.error("vcpkg needs --build-dir, --cmake and --work-dir")
        run_vcpkg(args)
    elif args.check == "conanfile":
        if not args.work_dir:
            parser.error("conanfile needs --work-dir")
        run_conanfile(args)
    else:
        run_agreement(args)


if __name__ == "__main__":
    main()
