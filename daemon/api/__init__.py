"""The HTTP process: the operator API, its doors and tokens, and the dealer console page.

It reads a table through `daemon.contract.facade.TableFacade` only: the table's own facade
(`daemon.table.publish.facade.LocalFacade`) when served in the table's process (the tests),
`daemon.api.worker.RemoteTable` over the channel in the API process of `tabled run --http`.
`ApiServer(create_app(facade, config), listen).serve()` (`daemon.api.server`, `daemon.api.app`)
serves it inside an event loop. Nothing is imported here, so `tabled token` and the client
commands do not load the web stack. docs/architecture.md draws the rooms.
"""
