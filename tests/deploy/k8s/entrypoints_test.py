#!/usr/bin/python3
"""Runs the two shell scripts of deploy/k8s/base/mpijob.yaml (the launcher's and the workers' PID 1) with
stand-ins for sshd, ssh, Open MPI's daemon and the ranks, as the container would run them (/bin/sh -c SCRIPT NAME
ARGS...):

    worker-term-waits   SIGTERM while an MPI daemon and a rank run: the rank gets one SIGTERM at once; sshd stays
                        up until the daemon has exited, then exit 0
    worker-term-ranks   two ranks, the pod's SIGTERM sent twice: each rank gets exactly one SIGTERM, at once, and
                        none before; sshd stays up until the ranks (which outlive the daemon) have exited
    worker-term-idle    SIGTERM with no MPI daemon and no rank: exit 0 at once, sshd stopped
    worker-sshd-exits   sshd ends by itself: the container ends with its status (restartPolicy restarts it)
    launcher-waits      mpirun ("$@") starts only once every hostfile host answers ssh
    launcher-term       SIGTERM while waiting for a worker: exit 143 at once
    launcher-gives-up   a worker that never answers: exit 1 with a message (the deadline shortened for the test)

    entrypoints_test.py CASE   (Debian's /usr/bin/python3 with python3-yaml)
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

try:
    import yaml
except ImportError:
    sys.exit("error: python3-yaml is missing: install the Debian package and run this with /usr/bin/python3")

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
MPIJOB = os.path.join(ROOT, "deploy", "k8s", "base", "mpijob.yaml")


def script(role):
    with open(MPIJOB, encoding="utf-8") as f:
        job = yaml.safe_load(f)
    command = job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["containers"][0]["command"]
    assert command[:2] == ["/bin/sh", "-c"], f"{role}: the command is no longer /bin/sh -c SCRIPT: update this test"
    return command[2]


def substitute(text, old, new):
    assert old in text, f"the script no longer contains {old!r}: update this test"
    return text.replace(old, new)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


class Case:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="cputrain-k8s-")
        self.procs = []

    def close(self):
        # Each process leads its own group: end what it left behind too (stand-in sshd, sleep).
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            p.out.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def start(self, argv, **kw):
        # Output to a file, not a pipe: a background child of a script (sleep 5 &) would hold a pipe open
        # after the script has ended.
        out = open(self.path(f"out.{len(self.procs)}"), "w+")
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, text=True, start_new_session=True, **kw)
        p.out = out
        self.procs.append(p)
        return p

    @staticmethod
    def finish(p, seconds):
        """Waits for p to end and returns what it printed."""
        p.wait(timeout=seconds)
        p.out.seek(0)
        return p.out.read()

    def fake_sshd(self):
        """A stand-in sshd that records its pid and then runs until killed."""
        return ["/bin/sh", "-c", f"echo $$ > {self.path('sshd.pid')}; exec sleep 1000"]

    def sshd_pid(self):
        wait_for(lambda: os.path.exists(self.path("sshd.pid")) and open(self.path("sshd.pid")).read().strip(), 5,
                 "the stand-in sshd")
        return int(open(self.path("sshd.pid")).read())

    def daemon(self, seconds):
        """A process whose name (in /proc/PID/stat) is unique to this test, standing in for orted."""
        name = f"ctorted{os.getpid() % 100000}"
        exe = self.path(name)
        shutil.copy("/bin/sleep", exe)
        process = self.start([exe, str(seconds)])
        # Reap it when it ends, as its parent (an sshd session) does in the container.
        threading.Thread(target=process.wait, daemon=True).start()
        return name, process

    def rank_name(self):
        """A process name unique to this test, standing in for run_qa (never a real rank running here)."""
        return f"ctrunqa{os.getpid() % 100000}"

    def rank(self, index, save_seconds):
        """A stand-in rank: a script named rank_name() (its process name) that writes a line to rank.INDEX for
        each SIGTERM it gets and ends save_seconds after the first (a step and a checkpoint)."""
        exe = self.path(self.rank_name())
        if not os.path.exists(exe):
            with open(exe, "w") as f:
                f.write('#!/bin/sh\n'
                        'log=$1\n'
                        'trap \'echo SIGTERM >>"$log"; term=1\' TERM\n'
                        ': >"$log"\n'
                        'term=\n'
                        'while [ -z "$term" ]; do sleep 0.05; done\n'
                        'sleep "$2"\n'
                        'exit 143\n')
            os.chmod(exe, 0o755)
        log = self.path(f"rank.{index}")
        process = self.start([exe, log, str(save_seconds)])
        threading.Thread(target=process.wait, daemon=True).start()
        wait_for(lambda: os.path.exists(log), 5, f"stand-in rank {index}")
        return log, process

    @staticmethod
    def terms(log):
        """How many SIGTERMs a stand-in rank has got."""
        with open(log, encoding="utf-8") as f:
            return sum(1 for line in f if line.strip() == "SIGTERM")


def worker(case, daemon_seconds, rank_saves=(), signals=1):
    """The worker script with a stand-in MPI daemon that ends after daemon_seconds (none if 0) and one stand-in
    rank per entry of rank_saves (the seconds it runs after its first SIGTERM), sent the pod's SIGTERM `signals`
    times, 0.3 s apart. Returns the script, sshd's pid, the daemon, [(log, process)] of the ranks and the time
    of the first SIGTERM."""
    name, daemon = case.daemon(daemon_seconds) if daemon_seconds else ("ctorted-none", None)
    ranks = [case.rank(i, save) for i, save in enumerate(rank_saves)]
    text = substitute(script("Worker"), "daemon=orted", f"daemon={name}")
    text = substitute(text, "ranks=run_qa", f"ranks={case.rank_name()}")
    shell = case.start(["/bin/sh", "-c", text, "worker"] + case.fake_sshd())
    sshd = case.sshd_pid()
    time.sleep(0.3)  # the trap is set right after sshd starts
    assert shell.poll() is None, f"the worker script ended by itself: {case.finish(shell, 1)}"
    for log, _ in ranks:
        assert case.terms(log) == 0, "a rank got SIGTERM before the pod did"
    started = time.monotonic()
    for i in range(signals):
        if i:
            time.sleep(0.3)
        shell.send_signal(signal.SIGTERM)
    return shell, sshd, daemon, ranks, started


def check_one_sigterm_each(case, ranks, started):
    """Every stand-in rank got its SIGTERM within a second of the pod's, and only one."""
    wait_for(lambda: all(case.terms(log) >= 1 for log, _ in ranks), 1.0 + (time.monotonic() - started),
             "every rank's SIGTERM (due at once)")
    took = time.monotonic() - started
    assert took < 1.5, f"the ranks got their SIGTERM {took:.1f} s after the pod's"


