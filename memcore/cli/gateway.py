"""``memcore gateway``: scheduled dreaming, the HTTP API and the Dreams page."""

from __future__ import annotations

import click

from memcore.cli.common import IntRange, get_state, workspace_option


def _setup_logging() -> None:
    """Greppable INFO lines with a timestamp on stderr for the long-running faces."""
    import logging

    fmt = logging.Formatter("%(asctime)s memcore %(levelname)s %(message)s", "%Y-%m-%dT%H:%M:%S%z")
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(level=logging.WARNING)
    for handler in root.handlers:
        if type(handler) is logging.StreamHandler:  # the CLI's own handler, not a test's
            handler.setFormatter(fmt)
    logging.getLogger("memcore").setLevel(logging.INFO)


@click.command("gateway")
@workspace_option(
    multiple=True,
    help="Workspace to serve (repeatable). Default: the [[workspaces]] of the user gateway.toml, "
    "else the root -w / $MEMCORE_WORKSPACE / current directory.",
)
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1).")
@click.option("--port", type=IntRange(0, 65535), default=None, help="Port (default 8787).")
@click.option(
    "--max-concurrent",
    type=IntRange(1, 64),
    default=4,
    show_default=True,
    help="Workspaces whose jobs may run at the same time.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Another Host name the gateway answers to (repeatable; e.g. with --host 0.0.0.0).",
)
@click.option("--no-scheduler", is_flag=True, help="Serve the API and page only; run no jobs.")
@click.option(
    "--no-embed-token",
    is_flag=True,
    help="Never put the token into the page (shared machines); paste it in the page.",
)
@click.option(
    "--read-token/--no-read-token",
    "read_token",
    default=None,
    help="GET routes that return memory text need the token too (default: on when --host is "
    "not loopback).",
)
def gateway_cmd(
    workspaces: tuple[str, ...],
    host: str | None,
    port: int | None,
    max_concurrent: int,
    allow_hosts: tuple[str, ...],
    no_scheduler: bool,
    no_embed_token: bool,
    read_token: bool | None,
) -> None:
    """Run the gateway: scheduled dreaming, the HTTP API and the Dreams page.

    Mutating API routes need the bearer token: $MEMCORE_TOKEN, else the one kept in
    gateway.token of the user folder (mode 0600, created at the first start). With --read-token
    the GET routes that return memory text need it too. Stop with Ctrl-C or SIGTERM; a running
    job finishes or is recorded as interrupted. There is no --json: it serves JSON over HTTP.

    \b
    Examples:
      memcore gateway -w ~/agent           # http://127.0.0.1:8787/
      memcore gateway -w ~/a -w ~/b --port 9000
      MEMCORE_TOKEN=secret memcore gateway --no-scheduler
    """
    import os
    import sys
    from pathlib import Path

    from memcore.gateway.security import TOKEN_FILE, load_or_create_token
    from memcore.gateway.server import GatewayOptions, print_banner, serve
    from memcore.gateway.workspaces import (
        build_served,
        read_user_file,
        user_dir,
        user_file,
        workspaces_from_user_file,
    )

    _setup_logging()
    ufile = user_file()
    udata = read_user_file(ufile)
    specs: list[tuple[str | None, Path]] = [(None, Path(w)) for w in workspaces]
    if not specs:
        specs = workspaces_from_user_file(udata, ufile)
    if not specs:
        specs = [(None, get_state().workspace().root)]
    served = build_served(specs)
    defaults = udata.get("gateway", {}) if isinstance(udata.get("gateway"), dict) else {}
    host = host or str(defaults.get("host", "127.0.0.1"))
    port = port if port is not None else int(defaults.get("port", 8787))
    token = os.environ.get("MEMCORE_TOKEN", "").strip()
    token_file = None
    if not token:
        token_file = user_dir() / TOKEN_FILE
        token, _created = load_or_create_token(token_file)
    opts = GatewayOptions(
        host=host,
        port=port,
        token=token,
        max_concurrent=max_concurrent,
        scheduler=not no_scheduler,
        embed_token=not no_embed_token,
        allow_hosts=allow_hosts,
        read_token=read_token,
    )
    shown = str(token_file) if token_file else None
    code = serve(served, opts, banner=lambda url: print_banner(url, shown))
    sys.exit(code)
