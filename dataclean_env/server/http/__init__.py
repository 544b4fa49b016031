"""HTTP: the routes (`routes/`), the edge every request passes first (`guards`, `head`),
request plumbing (`requests`, `deps`, `http_errors`) and the OpenAPI document
(`openapi_doc`, `compact_schema`), and the browser page's table view (`table_view`)."""