def case_worker_term_waits(case):
    shell, sshd, daemon, ranks, started = worker(case, 3, rank_saves=[1])
    check_one_sigterm_each(case, ranks, started)
    time.sleep(max(0.0, started + 1.5 - time.monotonic()))
    assert ranks[0][1].poll() is not None, "the stand-in rank still runs 1.5 s after its SIGTERM"
    assert shell.poll() is None, "the worker script ended while the MPI daemon still ran"
    assert alive(sshd), "sshd was stopped while the MPI daemon still ran"
    out = case.finish(shell, 10)
    took = time.monotonic() - started
    assert daemon.poll() is not None, "the worker script ended before the MPI daemon"
    assert shell.returncode == 0, f"exit status {shell.returncode}, expected 0: {out}"
    assert not alive(sshd), "sshd still runs after the worker script ended"
    n = case.terms(ranks[0][0])
    assert n == 1, f"the rank got {n} SIGTERMs, expected exactly 1 (the worker signals its ranks once; more would only be reported)"
    print(f"SIGTERM: the rank got one SIGTERM at once; waited {took:.1f} s for the MPI daemon to end, then "
          f"stopped sshd and exited 0")


def case_worker_term_ranks(case):
    shell, sshd, _, ranks, started = worker(case, 1, rank_saves=[2.5, 3], signals=2)
    check_one_sigterm_each(case, ranks, started)
    time.sleep(max(0.0, started + 2 - time.monotonic()))
    assert shell.poll() is None, "the worker script ended while the ranks still ran"
    assert alive(sshd), "sshd was stopped while the ranks still ran"
    out = case.finish(shell, 10)
    took = time.monotonic() - started
    assert all(p.poll() is not None for _, p in ranks), "the worker script ended before the ranks"
    assert shell.returncode == 0, f"exit status {shell.returncode}, expected 0: {out}"
    assert not alive(sshd), "sshd still runs after the worker script ended"
    counts = [case.terms(log) for log, _ in ranks]
    assert counts == [1, 1], f"the ranks got {counts} SIGTERMs, expected exactly 1 each (the pod got 2)"
    print(f"SIGTERM twice: each of 2 ranks got exactly one SIGTERM, at once; waited {took:.1f} s for them to end, "
          f"then stopped sshd and exited 0")


