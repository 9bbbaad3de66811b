#!/usr/bin/env python3
"""Runs every command of a Markdown file's ```sh blocks and checks its sample outputs against the program.

Each command of a ```sh block runs in order (a backslash continues a line; `  # ...` is a comment), in a
temporary directory that links the repository's build/, topologies/, validate/, notebooks/ and scripts/, so
that files the commands write (my-cluster.yaml, cal.yaml, traces, sweeps) land there and later commands find
them. A command that cannot run here (a GPU, a Slurm cluster, a file of the reader's own, a placeholder) is
skipped with the reason (SKIPS below); every other one must exit 0.

A sample output is a fenced block right after a marker line
    <!-- sample: ARGS -->                 the whole standard output of build/bin/treering ARGS
    <!-- sample: ARGS | keep: REGEX -->   only its lines that REGEX matches (re.search)
whose optional first line "$ build/bin/treering ARGS" shows the command. --check (the default) fails when a
block differs from what the program prints now; --update rewrites the blocks (`make docs`).

Usage: scripts/readme_commands.py [--check | --update] [--build DIR] [--only-samples] [FILE.md]
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
LINKED = ["topologies", "validate", "notebooks", "scripts"]
MARKER = re.compile(r"^<!-- sample:(?P<args>.*?)(?:\s*\| keep: (?P<keep>.*?))? -->$")
TIMEOUT_S = 600

# (a part of the command, why it cannot run here)
SKIPS = [
    ("make ", "the build itself: make test is what runs this check"),
    ("-m venv", "a virtual environment of the reader's (python/pip-install makes one)"),
    ("pip install", "a build of its own (python/pip-install tests the install)"),
    ("bash scripts/deps.sh", "installs Debian packages"),
    ("mpirun ", "needs the reader's MPI job (the sweep's MPI path is tested by cli/sweep-mpi)"),
    ("srun ", "needs a Slurm cluster"),
    ("--backend cuda", "needs NVIDIA GPUs"),
    ("treering-realrun step", "needs an NVIDIA GPU"),
    ("ar.json", "reads the GPU benchmarks above"),
    ("decode.json", "reads the GPU decodes above"),
    ("att-8b.json", "reads the GPU benchmark above"),
    ("att-cal.yaml", "reads the calibration above"),
    ("step.json", "reads the GPU step above"),
    ("step-cal.yaml", "reads the calibration above"),
    ("plan=", "a shell variable for the srun lines"),
    ("~/models/", "a Hugging Face config.json of the reader's own"),
    ("jupyter-nbconvert", "the notebooks run under make test (notebooks/*)"),
]


def fenced_blocks(lines):
    """(index of the opening fence, language, [line indexes inside]) for each fenced block."""
    blocks, i = [], 0
    while i < len(lines):
        match = re.match(r"^```(\w*)\s*$", lines[i])
        if not match:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        blocks.append((i, match.group(1), list(range(i + 1, j))))
        i = j + 1
    return blocks


def commands_of(block_lines):
    """The commands of a sh block: continuations joined, comments dropped, heredocs as one command."""
    commands, current, heredoc_end = [], "", None
    for line in block_lines:
        if heredoc_end is not None:
            current += "\n" + line
            if line.strip() == heredoc_end:
                commands.append(current)
                current, heredoc_end = "", None
            continue
        if not current and line.lstrip().startswith("#"):
            continue  # a comment line
        text = re.split(r"\s{2,}#", line, maxsplit=1)[0].rstrip()
        if text.endswith("\\"):
            current += text[:-1] + " "
            continue
        current += text
        heredoc = re.search(r"<<'?(\w+)'?", current)
        if heredoc:
            heredoc_end = heredoc.group(1)
            continue
        if current.strip():
            commands.append(current.strip())
        current = ""
    return commands


def skip_reason(command):
    for part, reason in SKIPS:
        if part in command:
            return reason
    return None


def workspace(build_dir):
    directory = tempfile.mkdtemp(prefix="treering-readme-")
    os.symlink(build_dir, os.path.join(directory, "build"))
    for name in LINKED:
        os.symlink(os.path.join(ROOT, name), os.path.join(directory, name))
    return directory


def run(command, cwd, env):
    return subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S, executable="/bin/bash")


def run_commands(markdown_lines, cwd, env):
    failures = 0
    for _, language, inside in fenced_blocks(markdown_lines):
        if language == "python":
            failures += run_python([markdown_lines[i] for i in inside], cwd, env)
        if language != "sh":
            continue
        for command in commands_of([markdown_lines[i] for i in inside]):
            reason = skip_reason(command)
            shown = command.splitlines()[0][:110]
            if reason:
                print(f"skipped  {shown}\n         ({reason})")
                continue
            result = run(command, cwd, env)
            if result.returncode != 0:
                failures += 1
                print(f"FAILED   {shown}\n         exit {result.returncode}: {result.stderr.strip()[-400:]}")
            else:
                print(f"ok       {shown}")
    return failures


def run_python(block_lines, cwd, env):
    """A python block runs as a script with build/python on the path; skipped when its imports are missing."""
    script = "\n".join(block_lines) + "\n"
    imports = sorted(set(re.findall(r"^import ([\w., ]+?)(?: as \w+)?$", script, re.M)))
    names = [n.strip().split(" as ")[0] for line in imports for n in line.split(",")]
    probe = subprocess.run([sys.executable, "-c", "import " + ", ".join(names)], cwd=cwd, env=env, capture_output=True,
                           text=True) if names else None
    if probe is not None and probe.returncode != 0:  # a module missing, or one that cannot load here (the
        # sanitizer build's aborts in a plain interpreter, saying nothing)
        said = probe.stderr.strip().splitlines()
        reason = said[-1] if said else "import " + ", ".join(names) + f" exits {probe.returncode}"
        print(f"skipped  python block ({reason})")
        return 0
    result = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=TIMEOUT_S)
    if result.returncode != 0:
        print(f"FAILED   python block\n         exit {result.returncode}: {result.stderr.strip()[-400:]}")
        return 1
    print("ok       python block")
    return 0


def sample_text(args, keep, cwd, env):
    result = run("build/bin/treering " + args, cwd, env)
    if result.returncode != 0:
        raise RuntimeError(f"treering {args}: exit {result.returncode}: {result.stderr.strip()[-400:]}")
    out = [line.rstrip() for line in result.stdout.splitlines()]
    if keep:
        out = [line for line in out if re.search(keep, line)]
    return ["$ build/bin/treering " + args if args else "$ build/bin/treering"] + out


def check_samples(markdown_lines, cwd, env, update):
    """Returns (differences, new lines)."""
    differences, new_lines, copied = 0, [], 0
    for opening, _, inside in fenced_blocks(markdown_lines):
        marker = MARKER.match(markdown_lines[opening - 1].strip()) if opening > 0 else None
        if not marker:
            continue
        expected = sample_text(marker.group("args").strip(), marker.group("keep"), cwd, env)
        shown = [markdown_lines[i].rstrip() for i in inside]
        if shown and not shown[0].startswith("$ "):
            expected = expected[1:]  # the block does not show the command
        new_lines += markdown_lines[copied:opening + 1] + expected
        copied = inside[-1] + 1 if inside else opening + 1
        if shown != expected:
            differences += 1
            print(f"{'updated ' if update else 'DIFFERS '} sample at line {opening + 1}: treering {marker.group('args').strip()}")
            if not update:
                for a, b in zip(shown + [""] * len(expected), expected + [""] * len(shown)):
                    if a != b:
                        print(f"         README:  {a}\n         program: {b}")
                        break
        else:
            print(f"ok       sample at line {opening + 1}: treering {marker.group('args').strip()}")
    return differences, new_lines + markdown_lines[copied:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail when a sample differs (the default)")
    mode.add_argument("--update", action="store_true", help="rewrite the samples from the program's output")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build directory (its bin/)")
    parser.add_argument("--only-samples", action="store_true", help="check or update the samples, run nothing else")
    parser.add_argument("markdown", nargs="?", default=os.path.join(ROOT, "README.md"))
    args = parser.parse_args()
    with open(args.markdown, encoding="utf-8") as f:
        lines = f.read().split("\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(args.build), "python"))
    cwd = workspace(os.path.abspath(args.build))
    try:
        failures = 0 if args.only_samples else run_commands(lines, cwd, env)
        differences, new_lines = check_samples(lines, cwd, env, args.update)
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    if args.update and differences:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write("\n".join(new_lines))
    print(f"{failures} command(s) failed; {differences} sample(s) {'updated' if args.update else 'differ'}")
    if failures or (differences and not args.update):
        if differences and not args.update:
            print("run `make docs` to rewrite the samples from the program's output")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
