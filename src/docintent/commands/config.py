"""``docintent config show``: the effective settings and brain profiles, and where each value came from."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

#: Shown under ``docintent config --help``.
EXAMPLES = ("docintent config show",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "config",
        help="show the effective settings and brain profiles and where each came from (docintent.toml, environment)",
        description="Settings come from DOCINTENT_* environment variables, then the config files (the project's "
        "docintent.toml, found from the current folder upward to the project's top - the nearest folder holding "
        ".git or pyproject.toml, never above the home folder; outside a project only the current folder's - over "
        "the user's ~/.config/docintent/docintent.toml; or the one file docintent --config or DOCINTENT_CONFIG "
        "names), then the defaults. It says which files were read and why, and which were left alone.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print every setting and profile with its source")
    show.add_argument("--profile", metavar="NAME", help="show only this profile's options")
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    show.set_defaults(func=run_show)


def run_show(args: argparse.Namespace) -> int:
    from ..brains.profiles import choose_brain, shown
    from ..configfile import load_config, user_config_path
    from ..errors import ConfigError
    from ..settings import keep_environment_key_home, settings_report

    config = load_config()
    settings = settings_report(config)
    if args.profile is not None and args.profile not in config.profiles:
        raise ConfigError(
            f"--profile {args.profile}: no such profile; profiles: {', '.join(config.profiles) or 'none'}"
        )
    names = [args.profile] if args.profile else list(config.profiles)
    profiles: list[dict[str, Any]] = []
    for name in names:
        choice = keep_environment_key_home(choose_brain(name, None, {}, config=config))
        values = {**choice.options, **{key: os.environ[var] for key, var in choice.from_environment.items()}}
        options = {
            key: {"value": None if source.startswith("not sent") else shown(key, values.get(key)), "source": source}
            for key, source in choice.sources.items()
        }
        profiles.append(
            {"name": name, "kind": choice.kind, "file": str(config.profiles[name].path), "options": options}
        )
    default = config.default_profile
    if args.json:
        print(
            json.dumps(
                {
                    "files": [{"path": str(f), "why": why} for f, why in zip(config.files, config.reasons)],
                    "ignored": [{"path": str(f), "why": why} for f, why in config.ignored],
                    "settings": {
                        s.name: {"value": str(s.value) if s.value is not None else None, "source": s.source}
                        for s in settings
                    },
                    "default_profile": {"value": default.value, "source": str(default.path)} if default else None,
                    "profiles": profiles,
                },
                indent=2,
            )
        )
        return 0
    files = config.files
    if files:
        print("config files (a later one wins):")
        for f, why in zip(files, config.reasons):
            print(f"  {f}  ({why})")
    else:
        print(
            f"config files: none (looked for {user_config_path()} and for a docintent.toml from here up to the "
            "project's top)"
        )
    for f, why in config.ignored:
        print(f"  ignored: {f}  ({why})")
    print("settings:")
    width = max(len(key) for key in [s.name for s in settings] + [k for p in profiles for k in p["options"]])
    for s in settings:
        value = "-" if s.value is None else str(s.value)
        print(f"  {s.name:<{width}}  {value:<32}  {s.source}")
    if profiles:
        print(
            f"profiles (default: {default.value} from {default.path}):" if default else "profiles (no default_profile):"
        )
        for profile in profiles:
            print(f"  {profile['name']}: {profile['kind']} brain, {profile['file']}")
            for key, item in profile["options"].items():
                value = "-" if item["value"] is None else str(item["value"])
                print(f"    {key:<{width}}  {value:<32}  {item['source']}")
    else:
        print("profiles: none")
    return 0
