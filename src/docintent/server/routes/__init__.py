"""The routes of ``docintent serve``, one router per concern; each route reaches the service's shared state
through ``Depends`` (:data:`docintent.server.state.Service`).

``ROUTERS`` is in the order the routes are served and listed in the OpenAPI document.
"""

from __future__ import annotations

from . import benchmarks, catalogue, runs, viewer

ROUTERS = (viewer.router, runs.router, catalogue.router, benchmarks.router)

__all__ = ["ROUTERS"]
