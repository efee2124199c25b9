"""memcore: keeps an AI agent's markdown memory healthy while the agent sleeps."""

__version__ = "0.1.0"
