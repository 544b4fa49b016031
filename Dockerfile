# Data Cleaning OpenEnv: a Hugging Face Docker Space serving the environment on port 7860.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy

# HAProxy (Debian's) balances the server's processes (`server --workers N`, DCE_WORKERS).
# The release is pinned by the base image (bookworm: HAProxy 2.6, as deploy/ is written
# for); the package is not, so that Debian's security updates still apply.
# hadolint ignore=DL3008
RUN apt-get update && apt-get install -y --no-install-recommends haproxy \
    && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir uv==0.13.9 \
    && useradd --create-home --uid 1000 app \
    && mkdir /app && chown app:app /app

USER 1000:1000
WORKDIR /app

# Dependencies first, so code changes do not reinstall them.
COPY --chown=app:app pyproject.toml uv.lock README.md ./
RUN uv sync --frozen --no-dev --no-install-project

COPY --chown=app:app . .
RUN uv sync --frozen --no-dev

EXPOSE 7860
# The proxies trusted for the client address, by address (never "*": that lets a client write
# its own). A Space is reached only through Hugging Face's proxy, which connects from a
# private address that Hugging Face does not publish: the image trusts the private ranges,
# safe only where nothing but the proxy can reach the port. Elsewhere, name your proxy:
# docker run -e DCE_FORWARDED_ALLOW_IPS=203.0.113.7 ... (docs/deployment.md).
ENV DCE_FORWARDED_ALLOW_IPS="10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"
# A Space is shared among strangers: per-client quotas and creation rates on (a submitter
# token raises the quotas), where `uv run server` has none (docs/deployment.md, "Limits").
ENV DCE_PROFILE=public
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/app/.venv/bin/python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:7860/health', timeout=4)"]

# Two server processes behind HAProxy under one supervisor (dataclean_env/server/processes/workers.py):
# if any of them dies the container exits; DCE_WORKERS=1 serves one process, no balancer.
ENV DCE_WORKERS=2
CMD ["/app/.venv/bin/server", "--host", "0.0.0.0", "--port", "7860"]
