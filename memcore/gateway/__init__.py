"""The long-running gateway: scheduler loop, HTTP API and the Dreams page.

``memcore gateway`` runs :func:`serve`; tests and benchmarks use :func:`serve_in_thread`. Nothing
here is imported by ``memcore --help``: names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memcore._lazy import lazy_exports

if TYPE_CHECKING:
    from memcore.gateway.app import Gateway, create_app
    from memcore.gateway.security import new_token
    from memcore.gateway.server import (
        GatewayOptions,
        Running,
        bind_socket,
        print_banner,
        serve,
        serve_in_thread,
    )
    from memcore.gateway.workspaces import (
        Served,
        build_served,
        pick,
        read_user_file,
        user_file,
        workspaces_from_user_file,
    )

__all__ = [
    "Gateway",
    "GatewayOptions",
    "Running",
    "Served",
    "bind_socket",
    "build_served",
    "create_app",
    "new_token",
    "pick",
    "print_banner",
    "read_user_file",
    "serve",
    "serve_in_thread",
    "user_file",
    "workspaces_from_user_file",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "app": ("Gateway", "create_app"),
        "security": ("new_token",),
        "server": (
            "GatewayOptions",
            "Running",
            "bind_socket",
            "print_banner",
            "serve",
            "serve_in_thread",
        ),
        "workspaces": (
            "Served",
            "build_served",
            "pick",
            "read_user_file",
            "user_file",
            "workspaces_from_user_file",
        ),
    },
)
