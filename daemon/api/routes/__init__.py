"""The API's routers, one job each: the public pages, reads, actions, the push feed."""
