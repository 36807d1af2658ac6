"""HTTP and WebSocket operator API and the dealer console page.

Wiring a table in: implement `daemon.contract.facade.TableFacade` (`views.action_specs`,
`views.console_snapshot` and `journal_feed` do most of it), then
`ApiServer(create_app(table, config), listen).serve()` (`daemon.api.server`, `daemon.api.app`)
inside the daemon's event loop. Nothing is imported here, so `tabled token` and the client
commands do not load the web stack.
"""
