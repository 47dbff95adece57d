"""Starlette's router, with a route at a fixed path found by a dict lookup.

Starlette tries each route's pattern in turn. A request for an operation (a path without parameters)
pays for the patterns before its own, and for the match itself: about 2 us of a polled operation's
~10 us in the app (measured in process on the library example's get_book). `ExactRouter` looks the
path up among the routes at fixed paths and hands the request to that route when Starlette's own
search would: the route takes the request's method, and no route before it in the list could match
the path (a route with parameters or a mount whose pattern takes it, a host route, a route of a
class of its own). Anything else (another method, a path no fixed route has) goes through
Starlette's search as before, so 404s, 405s and redirects are Starlette's. The table follows the
list: it is made again after any change to `routes` (an added route or mount, say).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Self, SupportsIndex

from starlette.routing import BaseRoute, Mount, Route, Router, WebSocketRoute
from starlette.types import Receive, Scope, Send


class ExactRouter(Router):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._exact: dict[str, Route] | None = None
        super().__init__(*args, **kwargs)
        self._bare = not kwargs.get("middleware")  # no middleware of the router's own: its search is Router.app

    @property
    def routes(self) -> list[BaseRoute]:
        return self._routes

    @routes.setter
    def routes(self, routes: Iterable[BaseRoute]) -> None:
        self._routes: list[BaseRoute] = _Routes(self, routes)
        self._exact = None

    def changed(self) -> None:
        self._exact = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # one function, not a lookup called by it: each call is a noticeable part of the router's cost
        if self._bare and scope["type"] == "http" and not scope.get("root_path"):  # else Starlette's search
            exact = self._exact if self._exact is not None else self._table()
            route = exact.get(scope["path"])
            if route is not None and (route.methods is None or scope["method"] in route.methods):
                if "router" not in scope:  # the scope as Starlette's search leaves it
                    scope["router"] = self
                scope["route"] = route
                scope["endpoint"] = route.endpoint
                scope["path_params"] = dict(scope.get("path_params", {}))
                await route.app(scope, receive, send)  # what Route.handle does once the method is allowed
                return
        await self.middleware_stack(scope, receive, send)

    def _table(self) -> dict[str, Route]:
        """Each fixed path's first route, where no route before it could take that path."""
        table: dict[str, Route] = {}
        before: list[BaseRoute] = []  # the routes that may match paths other than their own
        for route in self._routes:
            if type(route) is Route and not route.param_convertors:
                if route.path not in table and not any(_may_take(other, route.path) for other in before):
                    table[route.path] = route
            elif type(route) is not WebSocketRoute:  # which never takes an HTTP request
                before.append(route)
        self._exact = table
        return table


def _may_take(route: BaseRoute, path: str) -> bool:
    """Whether `route` (not a plain route at a fixed path) could take a request for `path`."""
    if type(route) in (Route, Mount):
        return route.path_regex.match(path) is not None  # type: ignore[attr-defined]
    return True  # a host route, or a class of its own: it may take anything


class _Routes(list[BaseRoute]):
    """The router's list of routes, which tells the router when it changes."""

    def __init__(self, router: ExactRouter, routes: Iterable[BaseRoute]) -> None:
        super().__init__(routes)
        self._router = router

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        self._router.changed()

    def __delitem__(self, index: Any) -> None:
        super().__delitem__(index)
        self._router.changed()

    def __iadd__(self, other: Iterable[BaseRoute]) -> Self:  # type: ignore[override, misc]
        super().__iadd__(other)
        self._router.changed()
        return self

    def append(self, route: BaseRoute) -> None:
        super().append(route)
        self._router.changed()

    def extend(self, routes: Iterable[BaseRoute]) -> None:
        super().extend(routes)
        self._router.changed()

    def insert(self, index: SupportsIndex, route: BaseRoute) -> None:
        super().insert(index, route)
        self._router.changed()

    def remove(self, route: BaseRoute) -> None:
        super().remove(route)
        self._router.changed()

    def pop(self, index: SupportsIndex = -1) -> BaseRoute:
        route = super().pop(index)
        self._router.changed()
        return route

    def clear(self) -> None:
        super().clear()
        self._router.changed()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        super().sort(*args, **kwargs)
        self._router.changed()

    def reverse(self) -> None:
        super().reverse()
        self._router.changed()
