"""The plugin registry of a process: the in-tree plugins plus out-of-tree ones from Python
packages (entry-point group ``batch_scheduler.plugins``) and ``--plugin [NAME=]module:factory``.

kube-scheduler needs a rebuilt binary for an out-of-tree plugin (``app.WithPlugin``); here an
installed package is enough. Reading the entry points' names is metadata only; a plugin's
module is imported when a profile builds it, so a broken package that no profile enables
never matters. Every failure (an import error, a factory that raises or returns something
without the registered name, a name clashing with an in-tree plugin) is a
:class:`PluginLoadError` — a ConfigError, so every command exits 2 with one line naming the
entry point. docs/plugins.md is the plugin author's guide.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING

from scheduler.framework.config import ConfigError
from scheduler.plugins import in_tree_registry

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from scheduler.framework.interfaces import Plugin, PluginArgs
    from scheduler.framework.profile import PluginFactory, Profile

ENTRY_POINT_GROUP = "batch_scheduler.plugins"


class PluginLoadError(ConfigError):
    """An out-of-tree plugin that cannot be registered or built; ``path`` names its source."""


@dataclass(slots=True)
class _OutOfTree:
    """A factory loaded on first use from ``target`` (``module:attribute``)."""

    name: str
    target: str
    source: str
    """How the user gave it: ``entry point batch_scheduler.plugins 'X' = 'm:f'``, ``--plugin``."""
    loaded: Callable[[PluginArgs, Profile], Plugin] | None = None

    def load(self) -> Callable[[PluginArgs, Profile], Plugin]:
        if self.loaded is None:
            self.loaded = _import(self.target, self.source)
        return self.loaded

    def __call__(self, args: PluginArgs, handle: Profile) -> Plugin:
        factory = self.load()
        try:
            plugin = factory(args, handle)
        except ValueError:
            raise  # bad args: the profile names pluginConfig[...].args, as for in-tree plugins
        except Exception as exc:
            raise PluginLoadError(
                self.source, f"factory {self.target} raised {type(exc).__name__}: {exc}"
            ) from exc
        made = getattr(plugin, "name", None)
        if made != self.name:
            raise PluginLoadError(
                self.source,
                f"factory {self.target} made a plugin named {made!r}, registered as {self.name!r}",
            )
        return plugin


def _import(target: str, source: str) -> Callable[[PluginArgs, Profile], Plugin]:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise PluginLoadError(source, f"must be module:factory, got {target!r}")
    try:
        obj: object = importlib.import_module(module_name)
    except Exception as exc:  # whatever the plugin's module raises while importing
        raise PluginLoadError(
            source, f"cannot import {module_name}: {type(exc).__name__}: {exc}"
        ) from exc
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginLoadError(source, f"{module_name} has no attribute {attribute!r}") from None
    if not callable(obj):
        raise PluginLoadError(source, f"{target} is not callable")
    factory: Callable[[PluginArgs, Profile], Plugin] = obj
    return factory


class PluginRegistry(Mapping[str, "PluginFactory"]):
    """Plugin name → factory(args, handle): the in-tree ones, then the out-of-tree ones."""

    def __init__(self, out_of_tree: Iterable[_OutOfTree] = ()) -> None:
        self._factories: dict[str, PluginFactory] = dict(in_tree_registry())
        self.sources: dict[str, str] = {}
        """Out-of-tree plugin name → where it came from (for messages)."""
        for plugin in out_of_tree:
            if plugin.name in self._factories:
                clash = "an in-tree plugin" if plugin.name not in self.sources else "another"
                what = self.sources.get(plugin.name, "")
                raise PluginLoadError(
                    plugin.source,
                    f"plugin name {plugin.name!r} is already taken by {clash}"
                    + (f" ({what})" if what else ""),
                )
            self._factories[plugin.name] = plugin
            self.sources[plugin.name] = plugin.source

    def __getitem__(self, name: str) -> PluginFactory:
        return self._factories[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)

    @property
    def out_of_tree(self) -> frozenset[str]:
        return frozenset(self.sources)


def load_registry(
    flags: Iterable[str] = (), *, entry_points: Iterable[metadata.EntryPoint] | None = None
) -> PluginRegistry:
    """The registry of this process: in-tree, the installed entry points, ``--plugin`` flags.

    ``entry_points`` None: those installed (``importlib.metadata``). A flag is
    ``NAME=module:factory``, or ``module:factory`` when the factory carries a ``name``
    attribute (a plugin class's, as the in-tree ones have)."""
    found = metadata.entry_points(group=ENTRY_POINT_GROUP) if entry_points is None else entry_points
    plugins = [
        _OutOfTree(ep.name, ep.value, f"entry point {ENTRY_POINT_GROUP} {ep.name!r} = {ep.value!r}")
        for ep in sorted(found, key=lambda ep: ep.name)
    ]
    plugins.extend(_from_flag(flag) for flag in flags)
    return PluginRegistry(plugins)


def _from_flag(flag: str) -> _OutOfTree:
    name, equals, target = flag.partition("=")
    if not equals:
        name, target = "", flag
    source = f"--plugin {flag!r}"
    plugin = _OutOfTree(name, target, source)
    if not name:
        named = getattr(plugin.load(), "name", None)
        if not isinstance(named, str) or not named:
            raise PluginLoadError(
                source,
                f"{target} has no 'name' attribute naming its plugin; give one: "
                f"--plugin NAME={target}",
            )
        plugin.name = named
    return plugin
