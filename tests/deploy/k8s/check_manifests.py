#!/usr/bin/python3
"""Checks the Kubernetes manifests of deploy/k8s: the schema of the fields they use, then the rules a schema
cannot state.

    check_manifests.py [options] PATH...        files or directories of manifests as committed
    check_manifests.py [options] --render DIR   a kustomization rendered by `kubectl kustomize DIR`
    check_manifests.py [options] --mutate FIX   a committed manifest with a fixture's JSON patch applied
                                                (tests/deploy/k8s/broken: each must be rejected)

Prints one "error: ..." line per problem and exits 1 if there is any, else prints "ok: ..." and exits 0. With
--render and no kubectl it prints "SKIPPED: ..." and exits 77 (CTest's skip code).

Run it with Debian's /usr/bin/python3 (python3-yaml, python3-jsonschema).
"""

import argparse
import copy
import fractions
import os
import re
import shutil
import subprocess
import sys

try:
    import jsonschema
    import yaml
except ImportError as e:  # say which package, not just the module
    sys.exit(f"error: {e.name} is missing: install the Debian packages python3-yaml and python3-jsonschema "
             f"and run this with /usr/bin/python3")

SKIP = 77

# What the image (deploy/docker/Dockerfile) and the rest of the deployment agree on.
USER_ID = 1000
SSH_DIR = "/home/cputrain/.ssh"
WORKSPACE = "/workspace"
SHM = "/dev/shm"
MAX_BACKOFF_LIMIT = 10
NODE_ANNOTATIONS = ("sockets", "cores-per-socket", "threads-per-core", "memory")
# mpirun options that fix the number of ranks: the operator's hostfile gives one rank per slot.
RANK_COUNT_OPTIONS = {"-n", "-np", "--np", "--n", "-c", "-N", "--npernode", "-npernode", "--npersocket",
                      "-npersocket"}
# Seconds left, beside a save judged to fit in --termination_grace_period, for the step the ranks are in when
# their SIGTERM comes: the two must end before mpirun's SIGKILL.
STEP_ROOM = 30
# The ranks' process name (the image's bin/run_qa execs libexec/cputrain/<level>/run_qa).
RANK_PROCESS = "run_qa"
# run_qa flags that name files or directories: the ranks run on the workers, which see the volume only.
PATH_FLAGS = ("--model_name_or_path", "--config_name", "--tokenizer_name", "--train_file", "--validation_file",
              "--test_file", "--output_dir")


# --- small helpers ------------------------------------------------------------------------------------------

