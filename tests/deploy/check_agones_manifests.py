#!/usr/bin/env python3
"""Checks deploy/agones/*.yaml offline: each document against deploy/agones/schema.json (the
Agones CRD fields the manifests use), plus the relations between them that a schema cannot
state: the game port is 7777/UDP as reap-server listens, the Fleet's name is the one the
FleetAutoscaler scales and the GameServerAllocation selects, the Agones health period leaves
room for reap's 2 s pings.

usage: check_agones_manifests.py DIR   (exit 0 when every check holds; else each failure named)
"""
import json
import pathlib
import sys

import jsonschema
import yaml


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    root = pathlib.Path(sys.argv[1])
    schema = json.loads((root / "schema.json").read_text())
    failures = []
    docs = {}
    for path in sorted(root.glob("*.yaml")):
        if path.name == "yamllint.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            kind = doc.get("kind") if isinstance(doc, dict) else None
            if kind not in ("GameServer", "Fleet", "FleetAutoscaler", "GameServerAllocation"):
                failures.append(f"{path.name}: unexpected document kind {kind!r}")
                continue
            sub = dict(schema[kind])
            sub["definitions"] = schema["definitions"]
            validator = jsonschema.Draft7Validator(sub)
            for err in validator.iter_errors(doc):
                where = "/".join(str(p) for p in err.absolute_path) or "(top)"
                failures.append(f"{path.name}: {kind} {where}: {err.message}")
            docs[kind] = doc

    for kind in ("GameServer", "Fleet", "FleetAutoscaler", "GameServerAllocation"):
        if kind not in docs:
            failures.append(f"no {kind} manifest in {root}")
    if not failures:
        specs = [docs["GameServer"]["spec"], docs["Fleet"]["spec"]["template"]["spec"]]
        for spec in specs:
            port = spec["ports"][0]
            if port.get("containerPort") != 7777 or port.get("protocol") != "UDP":
                failures.append("the game port must be 7777/UDP, where reap-server listens")
            health = spec.get("health", {})
            if health.get("periodSeconds", 5) * health.get("failureThreshold", 3) < 2 * 2:
                failures.append("the health check must allow at least two of reap's 2 s pings")
        fleet = docs["Fleet"]["metadata"]["name"]
        if docs["FleetAutoscaler"]["spec"]["fleetName"] != fleet:
            failures.append(f"the FleetAutoscaler scales "
                            f"{docs['FleetAutoscaler']['spec']['fleetName']!r}, not {fleet!r}")
        for sel in docs["GameServerAllocation"]["spec"]["selectors"]:
            if sel.get("matchLabels", {}).get("agones.dev/fleet") != fleet:
                failures.append(f"the GameServerAllocation must select agones.dev/fleet: {fleet}")
        if "players" not in docs["GameServer"]["spec"].get("lists", {}):
            failures.append("the GameServer needs a 'players' list for reap's player tracking")
        if docs["Fleet"]["spec"].get("scheduling") != "Packed":
            failures.append("the Fleet should use Packed scheduling")
    for f in failures:
        print(f"check_agones_manifests: {f}")
    if not failures:
        print("check_agones_manifests: GameServer, Fleet, FleetAutoscaler and "
              "GameServerAllocation hold")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
