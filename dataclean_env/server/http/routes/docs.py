"""GET /docs (Swagger UI) and GET /redoc, from files this server serves itself.

FastAPI's default pages load Swagger UI and ReDoc from a CDN: a blank page offline. The
assets here are the ones the `fastapi-offline` package ships (Swagger UI, Apache-2.0; ReDoc,
MIT), served at /docs/assets/. The pages' policy allows only this server, so nothing they
show reaches elsewhere (ReDoc's footer logo, a CDN image, is simply not loaded).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"
# Swagger UI starts from an inline script; ReDoc renders in a blob: worker.
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self' 'unsafe-inline'; "
        "style-src 'self' 'unsafe-inline'; img-src 'self' data:; worker-src 'self' blob:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; "
        "frame-ancestors 'self' https://huggingface.co"
    ),
    "X-Content-Type-Options": "nosniff",
}

router = APIRouter(include_in_schema=False)


def assets() -> StaticFiles:
    return StaticFiles(packages=[("fastapi_offline", "static")])


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    page = get_swagger_ui_html(
        openapi_url=request.app.openapi_url,
        title=f"{request.app.title} - Swagger UI",
        swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS}/favicon.png",
    )
    page.headers.update(_HEADERS)
    return page


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    page = get_redoc_html(
        openapi_url=request.app.openapi_url,
        title=f"{request.app.title} - ReDoc",
        redoc_js_url=f"{ASSETS}/redoc.standalone.js",
        redoc_favicon_url=f"{ASSETS}/favicon.png",
        with_google_fonts=False,
    )
    page.headers.update(_HEADERS)
    return page
