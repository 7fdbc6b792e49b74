# Conan 2 recipe for cputrain, a header-only library (docs/packaging.md):
#   conan create . --build=missing                 package this checkout, then build and run test_package/
#   conan install --requires=cputrain/0.1.0 -g CMakeDeps -g CMakeToolchain
#
# Like the CMake package, it gives a lean cputrain::cputrain (Eigen, oneTBB, nlohmann_json, utf8proc, xxHash, and
# oneDNN or OpenBLAS with their options) and one Conan component per CMake component, each linking the core:
#   cputrain::mpi    (with_mpi, default True)    Boost.MPI and the system MPI (below)
#   cputrain::cli    (with_cli, default True)    Boost.ProgramOptions
#   cputrain::hwloc  (with_hwloc, default True)  hwloc, CPUTRAIN_HAVE_HWLOC=1
#   cputrain::instances (with_instances, default False, needs with_cli) the compiled component: the common models,
#                    trainers and the library's functions prebuilt, a static library for one instruction-set level
#                    (instances_arch, default x86-64-v3: -march=<level>, given to the programs that link it too)
# Boost is required only when with_mpi or with_cli is on. Without with_instances the package is header-only: one
# package id for every setting; with it, a package per compiler, build type and instruction-set level.
#
# oneDNN (with_onednn) is off by default: ConanCenter has no onednn recipe, so the reference resolves only where a
# remote of your own (or the local cache) has one. Without it every matrix product runs on Eigen.
#
# The dependencies are the ones cmake/cputrain-dependencies.cmake finds (tests/packaging/check_recipes.py fails when
# the two lists, or the vcpkg manifests, drift apart), with one exception, MPI: ConanCenter's boost builds Boost.MPI
# only with -o boost/*:without_mpi=False, and then with Boost.Build's `using mpi ;`, which takes the MPI compiler
# wrapper (mpicxx) found on the build machine; the recipe requires no MPI package. Boost.MPI and cputrain must use
# the same MPI, so cputrain uses that system MPI too (Debian: openmpi-bin libopenmpi-dev) and does not require
# ConanCenter's openmpi: a program linking both would carry two MPI libraries.
import os
import re

from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load, rmdir, save

required_conan_version = ">=2.0"

# Included by the cputrain-config.cmake that CMakeDeps writes (with_mpi only), after it has defined the component
# targets: links the system MPI that ConanCenter's Boost.MPI was built against (see above), found by CMake's own
# FindMPI, to cputrain::mpi alone (cputrain::cputrain needs no MPI).
_MPI_BUILD_MODULE = "lib/cmake/conan-cputrain-system-mpi.cmake"
_MPI_BUILD_MODULE_TEXT = """\
# Written by cputrain's conanfile.py. cputrain::mpi and ConanCenter's Boost.MPI use the system's MPI.
find_package(MPI REQUIRED COMPONENTS CXX)
set_property(TARGET cputrain::mpi APPEND PROPERTY INTERFACE_LINK_LIBRARIES MPI::MPI_CXX)
"""

# CMakeDeps makes the package's own target (cpp_info's cmake_target_name) link every component. It must not be
# cputrain::cputrain, the core component, or the lean core would link MPI, Boost and hwloc (and itself, a cycle).
_ALL_COMPONENTS_TARGET = "cputrain::all"


