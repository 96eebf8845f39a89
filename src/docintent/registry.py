"""One registry mechanism for every pluggable component: tools, brains, strategies, OCR engines, datasets,
retrievers, planners and degradation families.

A :class:`Registry` maps a *kind* (a name such as ``"offline"``) to a factory and the pydantic model of the
options that factory accepts. ``get(kind, **options)`` validates the options before anything is built, so a
typo or a value of the wrong type is one :class:`~docintent.errors.ConfigError` line that names the valid
options; an unknown kind is an :class:`~docintent.errors.UnknownComponentError` that lists every valid kind.
Third-party components arrive through a Python entry-point group; a plug-in never replaces a built-in of the
same name (it is refused with a message naming both), and :meth:`Registry.scoped` registers components for the
length of a ``with`` block (tests).

>>> from pydantic import BaseModel
>>> class GreeterOptions(BaseModel):
...     greeting: str = "hello"
>>> greeters = Registry("greeter")
>>> greeters.register("plain", lambda greeting: greeting.upper(), GreeterOptions)
>>> greeters.get("plain", greeting="hi")
'HI'
>>> greeters.get("plain", greting="hi")
Traceback (most recent call last):
...
docintent.errors.ConfigError: greeter 'plain': unknown option 'greting' (did you mean 'greeting'?); valid options: greeting
>>> greeters.kinds()
['plain']
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import logging
import threading
from collections.abc import Callable, Iterator
from importlib import metadata
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from .errors import ConfigError, UnknownComponentError, did_you_mean

log = logging.getLogger(__name__)

T = TypeVar("T")


class _Loose(BaseModel):
    """Options of a factory that declares none: anything goes through (validated by the factory itself)."""

    model_config = ConfigDict(extra="allow")


class Entry(Generic[T]):
    """One registered component: how to build it, the options it takes, and where it came from.

    ``factory`` may be a ``"module:attribute"`` string, imported on first use (so registering the model brain
    does not import the HTTP client); ``options`` then defaults to the signature of what it names.
    """

    def __init__(
        self,
        kind: str,
        factory: Callable[..., T] | str,
        options: type[BaseModel] | None,
        origin: str,
        description: str = "",
        supplied: tuple[str, ...] = (),
    ) -> None:
        self.kind = kind
        self._factory = factory
        self._options = options
        self._supplied = supplied
        self.origin = origin  # "built-in", or the entry point / module that registered it
        self.description = description

    @property
    def factory(self) -> Callable[..., T]:
        if isinstance(self._factory, str):
            module_name, _, attribute = self._factory.partition(":")
            self._factory = getattr(importlib.import_module(module_name), attribute)
        assert not isinstance(self._factory, str)
        return self._factory

    @property
    def options(self) -> type[BaseModel]:
        if self._options is None:
            declared = getattr(self.factory, "Options", None)
            if isinstance(declared, type) and issubclass(declared, BaseModel):
                self._options = declared
            else:
                self._options = options_from_signature(self.factory, skip=self._supplied)
        return self._options

    def same_source(self, factory: Callable[..., T] | str) -> bool:
        """Whether ``factory`` is what this entry was registered with (a module imported twice registers again)."""
        return factory is self._factory or (isinstance(self._factory, str) and factory == self._factory)

    @property
    def builtin(self) -> bool:
        return self.origin == "built-in"


def options_from_signature(
    factory: Callable[..., Any], name: str | None = None, skip: tuple[str, ...] = ()
) -> type[BaseModel]:
    """A pydantic model of the keyword parameters of ``factory`` (a class or a function): their annotations
    and defaults, unknown options forbidden. Parameters without an annotation accept anything; ``skip``: the
    parameters the caller always supplies itself (an index, a page), which are not options.

    >>> def make(size: int = 3, label: str = "x"): ...
    >>> options_from_signature(make)(size="4").size
    4
    """
    target = factory.__init__ if inspect.isclass(factory) else factory
    try:
        hints = inspect.get_annotations(target, eval_str=True)
    except Exception:  # an annotation that cannot be evaluated here: take the parameter untyped
        hints = {}
    fields: dict[str, Any] = {}
    for param in inspect.signature(factory).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.name == "self" or param.name in skip:
            if param.kind == param.VAR_KEYWORD:
                return _Loose
            continue
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    model_name = name or f"{getattr(factory, '__name__', 'Factory')}Options"
    # Command-line values arrive parsed as JSON ("42" -> 42): a number given for a text option is that text.
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, coerce_numbers_to_str=True)
    return create_model(model_name, __config__=config, **fields)


def describe_validation_error(what: str, err: ValidationError, valid: list[str]) -> str:
    """One line for a pydantic validation error of options: the first problem, and the valid options."""
    problems = []
    for item in err.errors():
        location = ".".join(str(part) for part in item.get("loc", ())) or "options"
        if item.get("type") == "extra_forbidden":
            problems.append(f"unknown option {location!r}{did_you_mean(location, valid)}")
        elif item.get("type") == "missing":
            problems.append(f"option {location!r} is required")
        else:
            got = item.get("input")
            problems.append(f"option {location!r}={got!r}: {item.get('msg', 'invalid value').lower()}")
    listed = ", ".join(valid) if valid else "none"
    return f"{what}: {'; '.join(problems)}; valid options: {listed}"


class Registry(Generic[T]):
    """Components of one kind, built by name with validated options (see the module docstring).

    ``what``: the word used in messages ("tool", "brain", "OCR engine"); ``group``: the entry-point group
    third-party components are loaded from (None: built-ins only); ``loader``: called once before the first
    look-up, to import the modules that register the built-ins (keeps start-up light).
    """

    def __init__(
        self,
        what: str,
        group: str | None = None,
        loader: Callable[[], None] | None = None,
        supplied: tuple[str, ...] = (),
    ) -> None:
        self.what = what
        #: The arguments the registry's caller always passes a factory itself (a retriever's ``index``): not
        #: options, so a factory's signature read for its options skips them.
        self.supplied = supplied
        self.group = group
        self._loader = loader
        self._entries: dict[str, Entry[T]] = {}
        self._loaded = False
        self._lock = threading.RLock()
        self.refused: list[str] = []  # plug-ins refused at load, as messages (shown by `docintent doctor`)

    # -- registering --------------------------------------------------------------------------------

    def register(
        self,
        kind: str,
        factory: Callable[..., T] | str,
        options: type[BaseModel] | None = None,
        *,
        origin: str = "built-in",
        description: str = "",
    ) -> None:
        """Register ``factory`` (or a ``"module:attribute"`` to import on first use) under ``kind``.

        ``options``: the pydantic model of its options (default: the factory's ``Options`` class attribute, else
        read from its signature). A second registration of a kind is refused: a plug-in may not replace a
        built-in, and two plug-ins may not claim one name."""
        if not isinstance(kind, str) or not kind:
            raise ConfigError(f"{self.what} kinds must be non-empty strings, got {kind!r}")
        with self._lock:
            existing = self._entries.get(kind)
            if existing is not None:
                if existing.same_source(factory):
                    return
                raise ConfigError(
                    f"{self.what} {kind!r} from {origin} is refused: the name is taken by {existing.origin}; "
                    f"give the plug-in another name"
                )
            self._entries[kind] = Entry(kind, factory, options, origin, description, self.supplied)

    def unregister(self, kind: str) -> None:
        with self._lock:
            self._entries.pop(kind, None)

    @contextlib.contextmanager
    def scoped(
        self, kind: str, factory: Callable[..., T] | str, options: type[BaseModel] | None = None, origin: str = "test"
    ) -> Iterator[None]:
        """Register ``factory`` as ``kind`` for the length of the ``with`` block (for tests)."""
        self._ensure_loaded()
        self.register(kind, factory, options, origin=origin)
        try:
            yield
        finally:
            self.unregister(kind)

    # -- loading ------------------------------------------------------------------------------------

    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            if self._loader is not None:
                self._loader()
            if self.group is not None:
                self._load_entry_points()

    def _load_entry_points(self) -> None:
        for ep in metadata.entry_points(group=self.group or ""):
            origin = f"entry point {ep.name!r} ({ep.value})"
            try:
                obj = ep.load()
            except Exception as err:  # a broken plug-in must not break the built-ins
                message = f"could not load {self.what} {ep.name!r} from {ep.value}: {type(err).__name__}: {err}"
                self.refused.append(message)
                log.warning("%s", message)
                continue
            try:
                self.register_plugin(ep.name, obj, origin)
            except ConfigError as err:
                self.refused.append(str(err))
                log.warning("%s", err)

    def register_plugin(self, name: str, obj: Any, origin: str) -> None:
        """Register what an entry point named ``name`` loaded; registries with richer plug-ins (tools,
        degradation families) override this to read the component's own name and options."""
        self.register(name, obj, origin=origin)

    # -- looking up ---------------------------------------------------------------------------------

    def kinds(self) -> list[str]:
        """Every registered kind, sorted."""
        self._ensure_loaded()
        return sorted(self._entries)

    def kinds_in_order(self) -> list[str]:
        """Every registered kind, in the order they were registered (built-ins first)."""
        self._ensure_loaded()
        return list(self._entries)

    def entry(self, kind: str) -> Entry[T]:
        """The entry of ``kind``; an unknown kind lists every valid one."""
        self._ensure_loaded()
        try:
            return self._entries[kind]
        except KeyError:
            raise UnknownComponentError(self.what, str(kind), list(self._entries)) from None

    def __contains__(self, kind: object) -> bool:
        self._ensure_loaded()
        return kind in self._entries

    def validate(self, kind: str, options: dict[str, Any]) -> BaseModel:
        """``options`` checked against the options model of ``kind`` (one line naming the valid options)."""
        entry = self.entry(kind)
        model = entry.options
        valid = sorted(model.model_fields)
        if model is not _Loose:
            unknown = [name for name in options if name not in model.model_fields]
            if unknown:  # refused whatever the model's own ``extra`` setting says
                listed = ", ".join(repr(name) for name in unknown)
                noun = "option" if len(unknown) == 1 else "options"
                hint = did_you_mean(unknown[0], valid)
                raise ConfigError(
                    f"{self.what} {kind!r}: unknown {noun} {listed}{hint}; valid options: {', '.join(valid) or 'none'}"
                )
        try:
            return model.model_validate(options)
        except ValidationError as err:
            raise ConfigError(describe_validation_error(f"{self.what} {kind!r}", err, valid)) from None

    def get(self, kind: str, **options: Any) -> T:
        """Build ``kind`` with ``options`` (validated first)."""
        entry = self.entry(kind)
        checked = self.validate(kind, options)
        if isinstance(checked, _Loose):
            values = dict(options)
        else:
            # Only the options the caller gave: the factory's own defaults stay its business.
            values = {name: getattr(checked, name) for name in options}
        return entry.factory(**values)


__all__ = ["Entry", "Registry", "describe_validation_error", "options_from_signature"]
