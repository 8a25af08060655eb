"""What a run's disk plan dropped once measured, from its results.json.

On a disk that holds one size class at a time (a CI machine's, after the build), a
run's disk plan drops the datasets cheapest to load again once they are measured; the
next run loads those alone again and reuses the rest. Its lines are recorded in
`parts[].disk_plan`, one of them "disk plan: dropped once measured (...): postgres
64KiB (~0.4s), ...".
"""

UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def dropped(run):
    """{(store, size_bytes)} the run's disk plan dropped once measured."""
    out = set()
    for part in run["parts"]:
        for line in part.get("disk_plan", []):
            if not line.startswith("disk plan: dropped once measured"):
                continue
            for item in line.split(": ", 2)[2].split(", "):
                if item == "none":
                    continue
                store, size = item.split()[:2]
                out.add((store, int(size[:-3]) * UNITS[size[-3:]]))
    return out


def plan_lines(run):
    return [line for part in run["parts"] for line in part.get("disk_plan", [])]
