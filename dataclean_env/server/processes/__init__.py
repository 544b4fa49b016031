"""The server's processes: the home rule that routes an episode to one (`affinity`), the
HAProxy in front of them (`balancer`), how uvicorn serves each (`serving`) and the supervisor
of `server --workers N` (`workers`)."""
