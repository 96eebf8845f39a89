"""The HTTP service and web viewer (``docintent serve``) and the MCP tools (``docintent mcp``).

Needs the ``serve`` extra: ``pip install 'docintent[serve]'``.
"""

from .config import ServeConfig, brain_factory

__all__ = ["ServeConfig", "brain_factory", "create_app"]


def create_app(config: ServeConfig | None = None):  # noqa: ANN201 - FastAPI is an optional dependency
    """The ASGI application of the service (see :mod:`docintent.server.app`)."""
    from .app import create_app as _create

    return _create(config)
