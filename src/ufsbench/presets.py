"""Named parameter presets of the methods, read from their configs.

A method's config (``configs/method/<name>.yaml``, or a user's config of that name that shadows
it) may declare

.. code-block:: yaml

    presets:
      released:          # what the authors' public code runs
        init: axes
        zero_row_norm: 2.5e-7

A preset is only a set of ordinary constructor parameters: it selects no hidden code path, and
any of its values can be overridden. ``preset: released`` in a method config (``method.preset=
released`` on the command line) applies it to every fit of a run: the preset's values replace
the config's fixed ``params``, and a grid axis the preset names collapses to the preset's value.
A run changes one of them with ``method.presets.released.<parameter>=<value>``; in Python,
``make_selector(name, preset="released", **overrides)``.
"""

from __future__ import annotations

from ufsbench.errors import UFSBenchError


def method_presets(name: str) -> dict[str, dict]:
    """Every preset of method ``name``: {preset name: {parameter: value}} (empty when none)."""
    from ufsbench.run_config import method_config_for

    presets = method_config_for(name).get("presets") or {}
    return {str(key): dict(values or {}) for key, values in presets.items()}


def preset_params(name: str, preset: str) -> dict:
    """The parameter values of ``preset`` of method ``name``; one-line error when it has none."""
    presets = method_presets(name)
    if preset not in presets:
        known = ", ".join(sorted(presets)) or "none"
        raise UFSBenchError(f"method {name!r} has no preset {preset!r}; its presets: {known}")
    return presets[preset]


def apply_preset(method_cfg: dict) -> dict:
    """A method config with its ``preset`` (if any) applied: the preset's values replace the
    fixed ``params``; a ``grid`` axis or ``default`` entry the preset names is dropped (the
    preset fixes that parameter). The config is returned unchanged when it names no preset."""
    preset = method_cfg.get("preset")
    if not preset:
        return method_cfg
    own = method_cfg.get("presets")   # the config's own presets, with any override of a value
    values = (dict(own[preset] or {}) if isinstance(own, dict) and preset in own
              else preset_params(method_cfg["name"], preset))
    cfg = dict(method_cfg)
    cfg["params"] = {**(method_cfg.get("params") or {}), **values}
    for key in ("grid", "default"):
        cfg[key] = {k: v for k, v in (method_cfg.get(key) or {}).items() if k not in values}
    return cfg


def preset_label(method_cfg: dict) -> str | None:
    """The name of a method config's preset, with the values a run changed
    (``method.presets.released.max_iter=20``: "released with max_iter=20"), for the records."""
    preset = method_cfg.get("preset")
    own = (method_cfg.get("presets") or {}).get(preset) if preset else None
    if not preset or own is None:
        return preset or None
    packaged = preset_params(method_cfg["name"], preset)
    changed = [f"{key}={value}" for key, value in own.items() if packaged.get(key) != value]
    return f"{preset} with {', '.join(changed)}" if changed else preset
