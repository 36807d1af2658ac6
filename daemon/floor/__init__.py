"""`tabled floor`: every table's journal, from JetStream into PostgreSQL, with chain custody.

consumer.py pulls the stream (a durable consumer, explicit acks after commit), custody.py judges
each line against the table's chain, store.py writes the rows and derived tables in one
transaction and answers the API's queries, api.py serves the floor API, its push feed and page.
"""
