"""The long-running gateway: scheduler loop, HTTP API and the Dreams page.

``memcore gateway`` builds it with ``memcore.gateway.server.serve``; the app is
``memcore.gateway.app.create_app``. Nothing here is imported by ``memcore --help``.
"""