class CputrainConan(ConanFile):
    name = "cputrain"
    description = "Header-only C++20 library for training BERT-style transformers on CPUs"
    license = "Apache-2.0"
    topics = ("bert", "transformers", "training", "cpu", "numa", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "with_mpi": [True, False],
        "with_cli": [True, False],
        "with_hwloc": [True, False],
        "with_onednn": [True, False],
        "with_openblas": [True, False],
        "with_instances": [True, False],
        "instances_arch": ["ANY"],
    }
    default_options = {
        "with_mpi": True,
        "with_cli": True,
        "with_hwloc": True,
        "with_onednn": False,
        "with_openblas": False,
        "with_instances": False,
        "instances_arch": "x86-64-v3",
        # cputrain's scalable allocator policy links TBB::tbbmalloc; it never replaces malloc (tbbmalloc_proxy).
        "onetbb/*:tbbmalloc": True,
    }
    no_copy_source = True

    def set_version(self):
        # include/cputrain/version.hpp is the one source of the version, as for the CMake package.
        if self.version:
            return
        text = load(self, os.path.join(self.recipe_folder, "include", "cputrain", "version.hpp"))
        parts = []
        for part in ("MAJOR", "MINOR", "PATCH"):
            match = re.search(rf"#define CPUTRAIN_VERSION_{part} ([0-9]+)", text)
            if not match:
                raise ConanInvalidConfiguration(f"include/cputrain/version.hpp defines no CPUTRAIN_VERSION_{part}")
            parts.append(match.group(1))
        self.version = ".".join(parts)

    def export_sources(self):
        for pattern in ("CMakeLists.txt", "LICENSE", "cmake/*", "include/*"):
            copy(self, pattern, self.recipe_folder, self.export_sources_folder)

    def configure(self):
        if self.options.with_instances:
            self.package_type = "static-library"
        else:
            self.options.rm_safe("instances_arch")
        if self.options.with_mpi:
            # Boost.MPI is off in ConanCenter's boost unless asked for (it also needs graph and serialization, on
            # by default there). Without with_mpi, boost (for with_cli) is built without it and needs no MPI.
            self.options["boost"].without_mpi = False
        if self.options.with_openblas:
            # CMake's FindBLAS links a shared libopenblas without knowing its own dependencies.
            self.options["openblas"].shared = True

    def layout(self):
        cmake_layout(self)

    def requirements(self):
        # cputrain's public headers include every dependency's headers, and consumers link their libraries.
        traits = {"transitive_headers": True, "transitive_libs": True}
        self.requires("eigen/[>=3.4.0 <4]", **traits)
        self.requires("onetbb/[>=2021.5.0 <2023]", **traits)
        self.requires("nlohmann_json/[>=3.10.0 <4]", **traits)
        self.requires("utf8proc/[>=2.6.0 <3]", **traits)
        self.requires("xxhash/[>=0.8.1 <0.9]", **traits)
        if self.options.with_mpi or self.options.with_cli:
            self.requires("boost/[>=1.74.0 <2]", **traits)
        if self.options.with_hwloc:
            # The same range as ConanCenter's onetbb (for tbbbind), so one hwloc serves both.
            self.requires("hwloc/[>=2.9.3 <3]", **traits)
        if self.options.with_onednn:
            # oneDNN 2.6 (Debian 12's) and later; the headers support both the 2.x and the 3.x C++ API.
            self.requires("onednn/[>=2.6 <4]", **traits)
        if self.options.with_openblas:
            self.requires("openblas/[>=0.3.20 <1]", **traits)

    def package_id(self):
        # Header-only, the headers are the same for every setting and option; package_info() applies the options.
        # The compiled component depends on all of them (the default package id).
        if not self.options.with_instances:
            self.info.clear()

    def validate(self):
        if self.settings.os != "Linux":
            raise ConanInvalidConfiguration(f"{self.ref} supports Linux only (it reads /sys and uses a system MPI)")
        if self.settings.compiler.get_safe("cppstd"):
            check_min_cppstd(self, 20)
        if self.options.with_instances and not self.options.with_cli:
            raise ConanInvalidConfiguration(f"{self.ref}: with_instances needs with_cli (the compiled component holds "
                                            "the command line's functions too)")
        if not (self.options.with_mpi or self.options.with_cli):
            return
        boost = self.dependencies["boost"].options
        needed = []
        if boost.get_safe("header_only"):
            needed.append("-o boost/*:header_only=False")
        if self.options.with_mpi and boost.get_safe("without_mpi", True):
            needed.append("-o boost/*:without_mpi=False (or -o cputrain/*:with_mpi=False)")
        if self.options.with_cli and boost.get_safe("without_program_options", True):
            needed.append("-o boost/*:without_program_options=False (or -o cputrain/*:with_cli=False)")
        if needed:
            raise ConanInvalidConfiguration(f"{self.ref} needs a boost with the libraries its components link: "
                                            + ", ".join(needed))

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["CPUTRAIN_BUILD_TESTS"] = False
        tc.cache_variables["CPUTRAIN_BUILD_EXAMPLES"] = False
        tc.cache_variables["CPUTRAIN_BUILD_BENCHMARKS"] = False
        tc.cache_variables["CPUTRAIN_INSTALL"] = True
        tc.cache_variables["CPUTRAIN_WITH_MPI"] = bool(self.options.with_mpi)
        tc.cache_variables["CPUTRAIN_WITH_CLI"] = bool(self.options.with_cli)
        tc.cache_variables["CPUTRAIN_WITH_HWLOC"] = "ON" if self.options.with_hwloc else "OFF"
        tc.cache_variables["CPUTRAIN_WITH_ONEDNN"] = "ON" if self.options.with_onednn else "OFF"
        tc.cache_variables["CPUTRAIN_USE_BLAS"] = bool(self.options.with_openblas)
        tc.cache_variables["CPUTRAIN_WITH_INSTANCES"] = bool(self.options.with_instances)
        if self.options.with_instances:
            tc.cache_variables["CPUTRAIN_ARCH_FLAGS"] = f"-march={self.options.instances_arch}"
        if self.options.with_openblas:
            tc.cache_variables["BLA_VENDOR"] = "OpenBLAS"
        tc.generate()
        CMakeDeps(self).generate()

    def build(self):
        # Header-only, nothing to compile: configuring checks that every dependency is found and writes the install
        # rules. The compiled component is built.
        cmake = CMake(self)
        cmake.configure()
        if self.options.with_instances:
            cmake.build()

    def package(self):
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        cmake = CMake(self)
        cmake.install()
        # Consumers get the cputrain-config.cmake CMakeDeps writes from package_info(), not the installed one.
        rmdir(self, os.path.join(self.package_folder, "lib", "cmake"))
        # Whatever the options: package_id() makes one package serve them all, and package_info() declares the
        # module only with with_mpi.
        save(self, os.path.join(self.package_folder, _MPI_BUILD_MODULE), _MPI_BUILD_MODULE_TEXT)

    def package_info(self):
        # The CMake package's names: file cputrain, targets cputrain::cputrain and cputrain::<component>.
        self.cpp_info.set_property("cmake_file_name", "cputrain")
        self.cpp_info.set_property("cmake_target_name", _ALL_COMPONENTS_TARGET)
        if self.options.with_mpi:
            # Read from the package's own cpp_info; the module adds MPI::MPI_CXX to cputrain::mpi only.
            self.cpp_info.set_property("cmake_build_modules", [_MPI_BUILD_MODULE])

        def component(name, target, requires, defines=()):
            comp = self.cpp_info.components[name]
            comp.set_property("cmake_target_name", target)
            comp.bindirs = []
            comp.libdirs = []
            comp.requires = list(requires)
            comp.defines = list(defines)
            return comp

        # cputrain::cputrain, the lean core. All threading goes through oneTBB: Eigen must never start an OpenMP
        # team of its own.
        core = component("core", "cputrain::cputrain",
                         ["eigen::eigen", "onetbb::libtbb", "onetbb::tbbmalloc", "nlohmann_json::nlohmann_json",
                          "utf8proc::utf8proc", "xxhash::xxhash"], ["EIGEN_DONT_PARALLELIZE"])
        if self.options.with_onednn:
            core.requires.append("onednn::onednn")
            core.defines.append("CPUTRAIN_HAVE_ONEDNN=1")
        if self.options.with_openblas:
            core.requires.append("openblas::openblas")
            core.defines.extend(["EIGEN_USE_BLAS", "CPUTRAIN_USE_BLAS=1"])
        if self.settings.os in ("Linux", "FreeBSD"):
            core.system_libs = ["pthread"]

        # The components, each linking the core; MPI::MPI_CXX reaches cputrain::mpi through the build module.
        if self.options.with_mpi:
            component("mpi", "cputrain::mpi", ["core", "boost::mpi"])
        if self.options.with_cli:
            component("cli", "cputrain::cli", ["core", "boost::program_options"])
        if self.options.with_hwloc:
            component("hwloc", "cputrain::hwloc", ["core", "hwloc::hwloc"], ["CPUTRAIN_HAVE_HWLOC=1"])
        if self.options.with_instances:
            # Compiled with the command line and hwloc's macros, so its programs get them too; and with its
            # instruction-set level, so that both sides of a program agree on it.
            needs = ["core"] + [c for c, on in (("cli", self.options.with_cli), ("hwloc", self.options.with_hwloc))
                                if on]
            instances = component("instances", "cputrain::instances", needs,
                                  ["CPUTRAIN_SEPARATE_COMPILATION", "CPUTRAIN_PREBUILT_MODELS"])
            instances.libdirs = ["lib"]
            instances.libs = ["cputrain_instances"]
            instances.cxxflags = [f"-march={self.options.instances_arch}"]