_QUANTITY = re.compile(r"^\+?((?:\d+(?:\.\d*)?)|(?:\.\d+))(?:([KMGTPE]i)|([numkMGTPE])|[eE]([+-]?\d+))?$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": fractions.Fraction(1, 10**9), "u": fractions.Fraction(1, 10**6), "m": fractions.Fraction(1, 1000),
            "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


def quantity(value):
    """A Kubernetes resource quantity as an exact fraction, or None if it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return fractions.Fraction(value)
    if not isinstance(value, str):
        return None
    m = _QUANTITY.match(value)
    if not m:
        return None
    number = fractions.Fraction(m.group(1))
    if m.group(2):
        return number * _BINARY[m.group(2)]
    if m.group(3):
        return number * _DECIMAL[m.group(3)]
    if m.group(4):
        return number * fractions.Fraction(10) ** int(m.group(4))
    return number


def project_version(header):
    parts = {}
    with open(header, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#define CPUTRAIN_VERSION_(MAJOR|MINOR|PATCH) (\d+)", line)
            if m:
                parts[m.group(1)] = m.group(2)
    if len(parts) != 3:
        sys.exit(f"error: {header}: no CPUTRAIN_VERSION_MAJOR/MINOR/PATCH")
    return f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}"


def json_pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError(f"JSON pointer {path!r} does not start with /")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def apply_json_patch(doc, ops):
    """RFC 6902 add, remove, replace and test: enough for the fixtures (and what kustomize's patches use)."""
    doc = copy.deepcopy(doc)
    for op in ops:
        keys = json_pointer(op["path"])
        parent = doc
        for k in keys[:-1]:
            parent = parent[int(k)] if isinstance(parent, list) else parent[k]
        last = keys[-1]
        kind = op["op"]
        if isinstance(parent, list):
            index = len(parent) if last == "-" else int(last)
            if kind == "add":
                parent.insert(index, op["value"])
            elif kind == "replace":
                parent[index] = op["value"]
            elif kind == "remove":
                del parent[index]
            elif kind == "test" and parent[index] != op["value"]:
                raise ValueError(f"test failed at {op['path']}: {parent[index]!r} != {op['value']!r}")
        else:
            if kind in ("add", "replace"):
                if kind == "replace" and last not in parent:
                    raise ValueError(f"replace: nothing at {op['path']}")
                parent[last] = op["value"]
            elif kind == "remove":
                del parent[last]
            elif kind == "test" and parent.get(last) != op["value"]:
                raise ValueError(f"test failed at {op['path']}: {parent.get(last)!r} != {op['value']!r}")
    return doc


def is_resource(doc):
    return isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc


def load_documents(paths):
    """(where, document) for every document of every YAML file under paths."""
    found = []
    for path in paths:
        files = []
        if os.path.isdir(path):
            for top, dirs, names in os.walk(path):
                dirs.sort()
                files += [os.path.join(top, n) for n in sorted(names) if n.endswith((".yaml", ".yml"))]
        else:
            files.append(path)
        for name in files:
            with open(name, encoding="utf-8") as f:
                for i, doc in enumerate(yaml.safe_load_all(f)):
                    if doc is not None:
                        found.append((name if i == 0 else f"{name}#{i + 1}", doc))
    return found


def parse_flags(tokens):
    """--flag value, --flag=value and bare --flag (None) into a dict, the last one winning."""
    flags = {}
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.startswith("--"):
            if "=" in t:
                name, value = t.split("=", 1)
            elif i + 1 < len(tokens) and not tokens[i + 1].startswith("--"):
                name, value = t, tokens[i + 1]
                i += 1
            else:
                name, value = t, None
            flags[name] = value
        i += 1
    return flags


# --- the checks ---------------------------------------------------------------------------------------------

class Checker:
    def __init__(self, schema, version):
        self.validator = jsonschema.Draft202012Validator(schema)
        self.version = version
        self.errors = []
        self.claims = []  # (where, claimName) of every pod volume
        self.pvcs = []    # names of the PersistentVolumeClaims seen

    def error(self, where, message):
        self.errors.append(f"error: {where}: {message}")

    # Every document ---------------------------------------------------------------------------------------
    def check(self, where, doc):
        if not is_resource(doc):
            return
        kind = doc.get("kind")
        if kind in ("Kustomization", "Component"):
            self.check_kustomization(where, doc)
            return
        name = (doc.get("metadata") or {}).get("name", "?")
        here = f"{where}: {kind}/{name}"
        schema_errors = sorted(self.validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in schema_errors:
            at = "/".join(str(p) for p in e.absolute_path) or "(top)"
            self.error(here, f"schema: at {at}: {e.message}")
        if schema_errors:
            return  # the rules below assume the shape the schema describes
        if kind == "MPIJob":
            self.check_mpijob(here, doc)
        elif kind == "Pod":
            self.check_pod(here, "pod", doc["spec"])
        elif kind == "Job":
            self.check_job(here, doc)
        elif kind == "PersistentVolumeClaim":
            self.check_pvc(here, doc)

    def check_kustomization(self, where, doc):
        for image in doc.get("images") or []:
            if image.get("name") == "cputrain" and "newTag" in image and str(image["newTag"]) != self.version:
                self.error(where, f"images: newTag {image['newTag']} is not the project's version {self.version} "
                                  f"(include/cputrain/version.hpp)")

    def finish(self):
        """Checks across documents: every pod uses the one volume that was declared."""
        if self.pvcs:
            for where, claim in self.claims:
                if claim not in self.pvcs:
                    self.error(where, f"volume claim {claim} is not the PersistentVolumeClaim declared here "
                                      f"({', '.join(self.pvcs)})")

    # Pods ---------------------------------------------------------------------------------------------------
    def check_pod(self, here, role, spec):
        """What every pod of the deployment must do; returns {mount path: volume} of its first container."""
        here = f"{here} {role}"
        pod_sc = spec.get("securityContext") or {}
        volumes = {v["name"]: v for v in spec.get("volumes") or []}
        uses_claim = False
        for v in volumes.values():
            if "persistentVolumeClaim" in v:
                uses_claim = True
                self.claims.append((here, v["persistentVolumeClaim"]["claimName"]))
        if uses_claim and pod_sc.get("fsGroup") != USER_ID:
            self.error(here, f"securityContext.fsGroup must be {USER_ID}: the image's user cputrain writes to the "
                             f"volume")
        mounts_of_first = {}
        containers = (spec.get("initContainers") or []) + spec["containers"]
        for c in containers:
            where = f"{here} container {c['name']}"
            sc = c.get("securityContext") or {}
            for field in ("runAsUser", "runAsGroup"):
                value = sc.get(field, pod_sc.get(field))
                if value != USER_ID:
                    self.error(where, f"{field} is {value}, not {USER_ID}: the image's user cputrain (uid and gid "
                                      f"{USER_ID}) owns its home, its ssh setup and the volume's files")
            self.check_resources(where, c)
            self.check_image(where, c["image"])
            self.check_threads(where, c)
            mounts = {}
            for m in c.get("volumeMounts") or []:
                if m["name"] not in volumes:
                    self.error(where, f"volumeMount {m['name']} names no volume of the pod")
                    continue
                mounts[m["mountPath"]] = volumes[m["name"]]
                if "persistentVolumeClaim" in volumes[m["name"]] and m["mountPath"] != WORKSPACE:
                    self.error(where, f"the volume is mounted at {m['mountPath']}, not {WORKSPACE}: run_qa's "
                                      f"paths are under {WORKSPACE}")
            if c is spec["containers"][0]:
                mounts_of_first = mounts
        return mounts_of_first

    def check_resources(self, where, c):
        res = c.get("resources") or {}
        requests, limits = res.get("requests") or {}, res.get("limits") or {}
        for r in ("cpu", "memory"):
            if r not in requests or r not in limits:
                self.error(where, f"resources: {r} needs both a request and a limit (Guaranteed QoS)")
                continue
            if quantity(requests[r]) != quantity(limits[r]):
                self.error(where, f"resources: {r} request {requests[r]} != limit {limits[r]}: requests must equal "
                                  f"limits (Guaranteed QoS)")
        cpu = quantity(limits.get("cpu", requests.get("cpu")))
        if cpu is not None and (cpu.denominator != 1 or cpu < 1):
            self.error(where, f"resources: cpu {limits.get('cpu', requests.get('cpu'))} is not a whole number of "
                              f"CPUs: the static CPU manager gives exclusive cores to integer requests only")

    def check_image(self, where, image):
        m = re.match(r"^(?:.+/)?cputrain:([^:@/]+)(?:@sha256:[0-9a-f]{64})?$", image)
        if not m:
            self.error(where, f"image {image} is not the cputrain image (<registry>/cputrain:{self.version})")
        elif m.group(1) != self.version:
            self.error(where, f"image tag {m.group(1)} is not the project's version {self.version} "
                              f"(include/cputrain/version.hpp)")

    def check_threads(self, where, c):
        for e in c.get("env") or []:
            if e["name"] == "OMP_NUM_THREADS":
                self.error(where, "env OMP_NUM_THREADS: leave the thread count to run_qa's automatic layout (each "
                                  "rank: its NUMA node's cores minus one)")
        for s in (c.get("command") or []) + (c.get("args") or []) + [e.get("value", "") for e in c.get("env") or []]:
            if "OMP_NUM_THREADS" in s:
                self.error(where, "OMP_NUM_THREADS in the command: leave the thread count to run_qa's automatic "
                                  "layout")
            if re.search(r"(^|\s)--threads(\s|=|$)", s):
                self.error(where, "--threads: leave the thread count to run_qa's automatic layout (each rank: its "
                                  "NUMA node's cores minus one)")

    # The objects ----------------------------------------------------------------------------------------------
    def check_pvc(self, here, doc):
        self.pvcs.append(doc["metadata"]["name"])
        if "ReadWriteMany" not in doc["spec"]["accessModes"]:
            self.error(here, f"accessModes {doc['spec']['accessModes']} lack ReadWriteMany: workers on several "
                             f"nodes mount the volume at once")

    def check_job(self, here, doc):
        spec = doc["spec"]
        self.check_backoff(here, spec.get("backoffLimit"), "spec.backoffLimit")
        self.check_pod(here, "job", spec["template"]["spec"])

    def check_backoff(self, here, limit, field):
        if limit is None:
            self.error(here, f"{field} is not set: say how many restarts a failed run gets (unset, a Job "
                             f"falls back to Kubernetes' default of 6)")
        elif not 1 <= limit <= MAX_BACKOFF_LIMIT:
            self.error(here, f"{field} {limit} is not a bounded number of restarts (1-{MAX_BACKOFF_LIMIT})")

    def check_mpijob(self, here, doc):
        spec = doc["spec"]
        replicas = spec["mpiReplicaSpecs"]
        if spec.get("sshAuthMountPath") != SSH_DIR:
            self.error(here, f"sshAuthMountPath is {spec.get('sshAuthMountPath')}, not {SSH_DIR}: the image's sshd "
                             f"and ssh read their keys there")
        self.check_backoff(here, (spec.get("runPolicy") or {}).get("backoffLimit"), "runPolicy.backoffLimit")
        for role in ("Launcher", "Worker"):
            if role not in replicas:
                self.error(here, f"mpiReplicaSpecs has no {role}")
                continue
            if replicas[role].get("restartPolicy") != "OnFailure":
                self.error(here, f"{role} restartPolicy is {replicas[role].get('restartPolicy')}, not OnFailure: a "
                                 f"failed run restarts and resumes from the newest checkpoint")
        if "Launcher" not in replicas or "Worker" not in replicas:
            return
        launcher_spec = replicas["Launcher"]["template"]["spec"]
        worker_spec = replicas["Worker"]["template"]["spec"]
        self.check_pod(here, "Launcher", launcher_spec)
        worker_mounts = self.check_pod(here, "Worker", worker_spec)
        worker = worker_spec["containers"][0]
        self.check_worker(here, doc, worker, worker_mounts)
        self.check_worker_sigterm(here, worker)
        self.check_launcher(here, launcher_spec, worker_spec, worker_mounts)

    def check_worker(self, here, doc, worker, mounts):
        here_w = f"{here} Worker"
        if WORKSPACE not in mounts or "persistentVolumeClaim" not in mounts[WORKSPACE]:
            self.error(here_w, f"no PersistentVolumeClaim mounted at {WORKSPACE}: model, data and checkpoints "
                               f"must be on a volume every worker shares")
        shm = mounts.get(SHM, {}).get("emptyDir")
        if shm is None or shm.get("medium") != "Memory":
            self.error(here_w, f"{SHM} is not an emptyDir with medium Memory: Open MPI's shared memory between the "
                               f"ranks of a worker lives there, and a container's own is 64 MiB")
            shm = None
        elif "sizeLimit" not in shm:
            self.error(here_w, f"{SHM}: set a sizeLimit (it is memory, counted against the container's limit)")
            shm = None

        # The node the shape is sized for.
        annotations = doc["metadata"].get("annotations") or {}
        node = {}
        for key in NODE_ANNOTATIONS:
            value = annotations.get(f"cputrain/node-{key}")
            if value is None:
                self.error(here, f"metadata.annotations lack cputrain/node-{key}: declare the node size that "
                                 f"slotsPerWorker and the worker resources are meant for")
                continue
            node[key] = quantity(value) if key == "memory" else (int(value) if str(value).isdigit() else None)
            if node[key] is None or node[key] <= 0:
                self.error(here, f"cputrain/node-{key} {value!r} is not a positive "
                                 f"{'quantity' if key == 'memory' else 'integer'}")
                node.pop(key)
        if len(node) != len(NODE_ANNOTATIONS):
            return
        sockets, cores, threads = node["sockets"], node["cores-per-socket"], node["threads-per-core"]
        cpus = sockets * cores * threads
        shape = f"the node ({sockets} socket(s) x {cores} cores x {threads} threads = {cpus} CPUs)"
        slots = doc["spec"].get("slotsPerWorker", 1)
        if slots != sockets:
            self.error(here, f"slotsPerWorker {slots} != {sockets} sockets of {shape}: one rank per socket")
        limits = worker["resources"].get("limits") or {}
        cpu, memory = quantity(limits.get("cpu")), quantity(limits.get("memory"))
        if cpu is not None and cpu.denominator == 1:
            cpu = int(cpu)
            if cpu > cpus - threads:
                self.error(here_w, f"cpu {cpu} leaves no whole core of {shape} to the kubelet and the system")
            if cpu % (sockets * threads):
                self.error(here_w, f"cpu {cpu} is not a multiple of sockets x threads per core ({sockets} x "
                                   f"{threads}): each rank's socket should give it the same whole cores")
            if cpu <= (sockets - 1) * cores * threads:
                self.error(here_w, f"cpu {cpu} fits in fewer than {sockets} sockets of {shape}: the topology "
                                   f"manager would place the worker on fewer NUMA nodes than it has ranks")
        if memory is not None:
            if memory >= node["memory"]:
                self.error(here_w, f"memory {limits['memory']} is not below the node's "
                                   f"{annotations['cputrain/node-memory']}")
            if shm is not None and quantity(shm["sizeLimit"]) >= memory:
                self.error(here_w, f"{SHM} sizeLimit {shm['sizeLimit']} is not below the memory limit "
                                   f"{limits['memory']} it counts against")

    def check_worker_sigterm(self, here, worker):
        """The worker's entrypoint passes the pod's SIGTERM to its ranks: mpirun passes it on only after
        odls_base_sigkill_timeout, and never when only that worker is stopped. Its behaviour is tested by
        entrypoints_test.py; this holds every manifest to doing it at all."""
        script = "\n".join((worker.get("command") or []) + (worker.get("args") or []))
        sends = re.search(r"(^|[\s;|&(])kill\s+(-TERM|-s\s+TERM|-15)\b", script)
        if not sends or not re.search(rf"\b{RANK_PROCESS}\b", script):
            self.error(f"{here} Worker", f"the worker's command does not send SIGTERM to its {RANK_PROCESS} "
                                         f"processes: mpirun passes the pod's SIGTERM on only after "
                                         f"OMPI_MCA_odls_base_sigkill_timeout, and not at all when one worker is "
                                         f"stopped alone")

    def check_launcher(self, here, launcher_spec, worker_spec, worker_mounts):
        here_l = f"{here} Launcher"
        c = launcher_spec["containers"][0]
        argv = (c.get("command") or []) + (c.get("args") or [])
        base = [os.path.basename(a) for a in argv]
        mpirun = next((i for i, b in enumerate(base) if b in ("mpirun", "mpiexec", "orterun")), None)
        if mpirun is None:
            self.error(here_l, "the launcher runs no mpirun")
            return
        run_qa = next((i for i in range(mpirun + 1, len(base)) if base[i] == "run_qa"), None)
        if run_qa is None:
            self.error(here_l, "mpirun starts no run_qa")
            return
        options = argv[mpirun + 1:run_qa]
        for o in options:
            if o.split("=", 1)[0] in RANK_COUNT_OPTIONS:
                self.error(here_l, f"mpirun {o}: do not fix the number of ranks; the operator's hostfile gives one "
                                   f"per slot (workers x slotsPerWorker), which the overlays change")
        bind = [options[i + 1] for i, o in enumerate(options[:-1]) if o in ("--bind-to", "-bind-to")]
        bind += [o.split("=", 1)[1] for o in options if o.startswith(("--bind-to=", "-bind-to="))]
        if bind != ["none"]:
            self.error(here_l, "mpirun needs --bind-to none: run_qa places each rank on its NUMA node and CPUs "
                               "itself")

        flags = parse_flags(argv[run_qa + 1:])
        if "--do_train" not in flags:
            self.error(here_l, "run_qa without --do_train: there is nothing to checkpoint or resume")
        if "--overwrite_output_dir" in flags:
            self.error(here_l, "run_qa --overwrite_output_dir: a restarted launcher must resume from the newest "
                               "checkpoint in --output_dir, not start over")
        if "--resume_from_checkpoint" in flags:
            self.error(here_l, "run_qa --resume_from_checkpoint pins one checkpoint: every restart would go back "
                               "to it; without it run_qa resumes from the newest one in --output_dir")
        for flag in PATH_FLAGS:
            value = flags.get(flag)
            if value is not None and not (value == WORKSPACE or value.startswith(WORKSPACE + "/")):
                self.error(here_l, f"run_qa {flag} {value} is not on the volume ({WORKSPACE}) that the workers "
                                   f"mount")
        if not flags.get("--output_dir"):
            self.error(here_l, f"run_qa without --output_dir (on the volume, under {WORKSPACE})")
        if flags.get("--save_strategy") == "no":
            self.error(here_l, "run_qa --save_strategy no: a restart would have no checkpoint to resume from")
        if flags.get("--save_strategy") != "epoch":
            steps = flags.get("--save_steps")
            if steps is None or not steps.isdigit() or int(steps) < 1:
                self.error(here_l, f"run_qa --save_steps {steps}: checkpoint every N steps, so that a restart "
                                   f"resumes from a recent one")
        limit = flags.get("--save_total_limit")
        if limit is None or not limit.isdigit() or int(limit) < 1:
            self.error(here_l, f"run_qa --save_total_limit {limit}: keep a bounded number of checkpoints on the "
                               f"volume")

        # SIGTERM. Open MPI 4.1's mpirun, on SIGTERM, sends the ranks SIGCONT at once, SIGTERM T s later and SIGKILL
        # 2T s later (T = odls_base_sigkill_timeout, default 1), then exits. Further SIGTERMs only make a rank print
        # a line, so SIGKILL is the limit: when the job is deleted the workers' entrypoints signal the ranks at t = 0
        # (check_worker_sigterm) and they have until 2T; a launcher stopped alone gets its ranks their first SIGTERM
        # only at T, so a step in flight plus a save judged to fit in --termination_grace_period must fit in the T
        # s before 2T. The kubelet's kill comes after 2T, when mpirun has ended.
        grace = flags.get("--termination_grace_period")
        try:
            grace = float(grace)
        except (TypeError, ValueError):
            self.error(here_l, f"run_qa --termination_grace_period {grace}: set it, at least {STEP_ROOM} s below "
                               f"mpirun's odls_base_sigkill_timeout")
            grace = None
        env = {e["name"]: e.get("value") for e in c.get("env") or []}
        kill = env.get("OMPI_MCA_odls_base_sigkill_timeout")
        if kill is None or not kill.isdigit():
            self.error(here_l, f"env OMPI_MCA_odls_base_sigkill_timeout {kill}: on SIGTERM mpirun sends the ranks "
                               f"SIGTERM after this many seconds and SIGKILL after twice as many; with Open MPI's "
                               f"default of 1 the ranks are killed 2 s after the launcher's SIGTERM, before they "
                               f"can write a checkpoint")
            kill = None
        else:
            kill = int(kill)
        if grace is not None and kill is not None and grace + STEP_ROOM > kill:
            self.error(here_l, f"--termination_grace_period {flags['--termination_grace_period']} + {STEP_ROOM} s "
                               f"for the step in flight exceeds OMPI_MCA_odls_base_sigkill_timeout {kill}: a "
                               f"launcher stopped alone gets its ranks their SIGTERM from mpirun at {kill} s, and "
                               f"mpirun's SIGKILL at {2 * kill} s would end them while they write the checkpoint")
        for role, spec in (("Launcher", launcher_spec), ("Worker", worker_spec)):
            pod_grace = spec.get("terminationGracePeriodSeconds", 30)
            if kill is not None and pod_grace <= 2 * kill:
                self.error(f"{here} {role}", f"terminationGracePeriodSeconds {pod_grace} is not above 2 x "
                                             f"OMPI_MCA_odls_base_sigkill_timeout {kill}: the ranks may save until "
                                             f"mpirun's SIGKILL at {2 * kill} s (signalled by their workers at 0 s, "
                                             f"or by mpirun at {kill} s when the launcher is stopped alone); the "
                                             f"kubelet must kill the pod after that")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root_default = os.path.normpath(os.path.join(here, "..", "..", ".."))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", default=root_default, help="the project's source tree")
    p.add_argument("--schema", default=os.path.join(here, "manifest-schema.yaml"))
    p.add_argument("--render", metavar="DIR", help="check `kubectl kustomize DIR`")
    p.add_argument("--save", metavar="FILE", help="with --render: also write the rendered YAML there")
    p.add_argument("--mutate", metavar="FIXTURE", help="check the fixture's target with its JSON patch applied")
    p.add_argument("paths", nargs="*")
    args = p.parse_args()

    with open(args.schema, encoding="utf-8") as f:
        schema = yaml.safe_load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    version = project_version(os.path.join(args.root, "include", "cputrain", "version.hpp"))
    checker = Checker(schema, version)

    if args.render:
        kubectl = shutil.which("kubectl")
        if kubectl is None:
            print(f"SKIPPED: kubectl is not installed, so {args.render} cannot be rendered (kustomize is built "
                  f"into kubectl; it is not a Debian package). The manifests as committed are still checked by "
                  f"the other deploy/k8s tests.")
            return SKIP
        run = subprocess.run([kubectl, "kustomize", args.render], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"error: kubectl kustomize {args.render} failed:\n{run.stderr}", end="")
            return 1
        if args.save:
            os.makedirs(os.path.dirname(os.path.abspath(args.save)), exist_ok=True)
            with open(args.save, "w", encoding="utf-8") as f:
                f.write(run.stdout)
        documents = [(f"kubectl kustomize {args.render}", d) for d in yaml.safe_load_all(run.stdout) if d]
        if not documents:
            print(f"error: kubectl kustomize {args.render} rendered nothing")
            return 1
    elif args.mutate:
        with open(args.mutate, encoding="utf-8") as f:
            fixture = yaml.safe_load(f)
        target = os.path.join(args.root, fixture["target"])
        with open(target, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
        try:
            doc = apply_json_patch(doc, fixture["patch"])
        except (KeyError, IndexError, ValueError) as e:
            print(f"error: {args.mutate}: its patch does not apply to {fixture['target']} ({e!r}): update the "
                  f"fixture")
            return 2
        documents = [(f"{fixture['target']} + {os.path.basename(args.mutate)}", doc)]
    else:
        if not args.paths:
            p.error("give PATHs, --render DIR or --mutate FIXTURE")
        documents = load_documents(args.paths)

    resources = 0
    for where, doc in documents:
        if is_resource(doc):
            resources += doc.get("kind") not in ("Kustomization", "Component")
            checker.check(where, doc)
    checker.finish()
    for e in checker.errors:
        print(e)
    if checker.errors:
        print(f"FAILED: {len(checker.errors)} problem(s) in {resources} manifest(s)")
        return 1
    if resources == 0:
        print("error: no manifests found")
        return 1
    print(f"ok: {resources} manifest(s) checked (schema, resources, node shape, run_qa flags, image {version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