def case_worker_term_idle(case):
    shell, sshd, _, _, started = worker(case, 0)
    out = case.finish(shell, 5)
    took = time.monotonic() - started
    assert shell.returncode == 0, f"exit status {shell.returncode}, expected 0: {out}"
    assert took < 3, f"took {took:.1f} s to stop without an MPI daemon"
    assert not alive(sshd), "sshd still runs after the worker script ended"
    print(f"SIGTERM without an MPI daemon: exited 0 after {took:.1f} s, sshd stopped")


def case_worker_sshd_exits(case):
    shell = case.start(["/bin/sh", "-c", script("Worker"), "worker", "/bin/sh", "-c", "sleep 0.5; exit 3"])
    out = case.finish(shell, 10)
    assert shell.returncode == 3, f"exit status {shell.returncode}, expected sshd's 3: {out}"
    print("sshd exited with 3: so did the worker script")


def launcher(case, answering, deadline=None):
    """The launcher script with a hostfile of w0 and w1 and an ssh that reaches only the hosts in `answering`
    (a file of host names, re-read at every attempt); "$@" is a stand-in mpirun that says it started."""
    with open(case.path("hostfile"), "w") as f:
        f.write("w0.cputrain-worker.default.svc slots=2\nw1.cputrain-worker.default.svc slots=2\n")
    with open(case.path("answering"), "w") as f:
        f.write("".join(h + "\n" for h in answering))
    bin_dir = case.path("bin")
    os.mkdir(bin_dir)
    with open(os.path.join(bin_dir, "ssh"), "w") as f:
        # The script calls: ssh -o BatchMode=yes -o ConnectTimeout=5 HOST true
        f.write(f"#!/bin/sh\ngrep -qx \"$5\" {case.path('answering')}\n")
    os.chmod(os.path.join(bin_dir, "ssh"), 0o755)
    text = script("Launcher")
    if deadline is not None:
        text = substitute(text, "+ 900 ))", f"+ {deadline} ))")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}",
               OMPI_MCA_orte_default_hostfile=case.path("hostfile"))
    return case.start(["/bin/sh", "-c", text, "launcher", "/bin/sh", "-c", "echo mpirun started: $*", "mpirun",
                       "--bind-to", "none"], env=env)


def case_launcher_waits(case):
    shell = launcher(case, ["w0.cputrain-worker.default.svc"])
    time.sleep(2)
    assert shell.poll() is None, f"mpirun started before w1 answered: {case.finish(shell, 1)}"
    with open(case.path("answering"), "a") as f:
        f.write("w1.cputrain-worker.default.svc\n")
    out = case.finish(shell, 15)
    assert shell.returncode == 0, f"exit status {shell.returncode}: {out}"
    assert "waiting for w1.cputrain-worker.default.svc" in out, out
    assert "waiting for w0" not in out, out
    assert "mpirun started: --bind-to none" in out, out
    print(out, end="")


def case_launcher_term(case):
    shell = launcher(case, [])
    time.sleep(1)
    started = time.monotonic()
    shell.send_signal(signal.SIGTERM)
    out = case.finish(shell, 10)
    took = time.monotonic() - started
    assert shell.returncode == 143, f"exit status {shell.returncode}, expected 143: {out}"
    assert took < 2, f"took {took:.1f} s to end on SIGTERM"
    assert "mpirun started" not in out, out
    print(f"SIGTERM while waiting: exit 143 after {took:.1f} s")


def case_launcher_gives_up(case):
    shell = launcher(case, ["w0.cputrain-worker.default.svc"], deadline=2)
    out = case.finish(shell, 20)
    assert shell.returncode == 1, f"exit status {shell.returncode}, expected 1: {out}"
    assert "w1.cputrain-worker.default.svc does not answer ssh" in out, out
    assert "mpirun started" not in out, out
    print(out, end="")


CASES = {name[len("case_"):].replace("_", "-"): f for name, f in globals().items() if name.startswith("case_")}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(CASES)}}}")
    case = Case()
    try:
        CASES[sys.argv[1]](case)
    except (AssertionError, subprocess.TimeoutExpired) as e:
        print(f"FAILED: {e}")
        return 1
    finally:
        case.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
